"""Drives ccmem's MCP server with the official MCP Python SDK (the `mcp` package), as an
agent would: every tool once, then calls that must fail. Prints one JSON object:
{"tools": [...], "calls": [{"tool", "args", "error", "is_error", "text"}]}.

Usage: client.py SERVER_BINARY (the environment, CLAUDE_PROJECT_DIR included, is passed on).
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

CALLS = [
    ("memory_write", {"type": "decision", "title": "Use SQLite for the cache", "tags": ["cache", "storage"],
                      "content": "Chosen over Redis: one file, no server.", "scope": "project"}),
    ("memory_write", {"type": "gotcha", "title": "SQLite needs WAL for concurrent readers", "tags": ["cache"],
                      "content": "Set journal_mode=WAL at open.", "scope": "project"}),
    ("memory_list", {}),
    ("memory_search", {"query": "sqlite cache", "limit": 5}),
    ("memory_show", {"slug": "decision-use-sqlite-for-the-cache"}),
    ("memory_update", {"slug": "decision-use-sqlite-for-the-cache", "append": "Revisit at 10k users.",
                       "add_tags": ["scaling"]}),
    ("memory_link", {"source": "gotcha-sqlite-needs-wal-for-concurrent-readers",
                     "target": "decision-use-sqlite-for-the-cache", "label": "builds-on"}),
    ("memory_show", {"slug": "decision-use-sqlite-for-the-cache"}),
    ("memory_unlink", {"source": "gotcha-sqlite-needs-wal-for-concurrent-readers",
                       "target": "decision-use-sqlite-for-the-cache"}),
    ("memory_health", {}),
    ("memory_delete", {"slug": "gotcha-sqlite-needs-wal-for-concurrent-readers"}),
    ("facts_list", {}),
    ("goal_done", {"number": 1}),
    ("fact_forget", {"number": 1}),
    ("session_status", {}),
    ("session_context", {"budget": 2000}),
    ("session_resume_id", {}),
    ("session_history", {}),
    # These must fail, each in its own way.
    ("memory_search", {"query": "sqlite", "limit": 0}),
    ("memory_search", {"query": 5}),
    ("fact_forget", {"number": 99}),
    ("memory_show", {"slug": "no-such-memory"}),
    ("no_such_tool", {}),
]


async def main(server):
    params = StdioServerParameters(command=server, args=[], env=dict(os.environ))
    out = {"calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            for tool, args in CALLS:
                entry = {"tool": tool, "args": args}
                try:
                    r = await session.call_tool(tool, args)
                    entry["is_error"] = bool(r.is_error)
                    entry["text"] = "".join(c.text for c in r.content if getattr(c, "text", None))
                except MCPError as e:
                    entry["error"] = {"code": e.error.code, "message": e.error.message}
                out["calls"].append(entry)
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
