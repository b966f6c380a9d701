"""What a running custom tool can ask of its caller's client (issue 34), through the official MCP
Python SDK (`mcp` 2.x): log messages at or above the client's level, progress for the call's
token, sampling (the client's "model" answers), elicitation (the client's "person" answers), and
a call cancelled by the client.

Run by crates/toolsmith-server/tests/server/mcp_sdk_capabilities.rs with the interpreter of
tests/clients/.venv, after it created the tools (cap_log, cap_progress, cap_sample, cap_elicit,
cap_spin). Prints what it observed as one JSON object on the last line of stdout; the Rust test
holds the assertions.

    mcp_capabilities.py --mode auto|legacy [--bare]
                        (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]...)

mode="legacy" negotiates 2025-11-25 (a session: logging/setLevel, requests to the client during
the call); mode="auto" negotiates 2026-07-28 (no session: the log level rides on each request's
_meta, and the client answers what the server asks through InputRequiredResult rounds).
--bare: the client declares neither sampling nor elicitation.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

WAIT = 15.0


def log(*parts: Any) -> None:
    print("[mcp_capabilities.py]", *parts, file=sys.stderr, flush=True)


class Logs:
    """Log messages as they arrive, and waiters for one that matches."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._arrived = anyio.Event()

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append({"level": params.level, "logger": params.logger, "data": params.data})
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait_for(self, pred: Any) -> bool:
        with anyio.move_on_after(WAIT):
            while not any(pred(m) for m in self.messages):
                await self._arrived.wait()
        return any(pred(m) for m in self.messages)


def result_json(res: types.CallToolResult) -> dict[str, Any]:
    return {
        "isError": bool(res.is_error),
        "text": [c.text for c in res.content if getattr(c, "type", None) == "text"],
        "structured": res.structured_content,
    }


async def call(client: Client, name: str, arguments: dict[str, Any], **options: Any) -> dict[str, Any]:
    try:
        return result_json(await client.call_tool(name, arguments, **options))
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"bare": args.bare, "mode": args.mode}
    logs = Logs()
    sampling_requests: list[Any] = []
    elicitation_requests: list[Any] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampling_requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        first = params.messages[0].content if params.messages else None
        prompt = getattr(first, "text", "")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"the client's model read: {prompt}"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicitation_requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    if args.url:
        server: Any = args.url
    else:
        server = StdioServerParameters(command=args.command, args=args.arg)
    callbacks: dict[str, Any] = {} if args.bare else {"sampling_callback": sample, "elicitation_callback": elicit}
    async with Client(
        server,
        mode=args.mode,
        logging_callback=logs,
        log_level="info",
        read_timeout_seconds=60,
        **callbacks,
    ) as client:
        out["protocolVersion"] = client.protocol_version
        if client.protocol_version < "2026-07-28":
            await client.set_logging_level("info")
        out["log"] = await call(client, "cap_log", {})
        out["logArrived"] = await logs.wait_for(lambda m: m["level"] == "warning")
        out["logs"] = list(logs.messages)

        updates: list[dict[str, Any]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append({"progress": progress, "total": total, "message": message})

        out["progress"] = await call(client, "cap_progress", {}, progress_callback=on_progress)
        out["progressUpdates"] = updates

        out["sample"] = await call(client, "cap_sample", {"prompt": "Say hi"})
        out["samplingRequests"] = sampling_requests
        out["elicit"] = await call(client, "cap_elicit", {})
        out["elicitationRequests"] = elicitation_requests

        # Cancelled: the tool says it runs, then spins; the client gives up on it.
        spin: dict[str, Any] = {"cancelled": False}
        async with anyio.create_task_group() as tg:

            async def run_spin() -> None:
                spin.update(await call(client, "cap_spin", {}))

            tg.start_soon(run_spin)
            out["spinRunning"] = await logs.wait_for(lambda m: m["data"] == "spinning")
            tg.cancel_scope.cancel()
            spin["cancelled"] = True
        out["spin"] = spin
        # The connection still works after the cancellation.
        out["afterCancel"] = await call(client, "cap_progress", {})
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--bare", action="store_true")
    parser.add_argument("--url")
    parser.add_argument("--command")
    parser.add_argument("--arg", action="append", default=[])
    args = parser.parse_args()
    if not (args.url or args.command):
        parser.error("--url or --command is required")
    return args


if __name__ == "__main__":
    arguments = parse_args()
    try:
        report = anyio.run(main, arguments)
    except BaseException as e:  # noqa: BLE001 - the report is the interface
        log("failed:", repr(e))
        raise
    from importlib.metadata import version

    print(json.dumps({"client": f"mcp {version('mcp')}", **report}, default=str))
