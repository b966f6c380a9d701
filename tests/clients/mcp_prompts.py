"""Drives a Toolsmith MCP server's prompts with the official MCP Python SDK (`mcp` 2.x).

Run by crates/toolsmith-server/tests/server/mcp_prompts.rs with the interpreter of
tests/clients/.venv (installed by scripts/install-test-deps.sh; this script installs nothing).
It prints {"ready": true} once it listens for prompt changes, waits for one (the Rust test
creates a prompt then), and prints what it observed as one JSON object on the last line of
stdout; the Rust test holds the assertions. Progress goes to stderr.

    mcp_prompts.py --mode auto|legacy [--scenario prompts|surface]
                   (--url http://127.0.0.1:PORT/mcp [--token T] | --command BIN [--arg A]... [--env K=V]...)

The server holds the prompt `review` (arguments `language`, required, with completion values,
and `focus`). The client lists the prompts, gets `review` with arguments and without the
required one, completes `language` from "ru", then waits for prompts/list_changed
(mode="legacy": a notification on the 2025-11-25 session; mode="auto": 2026-07-28's
subscriptions/listen) and lists again.

`--scenario surface` (run by crates/toolsmith/tests/cli/mcp_surface.rs, as
tests/clients/mcp_surface.mjs is for the TypeScript SDK, with the same report): prompts listed
and got, resources and templates listed and read, a subscription to a workspace file told when
`write_file` writes it (a session's resources/subscribe on 2025-11-25, a subscriptions/listen with
resource_subscriptions on 2026-07-28), and another user's prompt, resource and file neither
listed nor readable. It prints no ready line.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

NOTIFY_TIMEOUT = 15.0


def log(*parts: Any) -> None:
    print("[mcp_prompts]", *parts, file=sys.stderr, flush=True)


WATCHED = "toolsmith://workspace/watched/log.txt"


def failure(e: MCPError) -> dict[str, Any]:
    return {"error": {"code": e.error.code, "message": e.error.message}}


def content(result: types.ReadResourceResult) -> dict[str, Any]:
    first = result.contents[0]
    return {
        "count": len(result.contents),
        "uri": str(first.uri),
        "mimeType": first.mime_type,
        "text": getattr(first, "text", None),
        "blob": getattr(first, "blob", None),
    }


async def call_tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    res = await client.call_tool(name, arguments)
    return {
        "isError": bool(res.is_error),
        "structured": res.structured_content,
        "text": [c.text for c in res.content if isinstance(c, types.TextContent)],
    }


async def surface(args: argparse.Namespace, server: Any) -> dict[str, Any]:
    """The report mcp_surface.mjs makes, through the Python SDK."""
    updated: list[str] = []
    told = anyio.Event()
    # On 2026-07-28 the listen stream's events also reach the message handler: count them once,
    # from the subscription.
    delivery = {"by": "session"}

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and delivery["by"] == "session":
            log("resources/updated (session)", message.params.uri)
            updated.append(str(message.params.uri))
            told.set()

    async with AsyncExitStack() as stack:
        if args.token:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            server = streamable_http_client(args.url, http_client=http)
        client = await stack.enter_async_context(
            Client(server, mode=args.mode, message_handler=on_message, read_timeout_seconds=60)
        )
        out: dict[str, Any] = {"client": "mcp (Python SDK)", "protocolVersion": client.protocol_version}
        caps = client.server_capabilities
        out["capabilities"] = {
            "prompts": caps.prompts.model_dump(by_alias=True, exclude_none=True) if caps and caps.prompts else None,
            "resources": caps.resources.model_dump(by_alias=True, exclude_none=True) if caps and caps.resources else None,
            "completions": bool(caps and caps.completions is not None),
        }
        listed = await client.list_prompts(cache_mode="bypass")
        out["prompts"] = [
            {"name": p.name, "arguments": [[a.name, bool(a.required)] for a in p.arguments or []]}
            for p in listed.prompts
        ]
        got = await client.get_prompt("review", {"language": "rust", "focus": "safety"})
        out["got"] = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in got.messages]
        try:
            await client.get_prompt("review", {"focus": "x"})
            out["missingArgument"] = {"ok": True}
        except MCPError as e:
            out["missingArgument"] = failure(e)

        out["write"] = await call_tool(
            client, "write_file", {"path": "notes/plan.md", "content": "# Plan\n- list resources\n", "createParents": True}
        )
        resources = await client.list_resources(cache_mode="bypass")
        out["resources"] = [str(r.uri) for r in resources.resources]
        templates = await client.list_resource_templates(cache_mode="bypass")
        out["templates"] = [t.uri_template for t in templates.resource_templates]
        out["readFile"] = content(await client.read_resource("toolsmith://workspace/notes/plan.md", cache_mode="bypass"))
        out["readDefined"] = content(await client.read_resource("notes://alice/todo", cache_mode="bypass"))
        out["readTemplate"] = content(await client.read_resource("orders://42", cache_mode="bypass"))

        tg = await stack.enter_async_context(anyio.create_task_group())
        if client.protocol_version >= "2026-07-28":
            out["delivery"] = delivery["by"] = "listen"
            try:
                sub = await stack.enter_async_context(client.listen(resource_subscriptions=[WATCHED]))
                out["subscribe"] = {"ok": sub.honored.model_dump(by_alias=True, exclude_none=True) if sub.honored else True}

                async def pump() -> None:
                    async for event in sub:
                        uri = getattr(event, "uri", None)
                        log("resources/updated (listen)", uri)
                        if uri is not None:
                            updated.append(str(uri))
                            told.set()

                tg.start_soon(pump)
            except MCPError as e:
                out["subscribe"] = failure(e)
        else:
            out["delivery"] = "session"
            try:
                await client.subscribe_resource(WATCHED)
                out["subscribe"] = {"ok": True}
            except MCPError as e:
                out["subscribe"] = failure(e)
        out["writeUnwatched"] = await call_tool(client, "write_file", {"path": "other.txt", "content": "not watched"})
        out["writeWatched"] = await call_tool(
            client, "write_file", {"path": "watched/log.txt", "content": "v1", "createParents": True}
        )
        with anyio.move_on_after(NOTIFY_TIMEOUT):
            while WATCHED not in updated:
                await told.wait()
                told = anyio.Event()
        out["notified"] = WATCHED in updated
        out["updated"] = updated

        try:
            await client.get_prompt("bobs_plan", {})
            out["otherPrompt"] = {"ok": True}
        except MCPError as e:
            out["otherPrompt"] = failure(e)
        out["otherReads"] = {}
        for uri in [
            "notes://bob/secret",
            "toolsmith://workspace/bob-only.txt",
            "toolsmith://workspace/../../bob/workspace/bob-only.txt",
        ]:
            try:
                out["otherReads"][uri] = {"ok": content(await client.read_resource(uri, cache_mode="bypass"))}
            except MCPError as e:
                out["otherReads"][uri] = failure(e)
        tg.cancel_scope.cancel()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--scenario", choices=["prompts", "surface"], default="prompts")
    parser.add_argument("--url")
    parser.add_argument("--token")
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
    if args.scenario == "surface":
        print(json.dumps(await surface(args, server)), flush=True)
        return
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
