"""A trace as spans (sim.otel.spans, sim.otel.context): one trace per instance, a span per
invocation, hops and translations as children inside their parent, approvals, denials,
retries and drops as events, times from detail.wall or the epoch, a traceparent's trace."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.otel.context import TraceParent, child_of, parse_traceparent
from sim.otel.spans import Span, SpanError, trace_spans, wall_ns
from sim.scenario.model import BUILTIN_PROTOCOLS, ProtocolSpec

EPOCH = 1_765_000_000 * 10**9
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def line(seq: int, t: float, label: str, inv: int | None = 0, **detail: Any) -> dict[str, Any]:
    """A line of instance ``book``/0, task ``b`` (``inv`` None: an instance's own line)."""
    scoped = inv is not None or label == "skip"
    return {
        "t": t, "seq": seq, "rep": 0, "label": label, "agent": "planner", "wf": "book",
        "inst": 0, "task": "b" if scoped else None, "inv": inv,
        "tool": "book_train" if scoped else None, "proto": "MCP+" if inv is not None else None,
        "detail": detail, "_line": seq + 1,
    }  # fmt: skip


def booking_lines() -> list[dict[str, Any]]:
    """One instance: a call approved, a message that hops twice (translated on the way)
    and is dropped once, a retry, a second approval, a result; a denied second call."""
    return [
        line(0, 0.0, "wf_start", None),
        line(1, 0.5, "call", target="tickets"),
        line(2, 0.5, "validate"),
        line(3, 1.0, "approve", reason="requires_approval"),
        line(4, 1.0, "send", msg=7, kind="request", path=["planner", "gw1", "tickets"], to="t"),
        line(5, 1.0, "hop", msg=7, **{"from": "planner", "proto": "MCP+", "to": "gw1"}),
        line(
            6,
            1.25,
            "translate",
            msg=7,
            at="gw1",
            chain=["MCP+", "MCP"],
            dropped=["summary"],
            from_proto="MCP+",
            kind="lossy",
            to_proto="MCP",
        ),
        line(7, 1.5, "hop", msg=7, **{"from": "gw1", "proto": "MCP", "to": "tickets"}),
        line(8, 2.0, "drop", msg=7, reason="link_down"),
        line(9, 3.0, "timeout", attempt=1, after=2.0, executed=False, action="resend"),
        line(10, 3.5, "retry", error="ServiceDown", n=1, backoff=0.5),
        line(11, 4.0, "approve", reason="requires_approval"),
        line(12, 4.5, "execute", attempt=2, waited=0.0, approved=True),
        line(13, 5.0, "result", attempt=2),
        line(14, 5.0, "call", inv=1, target="tickets"),
        line(15, 6.0, "deny", inv=1, reason="requires_approval"),
        line(16, 6.0, "wf_end", None, status="cancelled", latency=6.0, reason="denied"),
    ]


@pytest.fixture
def booking() -> list[dict[str, Any]]:
    """:func:`booking_lines`, fresh for each test."""
    return booking_lines()


#: the built-in protocols' wires, as a scenario's ``wires()`` gives them
WIRES = {name: ProtocolSpec(name=name).transport() for name in BUILTIN_PROTOCOLS}


def spans(lines: list[dict[str, Any]], epoch: int | None = EPOCH) -> list[Span]:
    traced = trace_spans(
        lines, scenario="s", router="dijkstra", epoch_ns=epoch, source="t", wires=WIRES
    )
    return traced.spans


def by_name(found: list[Span]) -> dict[str, Span]:
    return {s.name: s for s in found}


def test_an_instance_is_one_trace_of_nested_spans(booking: list[dict[str, Any]]) -> None:
    found = by_name(spans(booking))
    assert set(found) == {
        "workflow book",
        "tools/call book_train",
        "hop planner->gw1",
        "translate MCP+->MCP",
        "hop gw1->tickets",
    }  # fmt: skip  (the second call has the same name: one entry)
    root = found["workflow book"]
    assert len({s.trace_id for s in spans(booking)}) == 1
    assert root.parent_id is None and root.status == ("error", "denied")
    assert (root.start_ns, root.end_ns) == (EPOCH, EPOCH + 6 * 10**9)
    call = [s for s in spans(booking) if s.name == "tools/call book_train"]
    assert [c.parent_id for c in call] == [root.span_id, root.span_id]
    first, denied = call
    assert (first.start_ns, first.end_ns) == (EPOCH + 500_000_000, EPOCH + 5 * 10**9)
    assert first.status == ("ok", "") and denied.status == ("error", "deny: requires_approval")
    assert first.attributes["mcp.method.name"] == "tools/call"
    assert first.attributes["gen_ai.tool.name"] == "book_train"
    assert first.attributes["protomesh.target"] == "tickets"
    hop = found["hop planner->gw1"]
    assert hop.parent_id == first.span_id
    assert (hop.start_ns, hop.end_ns) == (EPOCH + 10**9, EPOCH + 1_250_000_000)  # to translate
    tr = found["translate MCP+->MCP"]
    assert tr.attributes["protomesh.dropped"] == ["summary"]
    assert tr.attributes["protomesh.message_kind"] == "request"
    last = found["hop gw1->tickets"]
    assert last.end_ns == EPOCH + 2 * 10**9  # the drop ends it


def test_approvals_denials_retries_and_drops_are_events(booking: list[dict[str, Any]]) -> None:
    first, denied = [s for s in spans(booking) if s.name == "tools/call book_train"]
    names = [e.name for e in first.events]
    assert names == ["call", "validate", "approve", "drop", "timeout", "retry", "approve",
                     "execute", "result"]  # fmt: skip
    retry = first.events[5]
    assert retry.time_ns == EPOCH + 3_500_000_000
    assert retry.attributes == {
        "protomesh.agent": "planner", "protomesh.error": "ServiceDown", "protomesh.n": 1,
        "protomesh.backoff": 0.5, "protomesh.protocol": "MCP+",
    }  # fmt: skip
    assert first.events[3].attributes["protomesh.reason"] == "link_down"
    assert [e.name for e in denied.events] == ["call", "deny"]


def test_times_from_wall_when_every_line_has_it(booking: list[dict[str, Any]]) -> None:
    for x in booking:
        x["detail"] = {**x["detail"], "wall": f"2026-12-06T21:14:{3 + x['t']:09.6f}Z"}
    root = by_name(spans(booking, epoch=None))["workflow book"]
    assert root.start_ns == wall_ns("2026-12-06T21:14:03.000000Z")
    assert root.end_ns - root.start_ns == 6 * 10**9
    assert wall_ns("1970-01-01T00:00:01.000002Z") == 1_000_002_000
    booking[4]["detail"].pop("wall")
    with pytest.raises(SpanError, match=r"^t:5: no detail.wall \(not a live trace\): give --epoch"):
        spans(booking, epoch=None)
    booking[4]["detail"]["wall"] = "yesterday"
    with pytest.raises(SpanError, match=r"^t:5: detail.wall: Invalid isoformat"):
        spans(booking, epoch=None)


def test_a_time_outside_otlp_s_range_is_an_error_at_its_line(
    booking: list[dict[str, Any]],
) -> None:
    """OTLP times are unsigned 64-bit nanoseconds (up to 2554-07-21): `--epoch 1e300` (or
    1e11) made the protobuf encoder raise `ValueError: Value out of range` from inside the
    exporter, a traceback; a time there is now the line's error, as a bad wall is."""
    top = 2**64 - 1
    assert spans(booking, epoch=top - 6 * 10**9)  # the last line at 6 s still fits
    with pytest.raises(SpanError, match=r"^t:2: t = 0.5 s after --epoch is beyond OTLP's"):
        spans(booking, epoch=top)
    with pytest.raises(SpanError, match=r"^t:1: t = 0 s after --epoch is beyond OTLP's"):
        spans(booking, epoch=10**300)
    for x in booking:
        x["detail"] = {**x["detail"], "wall": "9999-12-31T23:59:59.000000Z"}
    with pytest.raises(SpanError, match=r"^t:1: detail.wall: .* beyond OTLP's"):
        spans(booking, epoch=None)
    for x in booking:
        x["detail"] = {**x["detail"], "wall": "1969-12-31T23:59:59.000000Z"}
    with pytest.raises(SpanError, match=r"^t:1: detail.wall: .* before 1970"):
        spans(booking, epoch=None)


def test_a_traceparent_puts_its_request_in_its_trace(booking: list[dict[str, Any]]) -> None:
    booking[1]["detail"]["traceparent"] = PARENT
    found = spans(booking)
    given_trace = int(PARENT.split("-")[1], 16)
    first = next(
        s for s in found if s.name == "tools/call book_train" and s.trace_id == given_trace
    )
    assert first.parent_id == int(PARENT.split("-")[2], 16)
    assert first.attributes["protomesh.traceparent"] == PARENT
    children = [s for s in found if s.parent_id == first.span_id]
    assert len(children) == 3 and {s.trace_id for s in children} == {given_trace}
    root = by_name(found)["workflow book"]
    assert root.trace_id != given_trace  # the rest of the instance stays in its own trace


@pytest.mark.parametrize(
    "text",
    [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # zero parent
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # version ff
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  # upper case
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  # 00 with more
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  # short
    ],
)
def test_an_invalid_traceparent_is_ignored(text: str) -> None:
    assert parse_traceparent(text) is None


def test_a_traceparent_read_and_passed_on() -> None:
    parent = parse_traceparent(PARENT)
    assert parent == TraceParent(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, 1)
    assert parent.text == PARENT
    assert parse_traceparent("01-" + PARENT[3:] + "-future") == parent  # a later version
    hop = child_of(parent, "gw1")
    assert (hop.trace_id, hop.flags) == (parent.trace_id, 1) and hop.parent_id != parent.parent_id
    assert child_of(parent, "gw1") == hop and child_of(parent, "gw2") != hop


@settings(max_examples=60, deadline=None)
@given(
    cut=st.integers(min_value=1, max_value=17),
    epoch=st.integers(min_value=0, max_value=2**62),
    parented=st.booleans(),
)
def test_every_child_lies_within_its_parent(cut: int, epoch: int, parented: bool) -> None:
    lines = booking_lines()[:cut]
    if parented and cut > 1:
        lines[1]["detail"]["traceparent"] = PARENT
    found = spans(lines, epoch)
    ids = Counter((s.trace_id, s.span_id) for s in found)
    assert max(ids.values()) == 1  # unique
    own = {(s.trace_id, s.span_id): s for s in found}
    for s in found:
        assert s.start_ns <= s.end_ns
        for e in s.events:
            assert s.start_ns <= e.time_ns <= s.end_ns
        parent = own.get((s.trace_id, s.parent_id)) if s.parent_id is not None else None
        if parent is not None:
            assert parent.start_ns <= s.start_ns <= s.end_ns <= parent.end_ns
        elif s.parent_id is not None:  # only a traceparent's span has a parent elsewhere
            assert s.parent_id == int(PARENT.split("-")[2], 16)


@given(
    trace_id=st.integers(min_value=1, max_value=2**128 - 1),
    parent_id=st.integers(min_value=1, max_value=2**64 - 1),
    flags=st.integers(min_value=0, max_value=255),
)
def test_a_traceparent_reads_back_what_it_writes(trace_id: int, parent_id: int, flags: int) -> None:
    context = TraceParent(trace_id, parent_id, flags)
    assert parse_traceparent(context.text) == context
    assert parse_traceparent(context.text.upper()) is None or context.text == context.text.upper()
