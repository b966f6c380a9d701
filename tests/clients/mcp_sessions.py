"""Sessions and subagents (issue 37, spec 001 §2 "Sessions", §6) through the official MCP
Python SDK (`mcp` 2.x, mode="legacy": a 2025-11-25 session, so the server can notify it).

Run by crates/toolsmith-server/tests/server/agent_sessions_python.rs with the interpreter of
tests/clients/.venv, after it set up the agent `helper`, its model server and the limits. Calls
the six tools of the `sessions` group and every action of `subagents`, and prints what it saw
as one JSON object on the last line of stdout; the Rust test holds the assertions.

    mcp_sessions.py --url http://127.0.0.1:PORT/mcp --release http://127.0.0.1:PORT/release
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from typing import Any

import anyio
from mcp import Client
from mcp_notes import Logs, call


def log(*parts: Any) -> None:
    print("[mcp_sessions.py]", *parts, file=sys.stderr, flush=True)


def ended(key: str) -> Any:
    return lambda m: (
        m["logger"] == "toolsmith/subagents"
        and isinstance(m["data"], dict)
        and m["data"].get("sessionKey") == key
    )


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    logs = Logs()
    async with Client(
        args.url, mode="legacy", logging_callback=logs, read_timeout_seconds=60
    ) as client:
        await client.set_logging_level("info")
        listed = await client.list_tools()
        out["tools"] = sorted(t.name for t in listed.tools)

        # A conversation: begun, continued, read back, its status.
        first = await call(client, "sessions_send", {"agent": "helper", "message": "hello", "label": "chat"})
        out["sendFirst"] = first
        key = first["value"]["sessionKey"]
        out["sendSecond"] = await call(client, "sessions_send", {"sessionKey": key, "message": "more"})
        out["list"] = await call(client, "sessions_list", {})
        out["history"] = await call(client, "sessions_history", {"sessionKey": key})
        out["status"] = await call(client, "session_status", {"sessionKey": key})
        out["statusSummary"] = await call(client, "session_status", {})

        # sessions_spawn: answered at once; its end comes as a notification on this session.
        spawned = await call(client, "sessions_spawn", {"task": "alpha", "label": "first", "agent": "helper"})
        out["spawn"] = spawned
        out["spawnNotified"] = await logs.wait_for(ended(spawned["value"]["sessionKey"]))

        # subagents: spawn, run, list, steer, cancel.
        out["actionRun"] = await call(client, "subagents", {"action": "run", "task": "beta", "agent": "helper"})
        gated = await call(
            client, "subagents", {"action": "spawn", "task": "GATE", "label": "gated", "agent": "helper"}
        )
        out["actionSpawn"] = gated
        gated_key = gated["value"]["sessionKey"]
        out["actionSteer"] = await call(
            client, "subagents", {"action": "steer", "id": gated_key, "message": "turn left"}
        )
        urllib.request.urlopen(urllib.request.Request(args.release, method="POST"), timeout=10).read()
        out["steeredNotified"] = await logs.wait_for(ended(gated_key))
        hanging = await call(client, "subagents", {"action": "spawn", "task": "HANG", "agent": "helper"})
        out["hanging"] = hanging
        out["actionList"] = await call(client, "subagents", {"action": "list"})
        # MaxChildrenPerAgent (3 here): two still... one hangs; fill up and pass it.
        out["second"] = await call(client, "sessions_spawn", {"task": "HANG", "agent": "helper"})
        out["third"] = await call(client, "sessions_spawn", {"task": "HANG", "agent": "helper"})
        out["overChildren"] = await call(client, "sessions_spawn", {"task": "HANG", "agent": "helper"})
        out["cancelOne"] = await call(
            client, "subagents", {"action": "cancel", "id": hanging["value"]["sessionKey"]}
        )
        out["cancelLast"] = await call(client, "subagents", {"action": "cancel", "id": "last"})
        out["cancelAll"] = await call(client, "subagents", {"action": "cancel", "id": "all"})
        out["cancelNotified"] = await logs.wait_for(ended(hanging["value"]["sessionKey"]))
        out["badAction"] = await call(client, "subagents", {"action": "adopt"})
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--release", required=True)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_args()
    try:
        report = anyio.run(main, arguments)
    except BaseException as e:  # noqa: BLE001 - the report is the interface
        log("failed:", repr(e))
        raise
    from importlib.metadata import version

    print(json.dumps({"client": f"mcp {version('mcp')}", **report}, default=str))
