"""The MCP side of the web UI's browser tests (tests/clients/ui_e2e.mjs), with the official MCP
Python SDK (`mcp` 2.x) from tests/clients/.venv. It declares no elicitation capability, so a
call that needs a person's approval answers `approval_required` and waits for a decision made
elsewhere — in the browser test, on the UI's Approvals page.

    ui_mcp.py --url http://127.0.0.1:PORT/mcp create --name NAME --description TEXT
        create_tool as the model, with the `filesystem` permission (so the tool waits in
        pending_approval); prints the result as one JSON line.
    ui_mcp.py --url http://127.0.0.1:PORT/mcp call --name NAME --args JSON [--timeout 60]
        calls the tool; if the answer is "awaiting approval apr_…", prints
        {"approvalId": "apr_…"} and waits (at most the timeout) for one line on stdin: the
        person has decided. Then it makes the same call once more, as a model would, and that
        call must run. Prints the final result as one JSON line.
    ui_mcp.py --url http://127.0.0.1:PORT/mcp call --name NAME --args JSON --form hold [--retry]
        declares the elicitation capability, so the call waits in the client's own approval
        form; the form is held open (no answer), and {"formOpen": true} is printed when it
        opens. The person decides elsewhere (the UI): the one waiting call must end with that
        decision — it prints {"final": …} — and the form must be withdrawn by the server
        ({"formWithdrawn": true}). With --retry the same call is made once more, as a model
        would after a denial: {"retry": …}.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

import anyio
from mcp import Client, types
from mcp.shared.exceptions import MCPError

APPROVAL = re.compile(r"apr_[0-9a-f]+")


def emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def result_json(res: Any) -> dict[str, Any]:
    return {
        "isError": bool(res.is_error),
        "text": [c.text for c in res.content if getattr(c, "type", None) == "text"],
        "structured": res.structured_content,
    }


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        return result_json(await client.call_tool(name, arguments))
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", default="legacy")
    sub = parser.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create")
    create.add_argument("--name", required=True)
    create.add_argument("--description", required=True)
    run = sub.add_parser("call")
    run.add_argument("--name", required=True)
    run.add_argument("--args", default="{}")
    run.add_argument("--timeout", type=float, default=60.0)
    run.add_argument("--form", choices=["none", "hold"], default="none")
    run.add_argument("--retry", action="store_true")
    args = parser.parse_args()

    if getattr(args, "form", "none") == "hold":
        await held_form_call(args)
        return

    async with Client(args.url, mode=args.mode, read_timeout_seconds=60) as client:
        if args.action == "create":
            emit(
                await call(
                    client,
                    "create_tool",
                    {
                        "name": args.name,
                        "description": args.description,
                        "parameters": json.dumps(
                            {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
                        ),
                        "code": "return {greeting: 'hello ' + args.who};",
                        "category": "Browser tests",
                        "permissions": ["filesystem"],
                    },
                )
            )
            return
        arguments = json.loads(args.args)
        out = await call(client, args.name, arguments)
        found = approval_in(out)
        if not found:
            emit({"final": out, "waited": False})
            return
        emit({"approvalId": found.group(0)})
        # The decision is an event the caller reports, not something to poll for.
        decided = False
        with anyio.move_on_after(args.timeout):
            decided = bool(await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True))
        if not decided:
            emit({"final": out, "timedOut": True})
            return
        emit({"final": await call(client, args.name, arguments), "waited": True})


async def held_form_call(args: argparse.Namespace) -> None:
    """A call held in the client's own approval form, which the person never answers there."""

    async def hold(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        found = APPROVAL.search(getattr(params, "message", "") or "")
        emit({"formOpen": True, "approvalId": found.group(0) if found else None})
        try:
            await anyio.sleep_forever()
        finally:
            # Cancelled: the server withdrew the form (notifications/cancelled).
            emit({"formWithdrawn": True})
        raise AssertionError("unreachable")

    async with Client(
        args.url, mode=args.mode, read_timeout_seconds=args.timeout, elicitation_callback=hold
    ) as client:
        arguments = json.loads(args.args)
        with anyio.move_on_after(args.timeout) as scope:
            out = await call(client, args.name, arguments)
        if scope.cancelled_caught:
            emit({"final": None, "timedOut": True})
            return
        emit({"final": out})
        if args.retry:
            emit({"retry": await call(client, args.name, arguments)})


def approval_in(out: dict[str, Any]) -> re.Match[str] | None:
    """The approval id in a call's answer, if it is waiting for a person."""
    text = " ".join(out.get("text") or [])
    return APPROVAL.search(text) if out.get("isError") else None

if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as e:  # noqa: BLE001 - report, then fail
        print(f"[ui_mcp] {e!r}", file=sys.stderr, flush=True)
        sys.exit(1)
