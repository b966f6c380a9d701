"""Data extraction and translation answered by the MCP client's own model (issue 39): with no
Config Center service `chat_model`, the built-ins ask the calling client through
`sampling/createMessage`, through the official MCP Python SDK (`mcp` 2.x, mode="legacy": a
2025-11-25 session, which the server can ask while a call runs).

Run by crates/toolsmith-server/tests/server/mcp_extract_sampling.rs, once per phase:

- `sampling`: the four extraction tools and translate_text answered by this client's "model",
  an answer that breaks the schema twice, a person declining, an agent on the client's model
  whose tool call (summarize_text) is answered by the same model, JS tools calling
  summarize_text through utils.callTool with and without the `sampling` permission, and a
  second client that declares no sampling;
- `policy`: the same call once the policy denies `mcp:sampling`;
- `chat_model`: the same call once the user has a `chat_model` service (this client must not
  be asked).

The "model" answers each built-in's prompt as a scripted model would; the text "ALWAYS-BAD"
never gets an answer that meets the schema, and a text starting with DECLINE is declined
(JSON-RPC error -1, a person saying no). Prints what it saw as one JSON object on the last line
of stdout; the Rust test holds the assertions.

    mcp_extract_sampling.py --url http://127.0.0.1:PORT/mcp --phase sampling
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp_notes import call

INVOICE = "Invoice for Anna, Lyon: total 42.50 EUR, due Friday."
SCHEMA = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "total": {"type": "number"},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    },
    "required": ["customer", "total"],
}


def log(*parts: Any) -> None:
    print("[mcp_extract_sampling.py]", *parts, file=sys.stderr, flush=True)


def blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def text_of(message: Any) -> str:
    return "".join(getattr(b, "text", "") for b in blocks(message.content))


def answer_for(system: str, user: str) -> Any:
    """What the scripted model answers a built-in's question."""
    if "Extract the data the schema describes" in system:
        if "ALWAYS-BAD" in user or "previous answer was not valid" not in system:
            return {"total": "lots"}
        return {"customer": "Anna", "total": 42.5, "currency": "EUR"}
    if "named entities" in system:
        return {"entities": [{"text": "Anna", "type": "person"}, {"text": "Lyon", "type": "location"}]}
    if "Extract the table" in system:
        return {"columns": ["item", "qty"], "rows": [["apples", 3], ["pears", 5]]}
    if "You are a translator" in system:
        return {"translatedText": f"DE:{user}", "sourceLanguage": "en"}
    return {"summary": "Anna sends the report on Friday."}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    requests: list[Any] = []

    async def sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        if params.tools:
            # An agent's turn: call summarize_text, then quote its result.
            last = blocks(params.messages[-1].content)
            results = [b for b in last if getattr(b, "type", None) == "tool_result"]
            if results:
                said = "".join(getattr(c, "text", "") for c in results[0].content)
                return types.CreateMessageResultWithTools(
                    role="assistant",
                    content=[types.TextContent(type="text", text=f"the agent read: {said}")],
                    model="client-model",
                    stop_reason="endTurn",
                )
            return types.CreateMessageResultWithTools(
                role="assistant",
                content=[
                    types.ToolUseContent(
                        type="tool_use", id="use_1", name="summarize_text", input={"text": INVOICE}
                    )
                ],
                model="client-model",
                stop_reason="toolUse",
            )
        user = text_of(params.messages[0])
        if user.startswith("DECLINE"):
            return types.ErrorData(code=-1, message="not with my model, thanks")
        answer = answer_for(params.system_prompt or "", user)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"Here you go:\n```json\n{json.dumps(answer)}\n```"),
            model="client-model",
            stop_reason="endTurn",
        )

    capabilities = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with Client(
        args.url,
        mode="legacy",
        sampling_callback=sample,
        sampling_capabilities=capabilities,
        read_timeout_seconds=60,
    ) as client:
        if args.phase == "sampling":
            out["structured"] = await call(client, "extract_structured_data", {"text": INVOICE, "schema": SCHEMA})
            out["always_bad"] = await call(
                client, "extract_structured_data", {"text": "ALWAYS-BAD", "schema": SCHEMA}
            )
            out["entities"] = await call(client, "extract_entities", {"text": INVOICE})
            out["table"] = await call(
                client, "extract_table_data", {"text": "apples: 3, pears: 5", "columns": ["item", "qty"]}
            )
            out["summary"] = await call(
                client, "summarize_text", {"text": INVOICE, "maxWords": 20, "style": "bullets"}
            )
            out["translated"] = await call(
                client, "translate_text", {"text": "good morning", "targetLanguage": "German"}
            )
            out["declined"] = await call(client, "summarize_text", {"text": "DECLINE: a private note"})
            out["agent"] = await call(
                client, "sessions_send", {"agent": "summarizer", "message": "summarize the invoice"}
            )
            out["js_without"] = await call(client, "digest_plain", {"text": INVOICE})
            out["js_with"] = await call(client, "digest_sampling", {"text": INVOICE})
        else:
            out["summary"] = await call(client, "summarize_text", {"text": INVOICE})
    out["requests"] = requests

    if args.phase == "sampling":
        async with Client(args.url, mode="legacy", read_timeout_seconds=60) as bare:
            out["bare"] = await call(bare, "summarize_text", {"text": INVOICE})
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--phase", required=True, choices=["sampling", "policy", "chat_model"])
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
