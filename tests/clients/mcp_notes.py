"""What the Python SDK scripts of the agents' tests share (mcp_sessions.py,
mcp_agents_together.py): the log notifications a session receives, with a wait for one that
matches, and a tool call reported as plain data for the Rust test to check."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

WAIT = 30.0


class Logs:
    """Log notifications as they arrive, and waiters for one that matches."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._arrived = anyio.Event()

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append({"level": params.level, "logger": params.logger, "data": params.data})
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait_for(self, pred: Any) -> dict[str, Any] | None:
        with anyio.move_on_after(WAIT):
            while not any(pred(m) for m in self.messages):
                await self._arrived.wait()
        return next((m for m in self.messages if pred(m)), None)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`{"isError", "value"}` (the text content, parsed as JSON when it is), or
    `{"protocolError": {"code", "message"}}`."""
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
