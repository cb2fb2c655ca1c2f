"""JSON-RPC framing of MCP over Streamable HTTP: the screen in front of the SDK's application.

A ``POST`` whose body is JSON goes through the same :func:`sim.interop.framing.classify` as a
stdio line, so both transports give one message the same answer: a body that is not JSON is
``-32700``; a batch, a non-object, a bad ``jsonrpc``, an ``id`` that is neither a string nor
an integer (an object, a boolean, null, 1.5), an integer method or list params are
``-32600``. Each is answered ``400 Bad Request`` with the JSON-RPC error in the body (with
the request's ``id`` when it is usable, else null).

Then the header rule of 2026-07-28 (Streamable HTTP, server validation): a request whose
``MCP-Protocol-Version`` header names a revision its body's ``_meta`` contradicts is
``400`` with ``-32020`` (``HeaderMismatch``). The SDK routes a request by its header alone
and would treat such a request as a legacy one without a session ("Missing session ID").

A body over ``max_body`` bytes, or one that is not ``application/json``, goes to the SDK as
it came (it answers 413 or 415). Everything else reaches the SDK byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from sim.interop.framing import MODERN_META_KEY, Rejection, classify

__all__ = ["HEADER_MISMATCH", "Screened", "header_mismatch"]

HEADER_MISMATCH = -32020
"""2026-07-28 ``HeaderMismatch``."""
VERSION_HEADER = b"mcp-protocol-version"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def header_mismatch(message: dict[str, Any], header: str | None) -> Rejection | None:
    """The ``-32020`` answer when ``header`` (the request's ``MCP-Protocol-Version``) and
    the revision in ``message``'s ``params._meta`` disagree; None when they agree or either
    is absent (the SDK judges a missing header itself)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    body = meta.get(MODERN_META_KEY) if isinstance(meta, dict) else None
    if header is None or body is None or header == body:
        return None
    msg_id = message.get("id")
    return Rejection(
        msg_id if isinstance(msg_id, str | int) else None,
        HEADER_MISMATCH,
        f"Header mismatch: MCP-Protocol-Version header {header!r} does not match the "
        f"body's _meta {MODERN_META_KEY} {json.dumps(body)[:40]}",
    )


class Screened:
    """An ASGI application: the SDK's ``app`` behind the screen of the module docstring."""

    def __init__(self, app: App, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or ()) if scope["type"] == "http" else {}
        kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if scope["type"] != "http" or scope.get("method") != "POST" or kind != b"application/json":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []
        size, more = 0, True
        while more:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if size > self.max_body:
                break
        if not more and held[-1]["type"] == "http.request":
            body = b"".join(m.get("body", b"") for m in held)
            verdict = classify(body)
            if isinstance(verdict, dict):
                header = headers.get(VERSION_HEADER)
                verdict = header_mismatch(verdict, header.decode("latin-1") if header else None)
            if isinstance(verdict, Rejection):
                await _answer(send, verdict)
                return
        await self.app(scope, _replay(held, receive), send)


def _replay(held: list[Message], receive: Receive) -> Receive:
    """``receive`` that gives the ``held`` messages first, then the rest of the request."""
    queue = list(held)

    async def replayed() -> Message:
        return queue.pop(0) if queue else await receive()

    return replayed


async def _answer(send: Send, rejection: Rejection) -> None:
    body = rejection.line()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
