"""Protocols without a real implementation here (ANP, SGD, user-defined), carried as
JSON-RPC 2.0 over HTTP: ``POST /rpc/<protocol>`` with the method ``tools/list`` or
``tools/call``, the content projected to the protocol's fields, the envelope under
``params._meta["protomesh/route"]``.

A descriptor travels as ``{"name", <each known field's value in the scenario's shape>,
"unknown": [fields the protocol represents but the message lost]}``; a call as
``{"name", "arguments", "plus": {...}, "answer": {...}}``; an outcome as ``{"error",
"text", "ask": {"message", "state"}}``. Nothing streams back: the server's notice that
an execution started does not travel on this wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import anyio

from sim.live.envelope import ENVELOPE_KEY, Envelope, arriving, request_meta
from sim.live.payload import Call
from sim.live.wire import Kept, Notice, Receiver, Spawn, Unreachable, tls
from sim.live.wire.content import (
    call_from_json,
    call_json,
    descriptor_from_json,
    descriptor_json,
    outcome_from_json,
    outcome_json,
)

__all__ = ["JsonRpcSender", "jsonrpc_routes", "path_of"]

PREFIX = "/rpc/"


def path_of(protocol: str) -> str:
    """The endpoint of ``protocol`` (its name quoted into the path)."""
    return PREFIX + quote(protocol, safe="")


def jsonrpc_routes(protocols: list[str], receiver: Receiver, fields: Any) -> list[Any]:
    """The Starlette routes of ``protocols`` (one endpoint each) handing messages to
    ``receiver``; ``fields(protocol)`` the descriptor fields a protocol represents."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def endpoint(protocol: str) -> Any:
        async def handle(request: Request) -> Any:
            try:
                body = await request.json()
            except ValueError:
                return _error(None, -32700, "Parse error")
            rid = body.get("id") if isinstance(body, Mapping) else None
            if not isinstance(body, Mapping) or body.get("jsonrpc") != "2.0":
                return _error(rid, -32600, "Invalid Request")
            method, params = body.get("method"), body.get("params") or {}
            meta = params.get("_meta") if isinstance(params, Mapping) else None
            try:
                if not isinstance(meta, Mapping) or ENVELOPE_KEY not in meta:
                    raise ValueError(f"no params._meta[{ENVELOPE_KEY!r}]")
                env = Envelope.from_json(meta[ENVELOPE_KEY])
                if arriving(env) != protocol:
                    raise ValueError(f"a {arriving(env)} message at the {protocol} endpoint")
                if method == "tools/list":
                    payload: Any = None
                elif method == "tools/call":
                    payload = call_from_json(params)
                else:
                    return _error(rid, -32601, f"Method not found: {method}")
            except (KeyError, TypeError, ValueError) as exc:
                return _error(rid, -32602, str(exc))

            async def notice(attempt: int) -> None:
                """No notice travels on this wire."""

            reply_env, reply = await receiver.on_message(protocol, env, payload, notice)
            result: dict[str, Any] = {"_meta": {ENVELOPE_KEY: reply_env.to_json()}}
            if not reply_env.silent:
                if method == "tools/list":
                    fs = fields(protocol)
                    result["tools"] = [descriptor_json(d, fs) for d in reply]
                else:
                    result["outcome"] = outcome_json(reply)
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": result})

        return handle

    return [Route(path_of(p), endpoint(p), methods=["POST"]) for p in protocols]


def _error(rid: Any, code: int, message: str) -> Any:  # a starlette JSONResponse
    from starlette.responses import JSONResponse

    return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


class JsonRpcSender:
    """Sends to one agent's ``/rpc/<protocol>`` endpoints (one ``httpx`` client, kept
    open until ``closing``: :class:`~sim.live.wire.Kept`)."""

    def __init__(self, base: str, spawn: Spawn, closing: anyio.Event, timeout: float) -> None:
        self.base = base
        self.timeout = timeout
        self._client = Kept(self._open, spawn, closing)
        self._ids = 0

    def _open(self) -> Any:
        import httpx

        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=5.0), verify=tls())

    async def warm(self) -> None:
        """The client opened and its connection made (a ``ping``: method not found)."""
        client = await self._client.get()
        await client.post(self.base + PREFIX, json={"jsonrpc": "2.0", "id": 0, "method": "ping"})

    async def send(
        self,
        protocol: str,
        env: Envelope,
        payload: Any,
        fields: frozenset[str],
        on_notice: Notice | None,
    ) -> tuple[Envelope, Any]:
        import httpx

        client = await self._client.get()
        params: dict[str, Any] = {"_meta": request_meta(env)}
        if payload is None:
            method = "tools/list"
        else:
            method = "tools/call"
            call: Call = payload
            params |= call_json(call)
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        try:
            response = await client.post(self.base + path_of(protocol), json=body)
        except httpx.TransportError as exc:
            raise Unreachable(f"{self.base}: {type(exc).__name__}: {exc}") from None
        data = response.json()
        if "error" in data:
            raise ValueError(f"{self.base}{path_of(protocol)}: {data['error'].get('message')}")
        result = data["result"]
        reply_env = Envelope.from_json(result["_meta"][ENVELOPE_KEY])
        if reply_env.silent:
            return reply_env, None
        if payload is None:
            return reply_env, [descriptor_from_json(d, fields) for d in result.get("tools") or ()]
        return reply_env, outcome_from_json(result.get("outcome") or {})
