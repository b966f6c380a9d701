"""An agent on the MCP client's own model (issue 37: model.service "sampling") through the
official MCP Python SDK (`mcp` 2.x, mode="legacy": a 2025-11-25 session, which the server can
ask `sampling/createMessage`).

Run by crates/toolsmith-server/tests/server/agent_sampling.rs after it set up the agent
`sampler` (model.service "sampling", no Config Center service at all) and the tool `shout`.
The client declares sampling with tools; its "model" answers the first turn of a run with a
tool call (`shout`) and the turn after the tool's result with a final text quoting it, and
declines (JSON-RPC error -1, a person saying no) a run whose task starts with DECLINE. A second
client declares no sampling. Prints what it saw as one JSON object on the last line of stdout;
the Rust test holds the assertions.

    mcp_sampling.py --url http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError


def log(*parts: Any) -> None:
    print("[mcp_sampling.py]", *parts, file=sys.stderr, flush=True)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        res = await client.call_tool(name, arguments)
    except MCPError as e:
        return {"protocolError": {"code": e.code, "message": e.message}}
    text = "".join(c.text for c in res.content if getattr(c, "type", None) == "text")
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return {"isError": bool(res.is_error), "value": value}


def blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    requests: list[Any] = []

    async def sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        first = blocks(params.messages[0].content)[0]
        if getattr(first, "text", "").startswith("DECLINE"):
            return types.ErrorData(code=-1, message="the user declined to run this")
        last = blocks(params.messages[-1].content)
        results = [b for b in last if getattr(b, "type", None) == "tool_result"]
        if results:
            said = "".join(getattr(c, "text", "") for c in results[0].content)
            return types.CreateMessageResultWithTools(
                role="assistant",
                content=[types.TextContent(type="text", text=f"the client's model saw: {said}")],
                model="client-model",
                stop_reason="endTurn",
            )
        return types.CreateMessageResultWithTools(
            role="assistant",
            content=[types.ToolUseContent(type="tool_use", id="use_1", name="shout", input={"text": "hi"})],
            model="client-model",
            stop_reason="toolUse",
        )

    capabilities = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with Client(
        args.url,
        mode="legacy",
        sampling_callback=sample,
        sampling_capabilities=capabilities,
        read_timeout_seconds=60,
    ) as client:
        # A conversation whose every turn the client's model answers: a tool call, then text.
        out["send"] = await call(client, "sessions_send", {"agent": "sampler", "message": "shout hi"})
        # A subagent run (the caller waits): the same model.
        out["run"] = await call(client, "subagents", {"action": "run", "task": "shout again", "agent": "sampler"})
        # Spawned (the call does not wait): refused, naming the calls that wait.
        out["spawn"] = await call(client, "sessions_spawn", {"task": "shout later", "agent": "sampler"})
        # The person says no: the run fails with the client's reason.
        out["declined"] = await call(client, "sessions_send", {"agent": "sampler", "message": "DECLINE this"})
    out["requests"] = requests

    async with Client(args.url, mode="legacy", read_timeout_seconds=60) as bare:
        out["bare"] = await call(bare, "sessions_send", {"agent": "sampler", "message": "shout hi"})
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
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
