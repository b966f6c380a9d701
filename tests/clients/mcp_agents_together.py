"""Agents working together (issue 38, spec 001 §7–§10) through the official MCP Python SDK
(`mcp` 2.x, mode="legacy": a 2025-11-25 session over streamable HTTP, so the server can notify
it).

Run by crates/toolsmith-server/tests/server/agent_delegation.rs
(`the_python_sdk_drives_every_delegation_and_team_tool`), after it set up the agents `lead`,
`billing`, `writer`, `critic`, `alice` and `bob`, the links lead→billing, lead→writer and
lead→critic (none to alice), the team `research` (lead `lead`, members alice and bob) and the
model server. A person's session (no agent) and one session per agent (`X-Toolsmith-Agent: <id>`)
call every action of `delegate`, `delegate_search`, `evaluate_loop`, `handoff`, `team_tasks` and
`team_message`, and print what they saw as one JSON object on the last line of stdout; the Rust
test holds the assertions.

    mcp_agents_together.py --url http://127.0.0.1:PORT/mcp --lead ID --alice ID --bob ID
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_notes import Logs, call


def log(*parts: Any) -> None:
    print("[mcp_agents_together.py]", *parts, file=sys.stderr, flush=True)


def delegation_ended(delegation: str) -> Any:
    return lambda m: (
        m["logger"] == "toolsmith/delegation"
        and isinstance(m["data"], dict)
        and m["data"].get("delegation") == delegation
    )


async def session(stack: AsyncExitStack, url: str, agent: str | None, logs: Logs) -> Client:
    """A 2025-11-25 session: a person's, or the agent `agent`'s (`X-Toolsmith-Agent`)."""
    if agent is None:
        server: Any = url
    else:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"X-Toolsmith-Agent": agent},
                timeout=httpx2.Timeout(30.0, read=300.0),
            )
        )
        server = streamable_http_client(url, http_client=http)
    client = await stack.enter_async_context(
        Client(server, mode="legacy", logging_callback=logs, read_timeout_seconds=60)
    )
    await client.set_logging_level("info")
    return client


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    logs = Logs()
    async with AsyncExitStack() as stack:
        person = await session(stack, args.url, None, logs)
        lead = await session(stack, args.url, args.lead, logs)
        alice = await session(stack, args.url, args.alice, logs)
        bob = await session(stack, args.url, args.bob, logs)
        out["tools"] = sorted(t.name for t in (await lead.list_tools()).tools)
        out["personTools"] = sorted(t.name for t in (await person.list_tools()).tools)

        # delegate: refused without a link, sync, async and its announced result, list,
        # cancel, history.
        out["noLink"] = await call(lead, "delegate", {"agent": "alice", "task": "refund order 7"})
        out["sync"] = await call(lead, "delegate", {"agent": "billing", "task": "refund order 7"})
        started = await call(
            lead, "delegate", {"agent": "billing", "task": "invoice 12", "mode": "async"}
        )
        out["async"] = started
        out["asyncNotified"] = await logs.wait_for(delegation_ended(started["value"]["id"]))
        hanging = await call(
            lead, "delegate", {"agent": "billing", "task": "HANG forever", "mode": "async"}
        )
        out["hanging"] = hanging
        out["list"] = await call(lead, "delegate", {"action": "list"})
        out["cancel"] = await call(lead, "delegate", {"action": "cancel", "id": hanging["value"]["id"]})
        out["cancelNotified"] = await logs.wait_for(delegation_ended(hanging["value"]["id"]))
        out["listAfterCancel"] = await call(lead, "delegate", {"action": "list"})
        out["history"] = await call(lead, "delegate", {"action": "history"})

        # delegate_search: the linked agent that fits.
        out["search"] = await call(lead, "delegate_search", {"query": "refund an invoice"})

        # evaluate_loop: approved in the first round; rejected, revised, approved.
        out["loopOneRound"] = await call(
            lead,
            "evaluate_loop",
            {"generator": "writer", "evaluator": "critic", "task": "Polish announcement v2", "criteria": "short"},
        )
        out["loopTwoRounds"] = await call(
            lead,
            "evaluate_loop",
            {
                "generator": "writer",
                "evaluator": "critic",
                "task": "WRITE a product announcement",
                "criteria": "short, with pricing",
            },
        )

        # handoff: a person's session with the lead, handed to billing, then given back.
        first = await call(person, "sessions_send", {"agent": "lead", "message": "hello"})
        out["sessionFirst"] = first
        key = first["value"]["sessionKey"]
        out["handoff"] = await call(
            person, "handoff", {"sessionKey": key, "agent": "billing", "reason": "billing question"}
        )
        out["routed"] = await call(person, "sessions_send", {"sessionKey": key, "message": "how much was it?"})
        out["clear"] = await call(person, "handoff", {"action": "clear", "sessionKey": key})
        out["back"] = await call(person, "sessions_send", {"sessionKey": key, "message": "thanks"})

        # team_tasks: create (priority, blocked_by), list, claim, complete unblocking, search.
        first_task = await call(
            lead,
            "team_tasks",
            {
                "action": "create",
                "subject": "Collect the prices",
                "description": "Of the three vendors.",
                "priority": 5,
            },
        )
        out["taskCreate"] = first_task
        first_id = first_task["value"]["task"]["id"]
        second_task = await call(
            lead, "team_tasks", {"action": "create", "subject": "Compare them", "blocked_by": [first_id]}
        )
        out["taskCreateBlocked"] = second_task
        second_id = second_task["value"]["task"]["id"]
        out["taskList"] = await call(lead, "team_tasks", {"action": "list"})
        out["taskClaim"] = await call(alice, "team_tasks", {"action": "claim", "task_id": first_id})
        out["taskClaimTaken"] = await call(bob, "team_tasks", {"action": "claim", "task_id": first_id})
        out["taskClaimBlocked"] = await call(bob, "team_tasks", {"action": "claim", "task_id": second_id})
        out["taskComplete"] = await call(
            alice, "team_tasks", {"action": "complete", "task_id": first_id, "result": "A 10, B 12, C 9"}
        )
        out["taskClaimUnblocked"] = await call(bob, "team_tasks", {"action": "claim", "task_id": second_id})
        out["taskListCompleted"] = await call(lead, "team_tasks", {"action": "list", "filter": "completed"})
        out["taskSearch"] = await call(lead, "team_tasks", {"action": "search", "query": "vendors"})

        # team_message: send, read unread (once), broadcast.
        out["messageSend"] = await call(
            lead, "team_message", {"action": "send", "to": "alice", "text": "claim the pricing task"}
        )
        out["messageRead"] = await call(alice, "team_message", {"action": "read"})
        out["messageReadAgain"] = await call(alice, "team_message", {"action": "read"})
        out["messageBroadcast"] = await call(alice, "team_message", {"action": "broadcast", "text": "prices are in"})
        out["messageReadBroadcast"] = await call(bob, "team_message", {"action": "read"})
    out["ids"] = {"firstTask": first_id, "secondTask": second_id}
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--lead", required=True)
    parser.add_argument("--alice", required=True)
    parser.add_argument("--bob", required=True)
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
