"""Live messages on the wire: one module per real transport.

Which module carries a protocol is the protocol's declared wire
(:meth:`sim.scenario.model.ProtocolSpec.transport`, :class:`sim.scenario.model.Wire`):

- :mod:`~sim.live.wire.mcp`: MCP and MCP⁺ through the official ``mcp`` SDK (Streamable
  HTTP at ``/mcp``, revision 2026-07-28: stateless requests, approvals as
  ``InputRequiredResult``); MCP⁺ is MCP with the metadata under ``_meta``.
- :mod:`~sim.live.wire.a2a`: A2A through the official ``a2a-sdk`` (JSON-RPC at ``/a2a``,
  the agent card at the well-known path).
- :mod:`~sim.live.wire.jsonrpc`: every other protocol (ANP, SGD, a user-defined one that
  declares no wire), which has no real implementation here: JSON-RPC 2.0 over HTTP at
  ``/rpc/<protocol>``, the protocol's name in the path, its content projected to its
  fields.

Each module offers the same two sides: a *sender* (``send(protocol, envelope, payload,
on_notice)`` → the reply's envelope and payload) and the routes that hand what arrives
to a :class:`Receiver`. ``on_notice(attempt)`` carries the server's notice that an
execution started back to the caller (an MCP progress notification; A2A and JSON-RPC
carry none).
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import anyio

from sim.live.envelope import Envelope

__all__ = ["Kept", "Notice", "Receiver", "Spawn", "Unreachable", "tls"]

Spawn = Callable[[Callable[[], Awaitable[None]]], None]
"""Runs a coroutine function in the process's long-lived task group."""

Notice = Callable[[int], Awaitable[None]]
"""Called with the attempt when the server reports that it started executing it."""


@functools.cache
def tls() -> ssl.SSLContext:
    """The TLS context of every sender's HTTP client in this process, built once: building
    one loads the CA store (about 0.05 s of CPU), which each client did again, though a
    hop to another process of the mesh is plain HTTP on 127.0.0.1."""
    return ssl.create_default_context()


class Unreachable(Exception):
    """The next hop did not take the message (connection refused or reset: its process
    is gone). The sender drops the message (``node_down``)."""


class Receiver(Protocol):
    """What a node does with a message that arrived in ``protocol``."""

    async def on_message(
        self, protocol: str, env: Envelope, payload: Any, notice: Notice
    ) -> tuple[Envelope, Any]:
        """Handle ``payload`` (None for ``list``, a :class:`~sim.live.payload.Call` for a
        request) and return the reply's envelope and payload (a list of
        :class:`~sim.live.payload.Descriptor`, or an :class:`~sim.live.payload.Outcome`)."""
        ...


class Kept:
    """An async context (an SDK client, an HTTP client) entered once, in a task of its
    own that keeps it open until ``closing`` is set: such clients hold cancel scopes
    that must be left by the task that entered them, not by whichever task used them."""

    def __init__(
        self,
        enter: Callable[[], AbstractAsyncContextManager[Any]],
        spawn: Spawn,
        closing: anyio.Event,
    ) -> None:
        self._enter = enter
        self._spawn = spawn
        self._closing = closing
        self._lock = anyio.Lock()
        self._value: Any = None
        self._error: BaseException | None = None

    async def get(self) -> Any:
        """The entered value (entering it the first time)."""
        async with self._lock:
            if self._value is None:
                ready = anyio.Event()

                async def hold() -> None:
                    try:
                        async with self._enter() as value:
                            self._value = value
                            ready.set()
                            await self._closing.wait()
                    except Exception as exc:
                        self._error = exc
                    finally:
                        ready.set()

                self._error = None
                self._spawn(hold)
                await ready.wait()
                if self._value is None:  # it failed: the next get tries again
                    if self._error is not None:
                        raise self._error
                    raise Unreachable("the client closed before it opened")
            return self._value
