"""Drives a Toolsmith MCP server with the official MCP Python SDK (`mcp` 2.x).

Run by crates/toolsmith-server/tests/mcp_clients.rs with the interpreter of tests/clients/.venv
(installed by scripts/install-test-deps.sh; this script installs nothing). It prints what it
observed as one JSON object on the last line of stdout; the Rust test holds the assertions.
Progress goes to stderr.

    mcp_python.py --mode auto|legacy --scenario flow|two-sessions|watch|... --name TOOL
                  (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]... [--env K=V]...)

Scenarios:
  flow          initialize, list, create_tool, list_changed, call, update_custom_tool,
                list_changed, call (new code), toggle_custom_tool off, list_changed, list
                (gone), plus protocol errors (unknown tool, invalid arguments).
  two-sessions  session A creates a tool; session B gets list_changed and lists it, without
                reconnecting; A deletes it (confirm flow) and B sees it go.
  watch         connect, list, print {"ready": true}, wait for one list_changed (someone else
                changes the catalogue), list, settle, list, report.
  dynamic-mcp   against `toolsmith mcp --compat dynamic-mcp` with an admin token
                (`--admin-token`): spec 002's examples verbatim and its documented behaviours
                (admin token, create, duplicate, reserved names, list, get, update with and
                without expectedRevision, enable/disable, timeoutMs, run_js_ephemeral, delete).
  sandbox-sessions  against `toolsmith mcp --compat dynamic-mcp`: dynamic-mcp's sandbox sessions
                (sandbox.initialize, sandbox.exec with commands, sandbox.session.list,
                sandbox.run_js, errors, sandbox.stop), each answer recorded.
  big-bodies    over HTTP: a write_file of 10 MiB (the documented largest write), one over the
                body limit of /mcp (`--over-mib`, default 20; it must fail as that call's error),
                and a small write on the same session afterwards.

Approvals: tools the model creates need a person's approval to run. This client declares
the elicitation capability and its person answers every approval form with `--approve`
(default allow_always); `approvalsAsked` in the report counts the forms. In mode="legacy" the
server asks with elicitation/create during the call; in mode="auto" (2026-07-28) it answers an
InputRequiredResult, which the SDK fulfils through the same callback and retries.

mode="auto" negotiates 2026-07-28 (no sessions: list changes arrive through
subscriptions/listen); mode="legacy" negotiates 2025-11-25 over an initialize handshake
(list changes arrive as notifications on the session).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

NOTIFY_TIMEOUT = 15.0
# A quiet window after the last expected notification, in which a duplicate would show. It waits
# for nothing: sending nothing makes no event, and on HTTP notifications and replies travel on
# different streams, so no later reply can vouch for them. In-process, the server's tests count
# exactly instead (crates/toolsmith-server/tests/server/mcp_protocol.rs, on a paused clock).
SETTLE = 1.0


def log(*parts: Any) -> None:
    print("[mcp_python]", *parts, file=sys.stderr, flush=True)


class Approvals:
    """The person behind the client: answers approval forms and counts them."""

    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.asked = 0

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked += 1
        log(f"approval form #{self.asked}: {getattr(params, 'message', '')[:80]!r} -> {self.decision}")
        return types.ElicitResult(action="accept", content={"decision": self.decision})


APPROVALS = Approvals("allow_always")


class Changes:
    """Counts tools/list_changed deliveries, whichever way they arrive, and wakes whoever waits
    for the next one."""

    def __init__(self) -> None:
        self.count = 0
        self.delivery: str | None = None
        self._arrived = anyio.Event()

    def hit(self) -> None:
        self.count += 1
        log(f"tools/list_changed #{self.count} ({self.delivery})")
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait_beyond(self, seen: int, timeout: float = NOTIFY_TIMEOUT) -> bool:
        with anyio.move_on_after(timeout):
            while self.count <= seen:
                await self._arrived.wait()
        return self.count > seen


def is_modern(client: Client) -> bool:
    return client.protocol_version >= "2026-07-28"


@asynccontextmanager
async def connect(args: argparse.Namespace):
    """A connected client and its change counter (listening already, for 2026-07-28)."""
    changes = Changes()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification) and changes.delivery == "session":
            changes.hit()
        elif isinstance(message, Exception):
            log("transport exception:", repr(message))

    if args.url:
        server: Any = args.url
    else:
        env = dict(kv.split("=", 1) for kv in args.env)
        server = StdioServerParameters(command=args.command, args=args.arg, env=env or None)
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(
                server,
                mode=args.mode,
                message_handler=on_message,
                elicitation_callback=APPROVALS,
                read_timeout_seconds=60,
            )
        )
        if is_modern(client):
            changes.delivery = "listen"
            sub = await stack.enter_async_context(client.listen(tools_list_changed=True))
            tg = await stack.enter_async_context(anyio.create_task_group())

            async def pump() -> None:
                async for _event in sub:
                    changes.hit()

            tg.start_soon(pump)
            try:
                yield client, changes
            finally:
                tg.cancel_scope.cancel()
        else:
            changes.delivery = "session"
            yield client, changes


def result_json(res: types.CallToolResult) -> dict[str, Any]:
    return {
        "isError": bool(res.is_error),
        "text": [c.text for c in res.content if getattr(c, "type", None) == "text"],
        "structured": res.structured_content,
    }


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        return result_json(await client.call_tool(name, arguments))
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message, "data": e.data}}


async def tool_names(client: Client) -> list[str]:
    # Always ask the server: a cached list would hide what the test is about.
    res = await client.list_tools(cache_mode="refresh")
    return [t.name for t in res.tools]


PARAMS = {
    "type": "object",
    "properties": {"who": {"type": "string", "description": "Who to greet"}},
    "required": ["who"],
    "additionalProperties": False,
}
CODE_V1 = "return {greeting: 'hello ' + args.who, version: 1};"
CODE_V2 = "return {greeting: 'hi ' + args.who, version: 2};"


async def flow(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with connect(args) as (client, changes):
        out["protocolVersion"] = client.protocol_version
        out["serverName"] = client.server_info.name if client.server_info else None
        out["delivery"] = changes.delivery
        out["initialTools"] = await tool_names(client)

        seen = changes.count
        # Parameters as a JSON string, as models often send them.
        out["create"] = await call(
            client,
            "create_tool",
            {
                "name": args.name,
                "description": "Greets someone (created by the Python SDK test)",
                "parameters": json.dumps(PARAMS),
                "code": CODE_V1,
                "category": "Tests",
            },
        )
        out["notifiedAfterCreate"] = await changes.wait_beyond(seen)
        out["listedAfterCreate"] = args.name in await tool_names(client)
        out["call1"] = await call(client, args.name, {"who": "mcp"})

        seen = changes.count
        out["update"] = await call(client, "update_custom_tool", {"name": args.name, "code": CODE_V2})
        out["notifiedAfterUpdate"] = await changes.wait_beyond(seen)
        out["call2"] = await call(client, args.name, {"who": "mcp"})

        out["unknownTool"] = await call(client, "no_such_tool_anywhere", {})
        out["badArgs"] = await call(client, args.name, {"who": 42})
        out["badCreate"] = await call(
            client,
            "create_tool",
            {"name": "Bad Name", "description": "x", "parameters": {"type": "object"}, "code": "return 1"},
        )

        seen = changes.count
        out["toggle"] = await call(client, "toggle_custom_tool", {"name": args.name, "enabled": False})
        out["notifiedAfterDisable"] = await changes.wait_beyond(seen)
        out["listedAfterDisable"] = args.name in await tool_names(client)
        out["callDisabled"] = await call(client, args.name, {"who": "mcp"})

        await anyio.sleep(SETTLE)
        out["notifications"] = changes.count
        out["approvalsAsked"] = APPROVALS.asked
    return out


async def two_sessions(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with connect(args) as (a, a_changes), connect(args) as (b, b_changes):
        out["protocolVersion"] = b.protocol_version
        out["delivery"] = b_changes.delivery
        out["bListedBefore"] = args.name in await tool_names(b)
        seen = b_changes.count
        out["create"] = await call(
            a,
            "create_tool",
            {
                "name": args.name,
                "description": "Created in session A",
                "parameters": PARAMS,
                "code": CODE_V1,
            },
        )
        out["bNotifiedAfterCreate"] = await b_changes.wait_beyond(seen)
        out["bListedAfterCreate"] = args.name in await tool_names(b)
        out["bCall"] = await call(b, args.name, {"who": "b"})

        seen = b_changes.count
        out["deleteUnconfirmed"] = await call(a, "delete_custom_tool", {"name": args.name})
        out["deleteConfirmed"] = await call(a, "delete_custom_tool", {"name": args.name, "confirm": True})
        out["bNotifiedAfterDelete"] = await b_changes.wait_beyond(seen)
        out["bListedAfterDelete"] = args.name in await tool_names(b)

        await anyio.sleep(SETTLE)
        out["aNotifications"] = a_changes.count
        out["bNotifications"] = b_changes.count
    return out


async def watch(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with connect(args) as (client, changes):
        out["protocolVersion"] = client.protocol_version
        out["delivery"] = changes.delivery
        await tool_names(client)
        print(json.dumps({"ready": True}), flush=True)
        out["notified"] = await changes.wait_beyond(0, timeout=30)
        # What the first notification was about: a notification for a change this user cannot
        # see would come before the test made the user's own change.
        out["toolsAtFirstNotification"] = await tool_names(client)
        await anyio.sleep(SETTLE)
        out["notifications"] = changes.count
        out["tools"] = await tool_names(client)
    return out


# Spec 002 ("Dynamic Tools Guide"), verbatim.
SPEC_TEXT_UPPERCASE = {
    "tool": {
        "name": "text.uppercase",
        "description": "Convert input text to uppercase",
        "code": "const { text } = args;\nif (!text) throw new Error('text is required');\nreturn { upper: String(text).toUpperCase() };",
        "dependencies": [],
        "image": "node:lts-slim",
        "timeoutMs": 10000,
    }
}
SPEC_PARSE_CSV = {
    "tool": {
        "name": "data.parse_csv",
        "description": "Parse CSV text into JSON rows",
        "code": "const { parse } = await import('csv-parse/sync');\nconst records = parse(args.csv, { columns: true });\nreturn { rows: records, count: records.length };",
        "dependencies": [{"name": "csv-parse", "version": "^5.5.0"}],
        "image": "node:lts-slim",
        "timeoutMs": 30000,
    }
}
SPEC_INVOKE = {"args": {"text": "hello world"}}
SPEC_UPDATE = {
    "name": "text.uppercase",
    "patch": {"description": "Updated description", "timeoutMs": 15000},
    "expectedRevision": 3,
}
SPEC_DISABLE = {"name": "text.uppercase", "enabled": False}
SPEC_EPHEMERAL = {
    "code": "return { now: new Date().toISOString(), pid: process.pid };",
    "args": {},
    "dependencies": [],
    "image": "node:lts-slim",
    "timeoutMs": 10000,
}


async def dynamic_mcp(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    token = args.admin_token

    def admin(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "adminToken": token}

    async with connect(args) as (client, _changes):
        out["protocolVersion"] = client.protocol_version
        listed = await client.list_tools(cache_mode="refresh")
        out["initialTools"] = [t.name for t in listed.tools]
        out["createNoToken"] = await call(client, "dynamic.tool.create", SPEC_TEXT_UPPERCASE)
        out["createWrongToken"] = await call(
            client, "dynamic.tool.create", {**SPEC_TEXT_UPPERCASE, "adminToken": "not-the-admin-token"}
        )
        out["listNoToken"] = await call(client, "dynamic.tool.list", {})
        out["create"] = await call(client, "dynamic.tool.create", admin(SPEC_TEXT_UPPERCASE))
        out["duplicate"] = await call(client, "dynamic.tool.create", admin(SPEC_TEXT_UPPERCASE))
        reserved = []
        for name in ["dynamic.tool.mine", "run_js_ephemeral"]:
            payload = {"tool": {**SPEC_TEXT_UPPERCASE["tool"], "name": name}}
            reserved.append(await call(client, "dynamic.tool.create", admin(payload)))
        out["reserved"] = reserved
        out["tooShort"] = await call(
            client, "dynamic.tool.create", admin({"tool": {**SPEC_TEXT_UPPERCASE["tool"], "name": "ab"}})
        )
        out["withDependencies"] = await call(client, "dynamic.tool.create", admin(SPEC_PARSE_CSV))
        out["invokeWithDependencies"] = await call(
            client, "data.parse_csv", {"args": {"csv": "name,qty\nwidget,3\n\"gadget, large\",5\n"}}
        )
        out["timeoutTooLong"] = await call(
            client,
            "dynamic.tool.create",
            admin({"tool": {**SPEC_TEXT_UPPERCASE["tool"], "name": "text.slow", "timeoutMs": 120001}}),
        )
        listed = await client.list_tools(cache_mode="refresh")
        out["listedTool"] = next(
            ({"name": t.name, "title": t.title} for t in listed.tools if t.name == "text.uppercase"), None
        )
        asked_before = APPROVALS.asked
        out["invoke"] = await call(client, "text.uppercase", SPEC_INVOKE)
        out["invokeUnwrapped"] = await call(client, "text.uppercase", SPEC_INVOKE["args"])
        out["invokeThrows"] = await call(client, "text.uppercase", {"args": {}})
        out["approvalsAskedForAdminTools"] = APPROVALS.asked - asked_before
        out["list"] = await call(client, "dynamic.tool.list", admin({}))
        out["listWithCode"] = await call(client, "dynamic.tool.list", admin({"includeCode": True}))
        out["get"] = await call(client, "dynamic.tool.get", admin({"name": "text.uppercase"}))
        out["updateTitle"] = await call(
            client, "dynamic.tool.update", admin({"name": "text.uppercase", "patch": {"title": "Uppercase"}})
        )
        listed = await client.list_tools(cache_mode="refresh")
        out["titleListed"] = next((t.title for t in listed.tools if t.name == "text.uppercase"), None)
        out["disable"] = await call(client, "dynamic.tool.enable", admin(SPEC_DISABLE))
        out["listedAfterDisable"] = "text.uppercase" in await tool_names(client)
        out["invokeDisabled"] = await call(client, "text.uppercase", SPEC_INVOKE["args"])
        out["update"] = await call(client, "dynamic.tool.update", admin(SPEC_UPDATE))
        out["updateStale"] = await call(client, "dynamic.tool.update", admin(SPEC_UPDATE))
        out["enable"] = await call(client, "dynamic.tool.enable", admin({"name": "text.uppercase", "enabled": True}))
        out["listedAfterEnable"] = "text.uppercase" in await tool_names(client)
        out["invokeAfterUpdate"] = await call(client, "text.uppercase", {"text": "again"})
        out["createSlow"] = await call(
            client,
            "dynamic.tool.create",
            admin({"tool": {"name": "loop.forever", "description": "Never ends", "code": "while (true) {}", "timeoutMs": 1000}}),
        )
        started = time.monotonic()
        out["invokeSlow"] = await call(client, "loop.forever", {})
        out["slowSeconds"] = round(time.monotonic() - started, 3)
        out["ephemeralSpec"] = await call(client, "run_js_ephemeral", SPEC_EPHEMERAL)
        out["ephemeral"] = await call(
            client,
            "run_js_ephemeral",
            {**SPEC_EPHEMERAL, "code": "return { now: new Date().toISOString(), sum: args.a + args.b };", "args": {"a": 2, "b": 3}},
        )
        out["ephemeralDependencies"] = await call(
            client,
            "run_js_ephemeral",
            {
                **SPEC_EPHEMERAL,
                "code": "const { parse } = await import('csv-parse/sync');\nreturn parse(args.csv, { columns: true });",
                "args": {"csv": "a,b\n1,2\n"},
                "dependencies": [{"name": "csv-parse", "version": "^5.5.0"}],
            },
        )
        out["delete"] = await call(client, "dynamic.tool.delete", admin({"name": "text.uppercase"}))
        out["getDeleted"] = await call(client, "dynamic.tool.get", admin({"name": "text.uppercase"}))
        out["deleteDeleted"] = await call(client, "dynamic.tool.delete", admin({"name": "text.uppercase"}))
        out["listedAfterDelete"] = "text.uppercase" in await tool_names(client)
        out["approvalsAsked"] = APPROVALS.asked
    return out


async def sandbox_sessions(args: argparse.Namespace) -> dict[str, Any]:
    """dynamic-mcp v0.4.1's sandbox sessions (sandbox.initialize / session.list / exec / run_js
    / stop) as its clients call them; every answer is recorded, the Rust test judges them."""
    out: dict[str, Any] = {}

    async def sandbox(name: str, payload: dict[str, Any]) -> dict[str, Any]:
        # With an admin token configured, dynamic-mcp's sandbox tools take it on every call.
        if args.admin_token:
            payload = {**payload, "adminToken": args.admin_token}
        return await call(client, name, payload)

    async with connect(args) as (client, _changes):
        out["protocolVersion"] = client.protocol_version
        out["initialTools"] = await tool_names(client)
        out["noAdminToken"] = await call(client, "sandbox.session.list", {})
        init = await sandbox("sandbox.initialize", {"image": "node:lts-slim"})
        out["initialize"] = init
        sid = (init.get("structured") or {}).get("sessionId", "sbx_missing")
        out["exec"] = await sandbox(
            "sandbox.exec",
            {"sessionId": sid, "commands": ["echo kept > state.txt", "cat state.txt", "echo oops 1>&2"]},
        )
        out["execLongTimeout"] = await sandbox(
            "sandbox.exec", {"sessionId": sid, "commands": ["true"], "timeoutMs": 120000}
        )
        out["execRejected"] = await sandbox("sandbox.exec", {"sessionId": sid, "commands": ["echo $(id)"]})
        out["execFails"] = await sandbox("sandbox.exec", {"sessionId": sid, "commands": ["cat missing.txt"]})
        out["list"] = await sandbox("sandbox.session.list", {})
        out["runJs"] = await sandbox(
            "sandbox.run_js",
            {
                "sessionId": sid,
                "code": "import { readFileSync } from 'node:fs';\n"
                "console.log(readFileSync('state.txt', 'utf8').trim() + ' ' + (41 + 1));",
            },
        )
        out["runJsSilent"] = await sandbox("sandbox.run_js", {"sessionId": sid, "code": "const x = 1;"})
        out["runJsThrows"] = await sandbox("sandbox.run_js", {"sessionId": sid, "code": "throw new Error('boom')"})
        out["missingSession"] = await sandbox("sandbox.exec", {"commands": ["ls"]})
        out["invalidSession"] = await sandbox("sandbox.exec", {"sessionId": "abc;rm -rf /", "commands": ["ls"]})
        out["unknownSession"] = await sandbox("sandbox.exec", {"sessionId": "sbx_nope", "commands": ["ls"]})
        out["stop"] = await sandbox("sandbox.stop", {"sessionId": sid})
        out["listAfterStop"] = await sandbox("sandbox.session.list", {})
        out["execAfterStop"] = await sandbox("sandbox.exec", {"sessionId": sid, "commands": ["ls"]})
        out["approvalsAsked"] = APPROVALS.asked
    return out


async def big_bodies(args: argparse.Namespace) -> dict[str, Any]:
    """A write of the documented largest size (10 MiB) over HTTP, then one over the body limit
    of /mcp (which must fail as that call's error, naming the limit), then a small call on the
    same session (which must still work)."""
    out: dict[str, Any] = {}
    mib = 1024 * 1024
    async with connect(args) as (client, _changes):
        out["protocolVersion"] = client.protocol_version
        out["largest"] = await call(client, "write_file", {"path": "largest.txt", "content": "a" * (10 * mib)})
        out["tooLarge"] = await call(client, "write_file", {"path": "too_large.txt", "content": "b" * (args.over_mib * mib)})
        out["after"] = await call(client, "write_file", {"path": "after.txt", "content": "still here"})
        out["approvalsAsked"] = APPROVALS.asked
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument(
        "--scenario",
        choices=["flow", "two-sessions", "watch", "dynamic-mcp", "sandbox-sessions", "big-bodies"],
        required=True,
    )
    parser.add_argument("--name", required=True, help="name of the tool the scenario creates")
    parser.add_argument("--url")
    parser.add_argument("--command")
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--admin-token", help="the server's admin token (scenario dynamic-mcp)")
    parser.add_argument("--over-mib", type=int, default=20, help="size of the over-limit write (scenario big-bodies)")
    parser.add_argument(
        "--approve", choices=["allow_once", "allow_always", "deny"], default="allow_always",
        help="what the person answers to every approval form",
    )
    args = parser.parse_args()
    if bool(args.url) == bool(args.command):
        parser.error("give --url or --command")
    APPROVALS.decision = args.approve
    scenario = {
        "flow": flow,
        "two-sessions": two_sessions,
        "watch": watch,
        "dynamic-mcp": dynamic_mcp,
        "sandbox-sessions": sandbox_sessions,
        "big-bodies": big_bodies,
    }[args.scenario]
    from importlib.metadata import version

    out = {"client": f"mcp (python) {version('mcp')}", "mode": args.mode}
    out.update(await scenario(args))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    anyio.run(main)
