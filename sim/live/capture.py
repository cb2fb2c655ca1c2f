"""What each agent received on the wire, byte for byte (``live --capture``).

An ASGI middleware in front of the agent's application writes one JSON line per HTTP
request it receives: the scenario time (null for the warm-up before scenario time 0),
the method, the path and the body exactly as it arrived (decoded as UTF-8, with
``\\ufffd`` for bytes that are not). So what crossed a link can be read after the run:
a relay that translates MCP⁺ to MCP really sends its next hop no MCP⁺ metadata
(tests/live/test_live_run.py reads the tool server's file).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import IO, Any

from sim.live.clock import SceneClock

__all__ = ["Capture"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Capture:
    """Records every request body ``app`` receives into ``path`` (see the module)."""

    def __init__(self, app: Any, path: Path, clock: SceneClock) -> None:
        self.app = app
        self.clock = clock
        self._file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - the run's

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()

        async def recording() -> Message:
            message = await receive()
            if message.get("type") == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self._write(scope, bytes(body))
            return message

        await self.app(scope, recording, send)

    def _write(self, scope: Scope, body: bytes) -> None:
        line = {
            # before go (connections warmed), the scenario's clock has not started: null
            "t": round(self.clock.now(), 6) if self.clock.origin else None,
            "method": scope.get("method"),
            "path": scope.get("path"),
            "body": body.decode("utf-8", errors="replace"),
        }
        self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._file.flush()
