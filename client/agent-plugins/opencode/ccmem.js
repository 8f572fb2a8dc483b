// ccmem for OpenCode: hands OpenCode's events to ccmem (`ccmemctl hook --agent opencode`),
// and gives each conversation ccmem's resume context in its system prompt.
//
// Written by `ccmemctl hooks install --agent opencode` (with the path of the ccmemctl that
// wrote it) and removed by `ccmemctl hooks uninstall --agent opencode`. It needs nothing
// but node's child_process; whatever happens, OpenCode goes on (every call is guarded, and
// ccmemctl itself always exits 0 within its time limit).
//
// What it sends, one JSON object per event, in the vocabulary of agents' hooks:
//   session.start        {source: startup | resume | compact}     (its reply: the context)
//   chat.message         {prompt}
//   tool.execute.after   {tool_name, tool_use_id, tool_input, tool_response: {output, metadata}}
//   tool.error           {tool_name, tool_use_id, tool_input, error}
//   session.idle         {last_assistant_message}
//   session.compacted    {compact_summary}
//   session.end          {reason}
import { spawnSync } from "node:child_process"

const CCMEMCTL = "__CCMEMCTL__"
const TIMEOUT_MS = 5000

// One event to ccmem; its reply: the context for the conversation, and a notice for the
// user when ccmem cannot work (once per session), each "" when there is none.
function send(payload) {
  try {
    const r = spawnSync(CCMEMCTL, ["hook", "--agent", "opencode"], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      stdio: ["pipe", "pipe", "ignore"],
      windowsHide: true,
    })
    const line = (r.stdout || "").trim().split("\n").pop()
    if (!line) return { context: "", notice: "" }
    const out = JSON.parse(line) || {}
    return {
      context: (out.hookSpecificOutput && out.hookSpecificOutput.additionalContext) || "",
      notice: out.systemMessage || "",
    }
  } catch {
    return { context: "", notice: "" }
  }
}

// Whether OpenCode runs without its TUI: `opencode run …` (the first word after the
// program that is not an option).
function headless() {
  const words = (process.argv || []).slice(1).filter((a) => typeof a === "string" && !a.startsWith("-"))
  return words.slice(0, 2).some((w) => w === "run")
}

export const CcmemPlugin = async ({ directory, client }) => {
  const context = new Map() // conversation → ccmem's context for it
  const started = new Set() // conversations told to ccmem in this process
  const children = new Set() // a subagent's conversations: part of their parent's work
  const lastWords = new Map() // conversation → its latest finished text
  const failed = new Set() // tool calls whose failure was told

  const event = (name, sessionID, fields) =>
    send({ hook_event_name: name, session_id: sessionID, cwd: directory, ...fields }).context

  const start = (sessionID, source) => {
    if (!sessionID || started.has(sessionID) || children.has(sessionID)) return
    started.add(sessionID)
    const reply = send({ hook_event_name: "session.start", session_id: sessionID, cwd: directory, source })
    if (reply.context) context.set(sessionID, reply.context)
    // For the user alone, never the conversation: a toast in the TUI; under `opencode run`
    // (no TUI: its toasts go nowhere) a line on standard error, the terminal's.
    if (reply.notice && headless()) {
      try {
        process.stderr.write(`ccmem: ${reply.notice}\n`)
      } catch {}
    } else if (reply.notice && client && client.tui && client.tui.showToast) {
      Promise.resolve(
        client.tui.showToast({ body: { title: "ccmem", message: reply.notice, variant: "warning", duration: 15000 } }),
      ).catch(() => {})
    }
  }

  const guard = (fn) => async (...args) => {
    try {
      await fn(...args)
    } catch {
      // ccmem never breaks OpenCode.
    }
  }

  return {
    event: guard(async ({ event: e }) => {
      const p = e.properties || {}
      switch (e.type) {
        case "session.created": {
          const info = p.info || {}
          if (info.parentID) children.add(info.id)
          else start(info.id || p.sessionID, "startup")
          break
        }
        case "session.idle":
          if (started.has(p.sessionID)) {
            event("session.idle", p.sessionID, { last_assistant_message: lastWords.get(p.sessionID) || null })
          }
          break
        case "session.compacted":
          if (started.has(p.sessionID)) {
            // The summary is the text the compaction's own request has just finished.
            event("session.compacted", p.sessionID, { compact_summary: lastWords.get(p.sessionID) || "" })
            lastWords.delete(p.sessionID)
            // What the conversation is given from now on: the context as it stands.
            started.delete(p.sessionID)
            context.delete(p.sessionID)
            start(p.sessionID, "compact")
          }
          break
        case "message.part.updated": {
          // A tool that threw (refused, bad arguments): no tool.execute.after comes.
          const part = p.part || {}
          if (part.type === "tool" && part.state && part.state.status === "error" && started.has(part.sessionID)) {
            if (failed.has(part.callID)) break
            failed.add(part.callID)
            event("tool.error", part.sessionID, {
              tool_name: part.tool,
              tool_use_id: part.callID,
              tool_input: part.state.input || {},
              error: String(part.state.error || ""),
            })
          }
          break
        }
      }
    }),
    "chat.message": guard(async (input, output) => {
      const sessionID = input.sessionID || (output.message && output.message.sessionID)
      if (children.has(sessionID)) return
      // A conversation continued (`--continue`, `--session`) begins here: no session.created.
      start(sessionID, "resume")
      const prompt = (output.parts || [])
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n")
      if (prompt) event("chat.message", sessionID, { prompt })
    }),
    "tool.execute.after": guard(async (input, output) => {
      if (!started.has(input.sessionID)) return
      event("tool.execute.after", input.sessionID, {
        tool_name: input.tool,
        tool_use_id: input.callID,
        tool_input: input.args || {},
        tool_response: { output: (output && output.output) || "", metadata: (output && output.metadata) || {} },
      })
    }),
    "experimental.text.complete": guard(async (input, output) => {
      if (output && output.text) lastWords.set(input.sessionID, output.text)
    }),
    "experimental.chat.system.transform": guard(async (input, output) => {
      const text = context.get(input.sessionID)
      if (!text || !output || !Array.isArray(output.system)) return
      // The request that names the conversation shares its id (its system prompt is
      // OpenCode's title agent's): it needs no context.
      if (String(output.system[0] || "").startsWith("You are a title generator")) return
      output.system.push(text)
    }),
    dispose: guard(async () => {
      for (const id of started) event("session.end", id, { reason: "exit" })
    }),
  }
}
