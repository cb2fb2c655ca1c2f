"""A2A on the wire (:mod:`sim.live.wire.a2a`): a real uvicorn server on 127.0.0.1 serving
the SDK's routes in front of a scripted receiver (the test double is the *receiver*: the
transport is the ``a2a-sdk`` over real HTTP), and :class:`A2aSender` sending to it. An
ASGI middleware captures the bytes of every exchange, so that what travels is checked on
the wire, not on the models."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio
import pytest

from sim.calculus.mcp import ALL_FIELDS, PROTOCOL_FIELDS
from sim.interop.a2a_decoding import plain
from sim.live.envelope import ENVELOPE_KEY, Envelope
from sim.live.parts import Owner
from sim.live.payload import Ask, Call, Descriptor, Outcome
from sim.live.wire import Notice, Unreachable
from sim.live.wire.a2a import ENDPOINT, A2aSender, Skill, a2a_routes, agent_card

T = TypeVar("T")
A2A = frozenset(PROTOCOL_FIELDS["A2A"])
CARD_PATH = "/.well-known/agent-card.json"
#: what MCP⁺ describes and A2A cannot carry
PLUS_ONLY = ("side_effects", "requires_approval", "failure_modes", "dependencies", "summary")
ROUTE: dict[str, Any] = {
    "path": ["a", "b"], "protocols": ["A2A"], "start": "A2A", "translations": [],
    "router": "dijkstra", "cost": 1.25,
}  # fmt: skip
FULL = Descriptor(
    {
        "name": "search_flights",
        "description": "Search flights between two airports",
        "input_schema": {"type": "object", "properties": {"from": {"type": "string"}}},
        "side_effects": "read",
        "requires_approval": False,
        "failure_modes": ["Timeout"],
        "dependencies": ["airline_api"],
        "summary": "searches flights",
        "annotations": {"readOnlyHint": True},
    },
    ALL_FIELDS,
)
LOST = Descriptor({"name": "book_flight"}, frozenset({"name"}))  # its description lost on the way
MSGS = itertools.count(100)
SILENT_CALLER = "nobody"


def envelope(kind: str, **changes: Any) -> Envelope:
    """A request (or ``list``) arriving at position 1 over an A2A link; a fresh ``msg``."""
    owner = Owner("trip", 3, "search", 7, "search_flights")
    env = Envelope(ROUTE, 1, kind, next(MSGS), owner, 2, 12.5, 42.0, "write", "a")
    return replace(env, **changes)


# -- the receiver's test double ---------------------------------------------------------------


class Scripted:
    """Records what arrives; answers by the tool called (``ok``, ``broken``, ``guarded``,
    ``slow``), a listing with :data:`FULL` and :data:`LOST`, silence for the caller
    :data:`SILENT_CALLER`."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[str, Envelope, Any]] = {}
        self.replied: dict[int, Envelope] = {}
        self.inflight = 0
        self.peak = 0

    async def on_message(
        self, protocol: str, env: Envelope, payload: Any, notice: Notice
    ) -> tuple[Envelope, Any]:
        self.seen[env.msg] = (protocol, env, payload)
        kind = "list_reply" if payload is None else "response"
        if env.caller == SILENT_CALLER:
            quiet = Envelope(
                env.route, env.i, kind, -1, env.owner, env.attempt, env.sent, silent=True
            )
            return quiet, None
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        try:
            reply: Any = [FULL, LOST] if payload is None else await self._outcome(payload)
        finally:
            self.inflight -= 1
        back = Envelope(
            env.route, env.i - 1, kind, env.msg + 1000, env.owner, env.attempt, env.sent + 0.5
        )
        back = replace(back, caller=env.caller)
        self.replied[env.msg] = back
        return back, reply

    async def _outcome(self, call: Call) -> Outcome:
        if call.name == "broken":
            return Outcome("Timeout", "Timeout: the airline did not answer")
        if call.name == "guarded" and call.answer is None:
            return Outcome(ask=Ask("Book the flight?", "seal-1"))
        if call.name == "slow":
            await anyio.sleep(0.1)
        return Outcome(None, "done " + json.dumps(dict(call.arguments), sort_keys=True))


# -- a real server ------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP exchange's bodies, filled as they pass (before the client has them)."""

    path: str
    request: bytearray = field(default_factory=bytearray)
    response: bytearray = field(default_factory=bytearray)

    def request_json(self) -> Any:
        return json.loads(self.request) if self.request else None

    def response_json(self) -> Any:
        return json.loads(self.response)


class Capture:
    """ASGI middleware keeping the raw bodies of every HTTP exchange."""

    def __init__(self, app: Any, exchanges: list[Exchange]) -> None:
        self.app = app
        self.exchanges = exchanges

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ex = Exchange(scope["path"])
        self.exchanges.append(ex)

        async def receiving() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                ex.request.extend(message.get("body", b""))
            return message

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.body":
                ex.response.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, receiving, sending)


@dataclass
class Served:
    base: str
    receiver: Scripted
    exchanges: list[Exchange] = field(default_factory=list)

    def exchange(self, msg: int) -> Exchange:
        """The A2A exchange that carried the request ``msg``."""
        for ex in self.exchanges:
            body = ex.request_json() if ex.path == ENDPOINT else None
            meta = (body or {}).get("params", {}).get("message", {}).get("metadata", {})
            if meta.get(ENVELOPE_KEY, {}).get("msg") == msg:
                return ex
        raise AssertionError(f"no exchange carried message {msg}")

    def cards(self) -> int:
        return sum(ex.path == CARD_PATH for ex in self.exchanges)


def _fields(protocol: str) -> frozenset[str]:
    return frozenset(PROTOCOL_FIELDS[protocol])


@contextlib.contextmanager
def serving(a2a: bool = True) -> Iterator[Served]:
    """uvicorn on 127.0.0.1:0 in a thread, serving the A2A routes of agent ``b`` (which
    hosts two tools) in front of a :class:`Scripted` receiver (no routes: ``a2a`` False)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    sock = socket.create_server(("127.0.0.1", 0), backlog=128)
    served = Served(f"http://127.0.0.1:{sock.getsockname()[1]}", Scripted())
    skills: list[Skill] = [("search_flights", "Search flights between two airports"), "book_flight"]
    carried = frozenset({"A2A"})
    routes = a2a_routes("b", served.base, served.receiver, _fields, carried, skills) if a2a else []
    app = Starlette(routes=routes, middleware=[Middleware(Capture, exchanges=served.exchanges)])
    config = uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():  # uvicorn starts, or its thread ends
        time.sleep(0.005)
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield served
    finally:
        server.should_exit = True
        thread.join(10.0)
        sock.close()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with serving() as s:
        yield s


def sending(base: str, body: Callable[[A2aSender], Awaitable[T]]) -> T:
    """``body`` run with a fresh sender to ``base`` (its clients closed after)."""

    got: list[Any] = []

    async def go() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                closing = anyio.Event()
                try:  # an error is raised once the clients' task group closed
                    got.append(await body(A2aSender(base, tg.start_soon, closing, 10.0)))
                except Exception as exc:
                    got.append(exc)
                closing.set()

    anyio.run(go)
    if isinstance(got[0], Exception):
        raise got[0]
    return got[0]  # type: ignore[no-any-return]


def send(base: str, env: Envelope, payload: Any) -> tuple[Envelope, Any]:
    return sending(base, lambda s: s.send("A2A", env, payload, A2A, None))


# -- round trips ----------------------------------------------------------------------------------


def test_a_list_round_trip_keeps_what_a2a_represents(served: Served) -> None:
    env = envelope("list")
    reply_env, tools = send(served.base, env, None)
    assert served.receiver.seen[env.msg] == ("A2A", env, None)
    assert tools == [FULL.keep(A2A), LOST.keep(A2A)]
    assert [t.known for t in tools] == [A2A, {"name"}]
    assert tools[0].values == {"name": "search_flights", "description": FULL.values["description"]}
    assert reply_env == served.receiver.replied[env.msg]
    wire = served.exchange(env.msg).response_json()["result"]["message"]["parts"][0]["data"]
    assert wire == {
        "tools": [
            {"name": "search_flights", "description": "Search flights between two airports"},
            {"name": "book_flight", "unknown": ["description"]},
        ]
    }


def test_a_call_round_trip_with_a_success(served: Served) -> None:
    arguments = {"from": "GVA", "seats": 2, "ratio": 0.5, "flex": True, "via": None, "legs": [1, 2]}
    env = envelope("request")
    reply_env, outcome = send(served.base, env, Call("ok", arguments))
    protocol, got, call = served.receiver.seen[env.msg]
    assert (protocol, got) == ("A2A", env)
    assert call == Call("ok", arguments)
    assert type(call.arguments["seats"]) is int and type(call.arguments["ratio"]) is float
    assert outcome == Outcome(None, "done " + json.dumps(arguments, sort_keys=True))
    assert reply_env == served.receiver.replied[env.msg]


def test_a_call_round_trip_with_an_error(served: Served) -> None:
    _, outcome = send(served.base, envelope("request"), Call("broken", {}))
    assert outcome == Outcome("Timeout", "Timeout: the airline did not answer")
    assert outcome.is_error


def test_an_approval_request_and_its_answer(served: Served) -> None:
    _, asked = send(served.base, envelope("request"), Call("guarded", {"seat": "12A"}))
    assert asked == Outcome(ask=Ask("Book the flight?", "seal-1"))
    answer = {"action": "accept", "state": "seal-1"}
    env = envelope("request", attempt=3)
    _, outcome = send(served.base, env, Call("guarded", {"seat": "12A"}, answer=answer))
    assert served.receiver.seen[env.msg][2].answer == answer
    assert outcome == Outcome(None, 'done {"seat": "12A"}')


@pytest.mark.parametrize("payload", [None, Call("ok", {"x": 1})])
def test_a_silent_reply_is_no_payload(served: Served, payload: Call | None) -> None:
    env = envelope("list" if payload is None else "request", caller=SILENT_CALLER)
    reply_env, reply = send(served.base, env, payload)
    assert reply_env.silent and reply is None
    assert reply_env.msg == -1 and reply_env.owner == env.owner
    message = served.exchange(env.msg).response_json()["result"]["message"]
    assert message["parts"] == [{"data": {}, "mediaType": "application/json"}]
    assert message["metadata"][ENVELOPE_KEY]["silent"] is True


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"deadline": None, "gate": None, "caller": ""},
        {"owner": Owner(None, None, None, None, None)},
    ],
)
def test_the_envelope_travels_intact_both_ways(served: Served, changes: dict[str, Any]) -> None:
    env = envelope("request", **changes)
    reply_env, _ = send(served.base, env, Call("ok", {}))
    got = served.receiver.seen[env.msg][1]
    assert got == env and got.to_json() == env.to_json()
    assert [type(v) for v in got.owner] == [type(v) for v in env.owner]  # ints stay ints
    assert reply_env == served.receiver.replied[env.msg]
    assert reply_env.to_json() == served.receiver.replied[env.msg].to_json()


def test_twenty_concurrent_sends_share_one_sender_and_one_card(served: Served) -> None:
    cards = served.cards()
    served.receiver.peak = 0

    async def body(sender: A2aSender) -> list[tuple[Envelope, Any]]:
        results: list[tuple[Envelope, Any]] = [(envelope("request"), None)] * 20

        async def one(k: int) -> None:
            env = envelope("request")
            results[k] = (env, await sender.send("A2A", env, Call("slow", {"k": k}), A2A, None))

        async with anyio.create_task_group() as tg:
            for k in range(20):
                tg.start_soon(one, k)
        return results

    results = sending(served.base, body)
    for k, (env, (reply_env, outcome)) in enumerate(results):
        assert outcome == Outcome(None, f'done {{"k": {k}}}')
        assert reply_env == served.receiver.replied[env.msg]
    assert served.receiver.peak > 1  # the receiver held several at once
    assert served.cards() == cards + 1  # the card was resolved once for the sender


# -- the bytes on the wire ------------------------------------------------------------------------


def test_the_wire_carries_no_mcp_plus_field(served: Served) -> None:
    """The descriptors listed carry every MCP⁺ field and the call carries MCP⁺ request
    metadata: A2A's fields project them away before anything is encoded."""
    assert all(FULL.values.get(k) is not None for k in PLUS_ONLY)
    env = envelope("list")
    send(served.base, env, None)
    listed = served.exchange(env.msg)
    call_env = envelope("request")
    plus = {"side_effects": "write", "requires_approval": True}
    send(served.base, call_env, Call("ok", {"x": 1}, plus=plus))
    called = served.exchange(call_env.msg)
    for ex in (listed, called):
        for key in PLUS_ONLY:
            assert key.encode() not in ex.request and key.encode() not in ex.response
        assert b"input_schema" not in ex.response and b"annotations" not in ex.response
    assert served.receiver.seen[call_env.msg][2] == Call("ok", {"x": 1})

    request = listed.request_json()
    assert request["jsonrpc"] == "2.0" and request["method"] == "SendMessage"
    message = request["params"]["message"]
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [{"data": {"method": "tools/list"}, "mediaType": "application/json"}]
    assert Envelope.from_json(plain(message["metadata"][ENVELOPE_KEY])) == env
    call = called.request_json()["params"]["message"]["parts"][0]["data"]
    assert plain(call) == {"method": "tools/call", "name": "ok", "arguments": {"x": 1}}
    reply = listed.response_json()["result"]["message"]
    assert reply["role"] == "ROLE_AGENT" and set(reply) >= {"messageId", "parts", "metadata"}


# -- the agent card --------------------------------------------------------------------------------


def test_the_agent_card_is_served_and_valid(served: Served) -> None:
    import httpx
    from a2a.client import A2ACardResolver
    from a2a.types import AgentCard
    from a2a.utils.proto_utils import validate_proto_required_fields
    from google.protobuf.json_format import ParseDict

    from sim import __version__

    response = httpx.get(served.base + CARD_PATH, timeout=5.0)
    assert response.status_code == 200
    card = ParseDict(response.json(), AgentCard())  # strict: an unknown field raises
    validate_proto_required_fields(card)
    assert card.name == "b" and card.version == __version__
    [interface] = card.supported_interfaces
    assert (interface.url, interface.protocol_binding, interface.protocol_version) == (
        served.base + "/a2a",
        "JSONRPC",
        "1.0",
    )
    assert not card.capabilities.streaming
    assert list(card.default_input_modes) == list(card.default_output_modes) == ["application/json"]
    assert [(s.id, s.name, s.description) for s in card.skills] == [
        ("search_flights", "search_flights", "Search flights between two airports"),
        ("book_flight", "book_flight", "the tool book_flight"),
    ]

    async def resolved() -> Any:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, served.base).get_agent_card()

    assert anyio.run(resolved) == card


def test_an_agent_without_tools_offers_the_relay_skill() -> None:
    from a2a.utils.proto_utils import validate_proto_required_fields

    card = agent_card("gw", "http://127.0.0.1:9/", [])
    validate_proto_required_fields(card)
    assert [s.id for s in card.skills] == ["relay"]
    assert card.supported_interfaces[0].url == "http://127.0.0.1:9/a2a"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_address_nobody_serves_is_unreachable() -> None:
    with pytest.raises(Unreachable, match="agent card"):
        send(f"http://127.0.0.1:{_free_port()}", envelope("list"), None)


def test_a_hop_that_went_away_is_unreachable() -> None:
    """The card resolved and the client open, the process goes: the next message too."""

    async def go() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                closing = anyio.Event()
                with serving() as other:
                    sender = A2aSender(other.base, tg.start_soon, closing, 10.0)
                    _, tools = await sender.send("A2A", envelope("list"), None, A2A, None)
                    assert [t.values["name"] for t in tools] == ["search_flights", "book_flight"]
                with pytest.raises(Unreachable):
                    await sender.send("A2A", envelope("request"), Call("ok", {}), A2A, None)
                closing.set()

    anyio.run(go)


def test_a_server_without_a2a_is_an_error_not_an_outage() -> None:
    """A process that answers but serves no A2A (HTTP 404 for the card) is a mistake of
    the deployment, not a node that is down: a ValueError, not :class:`Unreachable`."""
    with serving(a2a=False) as bare, pytest.raises(ValueError, match="404"):
        send(bare.base, envelope("list"), None)


def test_a_message_without_an_envelope_is_invalid_params(served: Served) -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_data_message
    from a2a.types import Role, SendMessageRequest
    from a2a.utils.errors import InvalidParamsError

    message = new_data_message({"method": "tools/list"}, role=Role.ROLE_USER)
    seen = len(served.receiver.seen)

    async def go() -> None:
        client = await create_client(served.base, ClientConfig(streaming=False))
        async with client:
            with pytest.raises(InvalidParamsError, match=r"no metadata\['protomesh/route'\]"):
                async for _ in client.send_message(SendMessageRequest(message=message)):
                    pass

    anyio.run(go)
    assert len(served.receiver.seen) == seen
    [ex] = [
        ex
        for ex in served.exchanges
        if ex.path == ENDPOINT
        and ex.request_json()["params"]["message"]["messageId"] == message.message_id
    ]
    error = ex.response_json()["error"]
    assert error["code"] == -32602 and "no metadata['protomesh/route']" in error["message"]


def test_a_message_that_came_over_another_protocol_is_refused(served: Served) -> None:
    env = envelope("list", route={**ROUTE, "protocols": ["MCP"]})
    with pytest.raises(ValueError, match="InvalidParamsError: a MCP message at the A2A endpoint"):
        send(served.base, env, None)
    assert env.msg not in served.receiver.seen


def test_struct_numbers_are_read_back_as_json_numbers() -> None:
    assert plain({"a": 1.0, "b": [2.0, 0.5, {"c": -3.0}], "d": True, "e": None}) == {
        "a": 1,
        "b": [2, 0.5, {"c": -3}],
        "d": True,
        "e": None,
    }
    assert type(plain(1.0)) is int and plain(True) is True
