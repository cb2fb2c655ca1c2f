"""MCP and MCP⁺ on the wire, through the official ``mcp`` SDK (revision 2026-07-28).

Each agent serves one SDK low-level ``Server`` over Streamable HTTP at ``/mcp``; a
middleware takes ``tools/list`` and ``tools/call`` (everything else, ``server/discover``
and ``ping`` among them, is the SDK's). Each sender holds one SDK ``Client`` per next
hop, pinned to 2026-07-28 (stateless requests, no handshake), and sends raw requests,
so that what it forwards is the JSON received, not a re-serialised model.

The encoding (tested byte for byte in tests/live/test_wire_mcp.py):

- ``tools/list`` result entries: ``name``, ``description``, ``inputSchema``,
  ``annotations``; and ``_meta["protomesh/mcp-plus"]`` with the MCP⁺ metadata fields the
  protocol represents (all of them in MCP⁺, none in plain MCP; a user protocol on this
  wire carries those of its ``fields``). A field the protocol represents but the message
  lost on its way (an A2A leg carries no input schema) is listed in
  ``_meta["protomesh/unknown"]``; MCP requires an
  ``inputSchema``, so an unknown one is written ``{"type": "object"}``.
- ``tools/call``: ``name``, ``arguments``; ``_meta["protomesh/mcp-plus"]`` with the
  caller's view of ``side_effects`` and ``requires_approval``, as far as the protocol
  represents them; an approval's answer
  as ``inputResponses["approval"]`` with the ``requestState`` it answers.
- Results: a ``CallToolResult`` whose text starts with the error type when ``isError``
  (``_meta["protomesh/cause"]``: why the error is no outcome of the tool, when it is
  not), or an ``InputRequiredResult`` asking for the approval (a form elicitation).
- The envelope (:mod:`sim.live.envelope`) under ``_meta["protomesh/route"]`` of every
  request and result. The server's notice that an execution started is a progress
  notification (progress = the attempt), forwarded by every relay.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio

from sim.calculus.mcp import MCP_PLUS_META
from sim.interop.elicitation import APPROVAL_KEY, REQUESTED_SCHEMA
from sim.live.envelope import ENVELOPE_KEY, Envelope, arriving, request_meta
from sim.live.payload import Ask, Call, Descriptor, Outcome
from sim.live.wire import Kept, Notice, Receiver, Spawn, Unreachable, tls

__all__ = [
    "ENDPOINT",
    "UNKNOWN_KEY",
    "McpSender",
    "call_of",
    "call_params",
    "descriptor_of",
    "entry_of",
    "mcp_server",
    "outcome_of",
    "result_of",
]

ENDPOINT = "/mcp"
UNKNOWN_KEY = "protomesh/unknown"
"""``_meta`` key of a tools/list entry: the fields its protocol represents but it lost."""
CAUSE_KEY = "protomesh/cause"
"""``_meta`` key of a result: why its error is no outcome of the tool (``Outcome.cause``)."""
REVISION = "2026-07-28"
#: the metadata fields of MCP⁺ (what a plain MCP entry cannot carry), in written order
PLUS_META = ("side_effects", "requires_approval", "failure_modes", "dependencies", "summary")
PLACEHOLDER_SCHEMA: dict[str, Any] = {"type": "object"}
SILENT_TEXT = "protomesh: the message was dropped on its way (no reply)"


# -- the encoding ------------------------------------------------------------------------


def entry_of(desc: Descriptor, fields: frozenset[str]) -> dict[str, Any]:
    """The ``tools/list`` entry of ``desc`` in a protocol that represents ``fields``."""
    values, known = desc.values, desc.known
    entry: dict[str, Any] = {"name": values["name"]}
    if "description" in known and values.get("description") is not None:
        entry["description"] = values["description"]
    schema = values.get("input_schema") if "input_schema" in known else None
    entry["inputSchema"] = dict(schema) if schema is not None else dict(PLACEHOLDER_SCHEMA)
    if "annotations" in known and values.get("annotations"):
        entry["annotations"] = dict(values["annotations"])
    meta: dict[str, Any] = {}
    carried = [k for k in PLUS_META if k in fields and k in known]
    plus = {k: values[k] for k in carried if values.get(k) is not None}
    if plus:
        meta[MCP_PLUS_META] = plus
    unknown = sorted(fields - known)
    if unknown:
        meta[UNKNOWN_KEY] = unknown
    if meta:
        entry["_meta"] = meta
    return entry


def descriptor_of(entry: Mapping[str, Any], fields: frozenset[str]) -> Descriptor:
    """What a ``tools/list`` entry received in a protocol that represents ``fields`` tells
    (ValueError if malformed)."""
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a tools/list entry without a name")
    meta = entry.get("_meta") if isinstance(entry.get("_meta"), Mapping) else {}
    assert isinstance(meta, Mapping)
    unknown = meta.get(UNKNOWN_KEY) or []
    known = (fields - frozenset(str(x) for x in unknown)) | {"name"}
    values: dict[str, Any] = {"name": name}
    if "description" in known and isinstance(entry.get("description"), str):
        values["description"] = entry["description"]
    if "input_schema" in known and isinstance(entry.get("inputSchema"), Mapping):
        values["input_schema"] = dict(entry["inputSchema"])
    if "annotations" in known and isinstance(entry.get("annotations"), Mapping):
        values["annotations"] = dict(entry["annotations"])
    plus = meta.get(MCP_PLUS_META)
    if isinstance(plus, Mapping):
        for key in PLUS_META:
            if key in known and plus.get(key) is not None:
                values[key] = plus[key]
    return Descriptor(values, frozenset(known))


def call_params(call: Call, env: Envelope, fields: frozenset[str]) -> dict[str, Any]:
    """The ``tools/call`` params of ``call`` in a protocol that represents ``fields``."""
    meta: dict[str, Any] = request_meta(env)
    plus = call.keep(fields).plus
    if plus:
        meta[MCP_PLUS_META] = dict(plus)
    params: dict[str, Any] = {"name": call.name, "arguments": dict(call.arguments), "_meta": meta}
    if call.answer is not None:
        params["inputResponses"] = {APPROVAL_KEY: {"action": call.answer["action"]}}
        params["requestState"] = call.answer["state"]
    return params


def call_of(params: Mapping[str, Any], fields: frozenset[str]) -> tuple[Envelope, Call]:
    """The envelope and call of raw ``tools/call`` params in a protocol that represents
    ``fields`` (ValueError if malformed)."""
    meta = params.get("_meta")
    if not isinstance(meta, Mapping) or ENVELOPE_KEY not in meta:
        raise ValueError(f"not a protomesh live message: no _meta[{ENVELOPE_KEY!r}]")
    env = Envelope.from_json(meta[ENVELOPE_KEY])
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        raise ValueError("tools/call needs a name and an arguments object")
    plus = meta.get(MCP_PLUS_META)
    answer = None
    responses = params.get("inputResponses")
    if isinstance(responses, Mapping) and APPROVAL_KEY in responses:
        action = responses[APPROVAL_KEY]
        action = action.get("action") if isinstance(action, Mapping) else None
        answer = {"action": str(action), "state": str(params.get("requestState") or "")}
    sent = dict(plus) if isinstance(plus, Mapping) else {}
    return env, Call(name, dict(arguments), sent, answer).keep(fields)


def result_of(outcome: Outcome, env: Envelope) -> dict[str, Any]:
    """The raw result of ``outcome`` (a CallToolResult or an InputRequiredResult)."""
    meta: dict[str, Any] = {ENVELOPE_KEY: env.to_json()}
    if outcome.ask is not None:
        form = {"mode": "form", "message": outcome.ask.message, "requestedSchema": REQUESTED_SCHEMA}
        return {
            "resultType": "input_required",
            "inputRequests": {APPROVAL_KEY: {"method": "elicitation/create", "params": form}},
            "requestState": outcome.ask.state,
            "_meta": meta,
        }
    if outcome.cause is not None:
        meta[CAUSE_KEY] = outcome.cause
    out: dict[str, Any] = {
        "content": [{"type": "text", "text": outcome.text}],
        "isError": outcome.is_error,
        "resultType": "complete",
        "_meta": meta,
    }
    if outcome.structured is not None:
        out["structuredContent"] = outcome.structured
    return out


def outcome_of(result: Mapping[str, Any]) -> tuple[Envelope, Outcome]:
    """The envelope and outcome of a raw result (ValueError if malformed)."""
    meta = result.get("_meta")
    if not isinstance(meta, Mapping) or ENVELOPE_KEY not in meta:
        raise ValueError(f"a result without _meta[{ENVELOPE_KEY!r}]")
    env = Envelope.from_json(meta[ENVELOPE_KEY])
    if result.get("resultType") == "input_required":
        asked = (result.get("inputRequests") or {}).get(APPROVAL_KEY) or {}
        message = str((asked.get("params") or {}).get("message", ""))
        return env, Outcome(ask=Ask(message, str(result.get("requestState") or "")))
    content = result.get("content") or []
    text = " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    error = (text.partition(":")[0].strip() or "Error") if result.get("isError") else None
    cause = meta.get(CAUSE_KEY)
    structured = result.get("structuredContent")
    return env, Outcome(error, text, structured, cause=None if cause is None else str(cause))


def _silent(env: Envelope, kind: str) -> dict[str, Any]:
    reply = env.to_json() | {"silent": True, "kind": kind}
    if kind == "list_reply":
        return {
            "tools": [],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {ENVELOPE_KEY: reply},
        }
    return {
        "content": [{"type": "text", "text": SILENT_TEXT}],
        "isError": True,
        "resultType": "complete",
        "_meta": {ENVELOPE_KEY: reply},
    }


# -- the server side ------------------------------------------------------------------------


def mcp_server(name: str, version: str, receiver: Receiver, fields: Any) -> Any:
    """The SDK server of one agent: ``tools/list`` and ``tools/call`` go to ``receiver``;
    ``fields(protocol)`` is the set of descriptor fields ``protocol`` represents."""
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    server: Any = Server(name, version=version)

    async def intercept(ctx: Any, call_next: Any) -> Any:
        method = ctx.method
        if method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        params = dict(ctx.params or {})
        meta = params.get("_meta") if isinstance(params.get("_meta"), Mapping) else {}
        assert isinstance(meta, Mapping)
        token = meta.get("progressToken")

        async def notice(attempt: int) -> None:
            if token is not None:
                with contextlib.suppress(Exception):  # a notice is a courtesy, not a message
                    await ctx.session.send_progress_notification(
                        token, float(attempt), None, "executing", related_request_id=ctx.request_id
                    )

        try:
            if ENVELOPE_KEY not in meta:
                raise ValueError(f"not a protomesh live message: no _meta[{ENVELOPE_KEY!r}]")
            env = Envelope.from_json(meta[ENVELOPE_KEY])
            protocol = arriving(env)
            payload = None if method == "tools/list" else call_of(params, fields(protocol))[1]
            reply_env, reply = await receiver.on_message(protocol, env, payload, notice)
        except ValueError as exc:
            raise MCPError(code=-32602, message=str(exc)) from None
        if reply_env.silent:
            return _silent(reply_env, reply_env.kind)
        # the reply goes back over the link the request came by, in its protocol
        if method == "tools/list":
            field_set = fields(protocol)
            tools = [entry_of(d, field_set) for d in reply]
            return {
                "tools": tools,
                "resultType": "complete",
                "ttlMs": 0,  # every answer depends on the route it travelled: never cached
                "cacheScope": "private",
                "_meta": {ENVELOPE_KEY: reply_env.to_json()},
            }
        return result_of(reply, reply_env)

    server.middleware.append(intercept)
    return server


# -- the sender side ------------------------------------------------------------------------


class McpSender:
    """Sends to one agent's ``/mcp`` endpoint through one SDK client, kept open until
    ``closing`` (:class:`~sim.live.wire.Kept`). ``timeout``: wall seconds a request may
    wait for its answer."""

    def __init__(
        self, url: str, agent: str, spawn: Spawn, closing: anyio.Event, timeout: float
    ) -> None:
        self.url = url
        self.agent = agent
        self.timeout = timeout
        self._client = Kept(self._open, spawn, closing)

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        import httpx2
        import mcp.types as mt
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        from sim import __version__

        async with httpx2.AsyncClient(
            timeout=httpx2.Timeout(self.timeout, connect=5.0), verify=tls()
        ) as http:
            transport = streamable_http_client(self.url, http_client=http)
            info = mt.Implementation(name=f"protomesh-live-{self.agent}", version=__version__)
            async with Client(
                transport,
                mode=REVISION,
                cache=None,
                client_info=info,
                elicitation_callback=_answered_by_the_caller,
            ) as client:
                yield client

    async def _session(self) -> Any:
        return (await self._client.get()).session

    async def warm(self) -> None:
        """The client opened and one ``ping`` answered."""
        await (await self._session()).send_ping()

    async def send(
        self,
        protocol: str,
        env: Envelope,
        payload: Any,
        fields: frozenset[str],
        on_notice: Notice | None,
    ) -> tuple[Envelope, Any]:
        """Send ``payload`` (None: ``list``; a :class:`Call`) and return the reply's
        envelope and payload (descriptors decoded in the reply's protocol, ``protocol``;
        an :class:`Outcome`). Raises :class:`Unreachable` when the hop refuses it."""
        import mcp.types as mt
        from mcp.shared.exceptions import MCPError
        from pydantic import TypeAdapter

        raw: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if on_notice is not None:
                await on_notice(int(done))

        try:
            session = await self._session()
            if payload is None:
                params = mt.PaginatedRequestParams.model_validate({"_meta": request_meta(env)})
                result = await session.send_request(mt.ListToolsRequest(params=params), raw)
            else:
                request = mt.CallToolRequest(
                    params=mt.CallToolRequestParams.model_validate(
                        call_params(payload, env, fields)
                    )
                )
                result = await session.send_request(
                    request, raw, progress_callback=progress if on_notice else None
                )
        except MCPError as exc:
            if _refused(exc):
                raise Unreachable(f"{self.url}: {exc.message}") from None
            raise
        except OSError as exc:
            raise Unreachable(f"{self.url}: {exc}") from None
        except Exception as exc:
            if _transport_failure(exc):
                raise Unreachable(f"{self.url}: {type(exc).__name__}: {exc}") from None
            raise
        meta = result.get("_meta") if isinstance(result.get("_meta"), Mapping) else {}
        assert isinstance(meta, Mapping)
        reply_env = Envelope.from_json(meta.get(ENVELOPE_KEY))
        if reply_env.silent:
            return reply_env, None
        if payload is None:
            tools = result.get("tools") or []
            return reply_env, [descriptor_of(t, fields) for t in tools]
        return outcome_of(result)


async def _answered_by_the_caller(context: Any, params: Any) -> Any:
    """Declares the elicitation capability; never called: approvals come back as
    ``InputRequiredResult`` and the caller answers them itself (manual round trips)."""
    raise RuntimeError("protomesh answers elicitations through the caller, not here")


def _refused(exc: Exception) -> bool:
    text = str(getattr(exc, "message", exc)).lower()
    return any(w in text for w in ("connect", "refused", "reset", "closed", "unreachable"))


def _transport_failure(exc: Exception) -> bool:
    try:
        import httpx2
    except ImportError:  # pragma: no cover - a dependency of the SDK
        return False
    return isinstance(exc, httpx2.TransportError)
