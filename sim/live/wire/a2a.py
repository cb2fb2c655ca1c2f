"""A2A on the wire, through the official ``a2a-sdk`` (1.3: A2A protocol 1.0, the JSON-RPC
binding, non-streaming ``SendMessage``).

Each agent that speaks a protocol on this wire (A2A, or one that declares ``wire: a2a``)
serves the SDK's JSON-RPC endpoint at ``/a2a`` (its
``DefaultRequestHandler`` with an in-memory task store and the executor here) and its
agent card at the well-known path (``/.well-known/agent-card.json``): name the agent's
id, one interface (``<base>/a2a``, ``JSONRPC``, protocol 1.0), no streaming, input and
output modes ``application/json``, one skill per hosted tool (a generic ``relay`` skill
for an agent that hosts none). Each sender resolves the next hop's card once (with the
SDK's ``A2ACardResolver``) and keeps one SDK client over one ``httpx`` client for every
message it sends there.

The encoding (tested on the captured bytes in tests/live/test_wire_a2a.py):

- a request is one ``Message`` (role user) with a single DataPart (media type
  ``application/json``) holding ``{"method": "tools/list"}`` or ``{"method":
  "tools/call", "name", "arguments", "plus"?, "answer"?}``, and the envelope
  (:mod:`sim.live.envelope`) as ``metadata["protomesh/route"]``;
- the reply is one ``Message`` (role agent, the executor's only event: no task is
  created) whose DataPart holds ``{"tools": [descriptor, ...]}`` or ``{"outcome":
  {...}}`` (``{}`` for a silent reply), and the reply's envelope under the same key;
- descriptors, calls and outcomes as :mod:`sim.live.wire.content` writes them, projected
  to A2A's fields (``name`` and ``description`` in the built-in table; what A2A
  represents but the message lost is listed in ``unknown``); a call's ``plus`` keeps
  only what A2A represents (nothing, built in);
- DataParts and metadata are protobuf ``Struct`` values: their numbers are doubles (the
  bytes read ``"seats": 2.0``), and every integral number is read back as an ``int``
  (so an argument ``2.0`` arrives as ``2``; integers beyond 2**53 would lose precision,
  none of protomesh's do); a ``Struct`` is a map, so the order of keys is not kept.

Errors: a request without an envelope, with a malformed one, or whose envelope says it
came over a link of a protocol this endpoint does not carry is refused before the
SDK makes anything of it (the handler's request-context builder decodes every request):
the SDK's ``InvalidParamsError``, i.e. the JSON-RPC error ``-32602`` with the reason as
its message. A ``ValueError`` of the receiver is the same error, raised by the executor
(the SDK then also records a failed task and logs it). The sender raises
:class:`~sim.live.wire.Unreachable` when the hop does not take the message (connection
refused or reset, or any other transport error, for the card or the request) and
``ValueError`` for an A2A error reply, a card it cannot get from a process that answers
(HTTP 404: it serves no A2A, a deployment mistake rather than an outage) or a reply it
cannot read.

No progress notices travel on this wire: ``on_notice`` is never called (the executor
hands the receiver a notice that does nothing).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

import anyio

from sim.interop.a2a_card import BINDING, ENDPOINT, MEDIA, RELAY, SkillEntry
from sim.interop.a2a_card import agent_card as card_of
from sim.interop.a2a_decoding import decoding, plain
from sim.live.envelope import ENVELOPE_KEY, Envelope, arriving, request_meta
from sim.live.payload import Call, Descriptor, Outcome
from sim.live.wire import Kept, Notice, Receiver, Spawn, Unreachable, tls
from sim.live.wire.content import (
    call_from_json,
    call_json,
    descriptor_from_json,
    descriptor_json,
    outcome_from_json,
    outcome_json,
)

__all__ = [
    "ENDPOINT",
    "A2aSender",
    "Skill",
    "a2a_routes",
    "agent_card",
    "reply_message",
    "reply_of",
    "request_message",
    "request_of",
]

LIST, CALL = "tools/list", "tools/call"
DECODED = "protomesh/request"
"""The key of a request's decoded envelope and payload in the SDK's call context."""
Skill = str | tuple[str, str]
"""A hosted tool as a skill of the card: its name, or its name and description."""


# -- the encoding ------------------------------------------------------------------------


def _message(role: Any, content: Mapping[str, Any], env: Envelope, context_id: str = "") -> Any:
    from a2a.helpers import new_data_part
    from a2a.types import Message

    message = Message(message_id=uuid.uuid4().hex, role=role, context_id=context_id)
    message.parts.append(new_data_part(dict(content), media_type=MEDIA))
    message.metadata.update(request_meta(env))
    return message


def _content(message: Any) -> tuple[Envelope, dict[str, Any]]:
    """The envelope and the DataPart's content of an A2A ``Message`` (ValueError)."""
    from google.protobuf.json_format import MessageToDict

    meta = plain(MessageToDict(message.metadata)) if message.HasField("metadata") else {}
    if ENVELOPE_KEY not in meta:
        raise ValueError(f"not a protomesh live message: no metadata[{ENVELOPE_KEY!r}]")
    env = Envelope.from_json(meta[ENVELOPE_KEY])
    data = [plain(MessageToDict(p.data)) for p in message.parts if p.HasField("data")]
    if len(data) != 1 or not isinstance(data[0], Mapping):
        raise ValueError(f"a protomesh message has one DataPart holding an object, not {data}")
    return env, dict(data[0])


def request_message(env: Envelope, payload: Any, fields: frozenset[str]) -> Any:
    """The A2A ``Message`` of a request (``payload`` None: ``tools/list``; a :class:`Call`)
    in a protocol that represents ``fields``."""
    from a2a.types import Role

    if payload is None:
        content: dict[str, Any] = {"method": LIST}
    else:
        call: Call = payload
        content = {"method": CALL, **call_json(call.keep(fields))}
    return _message(Role.ROLE_USER, content, env)


def request_of(message: Any, carried: frozenset[str]) -> tuple[Envelope, Any]:
    """The envelope and payload (None for ``tools/list``, a :class:`Call`) of a request
    that arrived at the A2A endpoint, which carries the protocols ``carried``
    (ValueError when it is not one of theirs)."""
    env, content = _content(message)
    protocol = arriving(env)
    if protocol not in carried:
        raise ValueError(f"a {protocol} message at the {'/'.join(sorted(carried))} endpoint")
    method = content.get("method")
    if method == LIST:
        return env, None
    if method != CALL:
        raise ValueError(f"unknown method {method!r} (tools/list or tools/call)")
    try:
        return env, call_from_json(content)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a malformed tools/call: {exc!r}") from None


def reply_message(env: Envelope, reply: Any, fields: frozenset[str], context_id: str = "") -> Any:
    """The A2A ``Message`` of a reply: descriptors (a list) or an :class:`Outcome`."""
    from a2a.types import Role

    content: dict[str, Any] = {}
    if env.silent:
        pass
    elif isinstance(reply, Outcome):
        content = {"outcome": outcome_json(reply)}
    else:
        descriptors: Iterable[Descriptor] = reply
        content = {"tools": [descriptor_json(d, fields) for d in descriptors]}
    return _message(Role.ROLE_AGENT, content, env, context_id)


def reply_of(message: Any, listing: bool, fields: frozenset[str]) -> tuple[Envelope, Any]:
    """The envelope and payload of a reply (descriptors for a ``listing``, else an
    :class:`Outcome`; None when silent). ValueError when malformed."""
    env, content = _content(message)
    if env.silent:
        return env, None
    try:
        if listing:
            return env, [descriptor_from_json(d, fields) for d in content.get("tools") or ()]
        return env, outcome_from_json(content.get("outcome") or {})
    except (AttributeError, KeyError, TypeError) as exc:
        raise ValueError(f"a malformed A2A reply: {exc!r}") from None


# -- the server side ------------------------------------------------------------------------


def agent_card(agent: str, base_url: str, skills: Iterable[Skill]) -> Any:
    """The agent card of ``agent`` served at ``base_url`` (built by
    :func:`sim.interop.a2a_card.agent_card`): a skill per hosted tool, else ``relay``."""
    entries = [(s, f"the tool {s}") if isinstance(s, str) else s for s in skills]
    listed = [SkillEntry(name, name, text or name, ("tool",)) for name, text in entries]
    return card_of(agent, base_url, listed or [RELAY], description=f"protomesh live agent {agent}")


def a2a_routes(
    agent: str,
    base_url: str,
    receiver: Receiver,
    fields: Callable[[str], frozenset[str]],
    carried: frozenset[str],
    skills: Iterable[Skill] = (),
) -> list[Any]:
    """The Starlette routes of ``agent``'s A2A side: the SDK's JSON-RPC endpoint at
    ``/a2a`` handing the messages of the protocols ``carried`` to ``receiver`` and the
    agent card at the well-known path. ``fields(protocol)``: the descriptor fields a
    protocol represents; ``skills``: the hosted tools (names, or names and descriptions)."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH

    card = agent_card(agent, base_url, skills)
    handler = DefaultRequestHandler(
        agent_executor=_executor(receiver, fields, carried),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        request_context_builder=decoding(DECODED, lambda message, _: request_of(message, carried)),
    )
    return [
        *create_jsonrpc_routes(handler, ENDPOINT),
        *create_agent_card_routes(card, card_url=AGENT_CARD_WELL_KNOWN_PATH),
    ]


def _executor(
    receiver: Receiver, fields: Callable[[str], frozenset[str]], carried: frozenset[str]
) -> Any:
    """The SDK ``AgentExecutor`` handing each message to ``receiver``."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError

    async def notice(attempt: int) -> None:
        """No notice travels on this wire."""

    class Executor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            try:
                decoded = context.call_context.state.get(DECODED)
                if decoded is None:
                    if context.message is None:
                        raise ValueError("a request without a message")
                    decoded = request_of(context.message, carried)
                env, payload = decoded
                protocol = arriving(env)  # one of ``carried``: request_of refused the others
                reply_env, reply = await receiver.on_message(protocol, env, payload, notice)
            except ValueError as exc:
                raise InvalidParamsError(message=str(exc)) from None
            out = reply_message(reply_env, reply, fields(protocol), context.context_id or "")
            await event_queue.enqueue_event(out)

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise UnsupportedOperationError(message="a protomesh message cannot be cancelled")

    return Executor()


# -- the sender side ------------------------------------------------------------------------


class A2aSender:
    """Sends to one agent's A2A endpoint: its card resolved once, then one SDK client
    (non-streaming, JSON-RPC) over one ``httpx`` client, both kept open until ``closing``
    (:class:`~sim.live.wire.Kept`; a failed opening is tried again on the next send).
    ``timeout``: wall seconds a request may wait for its reply."""

    def __init__(self, base: str, spawn: Spawn, closing: anyio.Event, timeout: float) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout
        self._kept = Kept(self._open, spawn, closing)

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        import httpx
        from a2a.client import A2ACardResolver, A2AClientError, ClientConfig, ClientFactory

        async with httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout, connect=5.0), verify=tls()
        ) as http:
            try:
                card = await A2ACardResolver(http, self.base).get_agent_card()
            except A2AClientError as exc:
                if isinstance(exc.__cause__, httpx.TransportError):
                    raise Unreachable(f"{self.base}: {exc.message}") from None
                raise ValueError(f"{self.base}: {exc.message}") from None
            config = ClientConfig(
                streaming=False,
                httpx_client=http,
                supported_protocol_bindings=[BINDING],
                accepted_output_modes=[MEDIA],
            )
            async with ClientFactory(config).create(card) as client:
                yield client

    async def _connect(self) -> Any:
        """The SDK client (the card fetched on first use; again after a failure)."""
        return await self._kept.get()

    async def warm(self) -> None:
        """The card fetched and the client opened."""
        await self._connect()

    async def send(
        self,
        protocol: str,
        env: Envelope,
        payload: Any,
        fields: frozenset[str],
        on_notice: Notice | None,
    ) -> tuple[Envelope, Any]:
        """Send ``payload`` (None: ``tools/list``; a :class:`Call`) and return the reply's
        envelope and payload (descriptors decoded in ``protocol``'s ``fields``; an
        :class:`Outcome`; None for a silent reply). ``on_notice`` is never called.
        Raises :class:`Unreachable` when the hop does not take the message."""
        import httpx
        from a2a.types import SendMessageRequest
        from a2a.utils.errors import A2AError

        client = await self._connect()
        request = SendMessageRequest(message=request_message(env, payload, fields))
        response: Any = None
        try:
            async with contextlib.aclosing(client.send_message(request)) as events:
                async for event in events:
                    response = event
                    break
        except A2AError as exc:
            if isinstance(exc.__cause__, httpx.TransportError):
                raise Unreachable(f"{self.base}: {type(exc.__cause__).__name__}: {exc}") from None
            code = type(exc).__name__
            raise ValueError(f"{self.base}{ENDPOINT}: {code}: {exc.message}") from None
        except httpx.TransportError as exc:
            raise Unreachable(f"{self.base}: {type(exc).__name__}: {exc}") from None
        return reply_of(_reply(response, self.base), payload is None, fields)


def _reply(response: Any, base: str) -> Any:
    """The reply ``Message`` of a ``StreamResponse``: the message, or a task's status
    message (else its last artifact's parts, with the task's metadata)."""
    from a2a.types import Message

    if response is not None and response.HasField("message"):
        return response.message
    if response is not None and response.HasField("task"):
        task = response.task
        if task.status.HasField("message") and task.status.message.parts:
            return task.status.message
        if task.artifacts:
            artifact = task.artifacts[-1]
            out = Message(parts=artifact.parts)
            held = ENVELOPE_KEY in artifact.metadata
            out.metadata.CopyFrom(artifact.metadata if held else task.metadata)
            return out
    raise ValueError(f"{base}{ENDPOINT}: a reply without a message")
