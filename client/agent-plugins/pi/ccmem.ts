// ccmem for Pi: hands Pi's events to ccmem (`ccmemctl hook --agent pi`), and gives each
// conversation ccmem's resume context in its system prompt.
//
// Written by `ccmemctl hooks install --agent pi` (with the path of the ccmemctl that wrote
// it) and removed by `ccmemctl hooks uninstall --agent pi`. It needs nothing but node's
// child_process; whatever happens, Pi goes on (every handler is guarded, and ccmemctl itself
// always exits 0 within its time limit).
//
// What it sends, one JSON object per event, in the vocabulary of agents' hooks:
//   session_start           {source: startup | resume | compact}    (its reply: the context)
//   before_agent_start      {prompt}
//   tool_result             {tool_name, tool_use_id, tool_input, tool_response: {content, details, is_error, created?}}
//   agent_end               {last_assistant_message}
//   session_before_compact  {custom_instructions}
//   session_compact         {compact_summary}
//   session_shutdown        {reason}
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

const CCMEMCTL = "__CCMEMCTL__";
const TIMEOUT_MS = 5000;

// One event to ccmem; its reply: the context for the conversation, and a notice for the
// user when ccmem cannot work (once per session), each "" when there is none.
function send(payload: Record<string, unknown>): { context: string; notice: string } {
  try {
    const r = spawnSync(CCMEMCTL, ["hook", "--agent", "pi"], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      stdio: ["pipe", "pipe", "ignore"],
      windowsHide: true,
    });
    const line = (r.stdout || "").trim().split("\n").pop();
    if (!line) return { context: "", notice: "" };
    const out = JSON.parse(line);
    return { context: out?.hookSpecificOutput?.additionalContext ?? "", notice: out?.systemMessage ?? "" };
  } catch {
    return { context: "", notice: "" };
  }
}

// The text of an assistant message's content.
function textOf(message: any): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b: any) => b?.type === "text" && typeof b.text === "string")
    .map((b: any) => b.text)
    .join("\n");
}

export default function (pi: any) {
  // Pi runs this again for each session it switches to: the state is the session's.
  let sessionId = "";
  let cwd = process.cwd();
  let context = "";

  const reply = (name: string, fields: Record<string, unknown>) =>
    sessionId ? send({ hook_event_name: name, session_id: sessionId, cwd, ...fields }) : { context: "", notice: "" };
  const event = (name: string, fields: Record<string, unknown>): string => reply(name, fields).context;

  const on = (name: string, fn: (e: any, ctx: any) => any) =>
    pi.on(name, async (e: any, ctx: any) => {
      try {
        return await fn(e, ctx);
      } catch {
        return undefined; // ccmem never breaks Pi
      }
    });

  on("session_start", (e, ctx) => {
    const id = ctx?.sessionManager?.getSessionId?.();
    if (!id || id === sessionId) return; // told twice when a session is replaced
    sessionId = id;
    cwd = ctx.cwd || cwd;
    // `-c` and `--session` start with reason "startup" too: a conversation that already
    // has messages is a resumed one.
    const entries = ctx.sessionManager.getEntries?.() ?? [];
    const resumed = e?.reason === "resume" || e?.reason === "fork" || entries.some((x: any) => x?.type === "message");
    const r = reply("session_start", { source: resumed ? "resume" : "startup" });
    context = r.context;
    // For the user alone, never the conversation: a warning line in Pi's interface; without
    // one (`pi -p`, the JSON and RPC modes) a line on standard error, the terminal's.
    if (r.notice && ctx?.hasUI) ctx.ui?.notify?.(r.notice, "warning");
    else if (r.notice) {
      try {
        process.stderr.write(`ccmem: ${r.notice}\n`);
      } catch {}
    }
  });

  on("before_agent_start", (e) => {
    event("before_agent_start", { prompt: e?.prompt ?? "" });
    if (context && typeof e?.systemPrompt === "string") {
      return { systemPrompt: `${e.systemPrompt}\n\n${context}` };
    }
    return undefined;
  });

  // Whether each `write` makes its file: looked at before the call runs (Pi's result says
  // only "Successfully wrote N bytes").
  const creates = new Map<string, boolean>();
  on("tool_call", (e) => {
    const path = e?.input?.path;
    if (e?.toolName !== "write" || typeof path !== "string" || !e.toolCallId) return undefined;
    if (creates.size > 1000) creates.clear();
    creates.set(e.toolCallId, !existsSync(isAbsolute(path) ? path : resolve(cwd, path)));
    return undefined;
  });

  on("tool_result", (e) => {
    const created = creates.get(e.toolCallId);
    creates.delete(e.toolCallId);
    event("tool_result", {
      tool_name: e.toolName,
      tool_use_id: e.toolCallId,
      tool_input: e.input ?? {},
      tool_response: {
        content: e.content ?? [],
        details: e.details ?? null,
        is_error: e.isError === true,
        ...(created === undefined ? {} : { created }),
      },
    });
  });

  on("agent_end", (e) => {
    const messages: any[] = Array.isArray(e?.messages) ? e.messages : [];
    const last = [...messages].reverse().find((m) => m?.role === "assistant" && textOf(m).trim());
    event("agent_end", { last_assistant_message: last ? textOf(last) : null });
  });

  on("session_before_compact", (e) => {
    event("session_before_compact", { custom_instructions: e?.customInstructions ?? "" });
  });

  on("session_compact", (e) => {
    event("session_compact", { compact_summary: e?.compactionEntry?.summary ?? "" });
    // What the conversation is given from now on: the context as it stands.
    const fresh = event("session_start", { source: "compact" });
    if (fresh) context = fresh;
  });

  on("session_shutdown", (e) => {
    event("session_shutdown", { reason: e?.reason ?? "quit" });
  });
}
