"""The MCP wire: the encoding byte for byte, and real SDK exchanges over HTTP on
127.0.0.1 (a real uvicorn server with the agent's SDK server, a real SDK client)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from sim.calculus.mcp import ALL_FIELDS, MCP_PLUS_META, PROTOCOL_FIELDS
from sim.live.envelope import ENVELOPE_KEY, Envelope
from sim.live.parts import Owner
from sim.live.payload import Ask, Call, Descriptor, Outcome
from sim.live.wire import Unreachable
from sim.live.wire.mcp import (
    McpSender,
    call_of,
    call_params,
    descriptor_of,
    entry_of,
    mcp_server,
    outcome_of,
    result_of,
)

MCP, PLUS = PROTOCOL_FIELDS["MCP"], PROTOCOL_FIELDS["MCP+"]
TRUTH = Descriptor(
    {"name": "book", "description": "Books.", "input_schema": {"type": "object", "required": ["x"]},
     "side_effects": "write", "requires_approval": True, "annotations": {"readOnlyHint": False}},
    ALL_FIELDS,
)  # fmt: skip
ROUTE = {"path": ["a", "b"], "protocols": ["MCP+"], "start": "MCP+", "translations": []}


def envelope(kind: str = "request", i: int = 1) -> Envelope:
    return Envelope(ROUTE, i, kind, 5, Owner("w", 1, "t", 2, "book"), 1, 0.5, caller="a")


def test_an_mcp_plus_entry_carries_the_metadata_and_mcp_does_not() -> None:
    plus = entry_of(TRUTH, PLUS)
    assert plus["_meta"][MCP_PLUS_META] == {"side_effects": "write", "requires_approval": True}
    plain = entry_of(TRUTH.keep(MCP), MCP)
    assert plain == {
        "name": "book",
        "description": "Books.",
        "inputSchema": {"type": "object", "required": ["x"]},
        "annotations": {"readOnlyHint": False},
    }
    assert descriptor_of(plus, PLUS) == TRUTH.keep(PLUS)
    assert descriptor_of(plain, MCP) == TRUTH.keep(MCP)


def test_a_protocol_on_this_wire_carries_the_metadata_its_fields_name() -> None:
    """A user protocol declaring ``wire: mcp`` and only requires_approval of MCP⁺'s
    metadata: its entries and calls carry that, and a sender cannot slip it more."""
    mine = MCP | {"requires_approval"}
    entry = entry_of(TRUTH, mine)
    assert entry["_meta"][MCP_PLUS_META] == {"requires_approval": True}
    assert descriptor_of(entry, mine) == TRUTH.keep(mine)
    assert descriptor_of(entry_of(TRUTH, PLUS), mine) == TRUTH.keep(mine)
    call = Call("book", {}, {"requires_approval": True, "side_effects": "write"})
    params = call_params(call, envelope(), mine)
    assert params["_meta"][MCP_PLUS_META] == {"requires_approval": True}
    _, back = call_of(call_params(call, envelope(), PLUS), mine)
    assert back.plus == {"requires_approval": True}


def test_what_a_message_lost_upstream_is_marked_unknown() -> None:
    after_a2a = TRUTH.keep(PROTOCOL_FIELDS["A2A"])
    entry = entry_of(after_a2a, MCP)
    assert entry["inputSchema"] == {"type": "object"}  # MCP requires one
    assert entry["_meta"] == {"protomesh/unknown": ["annotations", "input_schema"]}
    back = descriptor_of(entry, MCP)
    assert back.known == frozenset({"name", "description"})
    assert "input_schema" not in back.values


def test_a_call_and_its_answer_round_trip() -> None:
    call = Call("book", {"x": 1}, {"requires_approval": True}, {"action": "accept", "state": "s"})
    params = call_params(call, envelope(), PLUS)
    assert params["_meta"][MCP_PLUS_META] == {"requires_approval": True}
    assert params["inputResponses"] == {"approval": {"action": "accept"}}
    assert params["requestState"] == "s"
    env, back = call_of(params, PLUS)
    assert back == call and env == envelope()
    plain = call_params(call, envelope(), MCP)
    assert MCP_PLUS_META not in plain["_meta"]
    with pytest.raises(ValueError, match="not a protomesh live message"):
        call_of({"name": "book", "arguments": {}}, MCP)


def test_outcomes_round_trip() -> None:
    for outcome in (
        Outcome(None, "fine"),
        Outcome("SoldOut", "SoldOut: simulated error of book (probability 1)"),
        Outcome(ask=Ask("Approve book?", "sealed")),
    ):
        env, back = outcome_of(result_of(outcome, envelope("response", 0)))
        assert back == outcome and env.kind == "response"


class Echo:
    """A receiver that answers from what it got (a stand-in for the node behind the
    wire, not for the wire): a list gets TRUTH, a call its outcome."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Envelope, Any]] = []

    async def on_message(self, protocol: str, env: Envelope, payload: Any, notice: Any) -> Any:
        self.seen.append((protocol, env, payload))
        reply = Envelope(env.route, env.i - 1, "list_reply" if payload is None else "response",
                         99, env.owner, env.attempt, 1.0)  # fmt: skip
        if payload is None:
            return reply, [TRUTH.keep(PROTOCOL_FIELDS[protocol])]
        await notice(env.attempt)
        if payload.name == "quiet":
            return Envelope(env.route, env.i, "response", -1, env.owner, 1, 1.0, silent=True), None
        return reply, Outcome(None, f"ok {payload.arguments}")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Echo]]:
    import uvicorn

    echo = Echo()
    server = mcp_server("b", "0", echo, lambda p: PROTOCOL_FIELDS[p])
    app = server.streamable_http_app(host="127.0.0.1", streamable_http_path="/mcp")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="error", lifespan="on")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not runner.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", echo
    runner.should_exit = True
    thread.join(5)


def exchange(url: str, payload: Any, protocol: str = "MCP+") -> tuple[Envelope, Any, list[int]]:
    notices: list[int] = []

    async def noted(attempt: int) -> None:
        notices.append(attempt)

    got: list[Any] = []

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            closing = anyio.Event()
            sender = McpSender(url, "a", tg.start_soon, closing, 10.0)
            try:
                fields = PROTOCOL_FIELDS[protocol]
                got.append(await sender.send(protocol, envelope(), payload, fields, noted))
            except Exception as exc:  # raised once the clients' task group is closed
                got.append(exc)
            finally:
                closing.set()

    anyio.run(go)
    if isinstance(got[0], Exception):
        raise got[0]
    env, reply = got[0]
    return env, reply, notices


def test_a_list_goes_through_the_sdk_and_comes_back_decoded(served: tuple[str, Echo]) -> None:
    url, echo = served
    env, tools, _ = exchange(url, None)
    assert env.kind == "list_reply" and env.msg == 99
    assert tools == [TRUTH.keep(PLUS)]
    protocol, got, payload = echo.seen[-1]
    assert (protocol, got.msg, payload) == ("MCP+", 5, None)


def test_a_call_its_notice_and_its_outcome(served: tuple[str, Echo]) -> None:
    url, echo = served
    call = Call("book", {"x": 1}, {"requires_approval": True})
    _env, outcome, notices = exchange(url, call)
    assert outcome == Outcome(None, "ok {'x': 1}")
    assert notices == [1]  # the progress notification, forwarded to the sender
    assert echo.seen[-1][2] == call


def test_a_silent_reply_is_no_reply(served: tuple[str, Echo]) -> None:
    env, reply, _ = exchange(served[0], Call("quiet", {}))
    assert env.silent and reply is None


def test_a_port_nobody_serves_is_unreachable() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(Unreachable):
        exchange(f"http://127.0.0.1:{port}/mcp", None)


def test_a_request_without_an_envelope_is_an_mcp_error(served: tuple[str, Echo]) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    failed: list[Exception] = []

    async def go() -> None:
        async with Client(served[0], mode="2026-07-28", cache=None) as client:
            try:
                await client.session.call_tool("book", {}, allow_input_required=True)
            except MCPError as exc:
                failed.append(exc)

    anyio.run(go)
    assert [type(e) for e in failed] == [MCPError]
    assert "not a protomesh live message: no _meta['protomesh/route']" in str(failed[0])
    assert ENVELOPE_KEY == "protomesh/route"
