"""Drives a corpus of typical model mistakes through the official MCP Python SDK (`mcp` 2.x, from
tests/clients/.venv) and reports, for each, the text the SDK surfaces to whoever reads the
result: the text content of a tool result (an `isError` result included), or the message of the
`MCPError` the SDK raises for a JSON-RPC error (clients drop `error.data`, so it is not reported).

    mcp_mistakes.py --url http://127.0.0.1:PORT/mcp --corpus FILE [--mode legacy]

FILE is a JSON array of {"id", "name", "arguments"}; `"arguments"` may be any JSON value, and
a value that is not an object is sent as it is, in a raw `tools/call` (the SDK's `call_tool`
only takes a mapping). Prints one JSON line: {"results": [{"id", "surfaced", "isError",
"rpcError"}]}. Every assertion is in the Rust test that runs this script.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError


def text_of(res: Any) -> str:
    return "\n".join(c.text for c in res.content if getattr(c, "type", None) == "text")


async def one(client: Client, name: str, arguments: Any) -> dict[str, Any]:
    try:
        if isinstance(arguments, dict):
            res = await client.call_tool(name, arguments)
        else:
            res = await raw_call(client, name, arguments)
        return {"surfaced": text_of(res), "isError": bool(res.is_error), "rpcError": None}
    except MCPError as e:
        return {"surfaced": str(e), "isError": True, "rpcError": e.code}


async def raw_call(client: Client, name: str, arguments: Any) -> Any:
    """A `tools/call` whose `arguments` is not an object, as a model's client may send it."""
    from mcp import types

    params = types.CallToolRequestParams.model_construct(name=name, arguments=arguments)
    request = types.CallToolRequest.model_construct(method="tools/call", params=params)
    return await client.session.send_request(request, types.CallToolResult)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--mode", default="legacy")
    args = parser.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        corpus = json.load(f)
    results = []
    async with Client(args.url, mode=args.mode, read_timeout_seconds=60) as client:
        for case in corpus:
            out = await one(client, case["name"], case.get("arguments", {}))
            out["id"] = case["id"]
            results.append(out)
    print(json.dumps({"results": results}), flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as e:  # noqa: BLE001 - report, then fail
        print(f"[mcp_mistakes] {e!r}", file=sys.stderr, flush=True)
        sys.exit(1)
