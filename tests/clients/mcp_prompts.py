"""Drives a Toolsmith MCP server's prompts with the official MCP Python SDK (`mcp` 2.x).

Run by crates/toolsmith-server/tests/server/mcp_prompts.rs with the interpreter of
tests/clients/.venv (installed by scripts/install-test-deps.sh; this script installs nothing).
It prints {"ready": true} once it listens for prompt changes, waits for one (the Rust test
creates a prompt then), and prints what it observed as one JSON object on the last line of
stdout; the Rust test holds the assertions. Progress goes to stderr.

    mcp_prompts.py --mode auto|legacy
                   (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]... [--env K=V]...)

The server holds the prompt `review` (arguments `language`, required, with completion values,
and `focus`). The client lists the prompts, gets `review` with arguments and without the
required one, completes `language` from "ru", then waits for prompts/list_changed
(mode="legacy": a notification on the 2025-11-25 session; mode="auto": 2026-07-28's
subscriptions/listen) and lists again.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

NOTIFY_TIMEOUT = 15.0


def log(*parts: Any) -> None:
    print("[mcp_prompts]", *parts, file=sys.stderr, flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--url")
    parser.add_argument("--command")
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--env", action="append", default=[])
    args = parser.parse_args()
    if bool(args.url) == bool(args.command):
        parser.error("give --url or --command")

    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            log("prompts/list_changed (session)")
            changed.set()
        elif isinstance(message, Exception):
            log("transport exception:", repr(message))

    if args.url:
        server: Any = args.url
    else:
        env = dict(kv.split("=", 1) for kv in args.env)
        server = StdioServerParameters(command=args.command, args=args.arg, env=env or None)
    out: dict[str, Any] = {"mode": args.mode}
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(server, mode=args.mode, message_handler=on_message, read_timeout_seconds=60)
        )
        out["protocol"] = client.protocol_version
        caps = client.server_capabilities
        out["promptsListChanged"] = bool(caps and caps.prompts and caps.prompts.list_changed)
        out["completions"] = bool(caps and caps.completions is not None)
        listed = await client.list_prompts(cache_mode="bypass") if hasattr(client, "list_prompts") else None
        out["listed"] = [
            {"name": p.name, "description": p.description, "arguments": [a.name for a in p.arguments or []]}
            for p in listed.prompts
        ]
        got = await client.get_prompt("review", {"language": "rust", "focus": "safety"})
        out["messages"] = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in got.messages]
        try:
            await client.get_prompt("review", {"focus": "x"})
            out["missing"] = None
        except MCPError as e:
            out["missing"] = {"code": e.error.code, "message": e.error.message}
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="review"), {"name": "language", "value": "ru"}
        )
        out["completion"] = completion.completion.model_dump(mode="json", by_alias=True, exclude_none=True)

        if client.protocol_version >= "2026-07-28":
            out["delivery"] = "listen"
            sub = await stack.enter_async_context(client.listen(prompts_list_changed=True))
            tg = await stack.enter_async_context(anyio.create_task_group())

            async def pump() -> None:
                async for _event in sub:
                    log("prompts/list_changed (listen)")
                    changed.set()

            tg.start_soon(pump)
        else:
            out["delivery"] = "session"
        print(json.dumps({"ready": True}), flush=True)
        with anyio.move_on_after(NOTIFY_TIMEOUT):
            await changed.wait()
        out["notified"] = changed.is_set()
        again = await client.list_prompts(cache_mode="bypass")
        out["listedAfter"] = [p.name for p in again.prompts]
        if out["delivery"] == "listen":
            tg.cancel_scope.cancel()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    anyio.run(main)
