"""What calibration measures from a trace (``sim/calibrate/measure.py``): hand-written
traces with known intervals, and every name or line it cannot read, located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.calibrate.calibration import Source
from sim.calibrate.events import TraceError
from sim.calibrate.measure import Measurements, Names, Quantity, measure
from tests.harness.calibrate_traces import event, hop, write_trace

LINK_PG = Quantity("link", "gw|planner", "MCP+")
LINK_GS = Quantity("link", "gw|server", "MCP")
NO_HOPS = (
    "no hop events: link latencies need traces at level full (send, hop and deliver are "
    "left out at level protocol); every link's latency is kept"
)


def _measured(tmp_path: Path, mesh: Source, events: list[dict[str, object]]) -> Measurements:
    trace = write_trace(tmp_path / "trace.jsonl", events)
    return measure([trace], Names.of(mesh.scenario, "mesh.yaml"))


def _approx(values: list[float]) -> list[float]:
    return [round(v, 9) for v in values]


def test_a_request_s_hops_and_translation(tmp_path: Path, mesh: Source) -> None:
    owner = {"inv": 1, "tool": "lookup"}
    trace = [
        event("send", 1.0, detail={"msg": 0, "kind": "request", "path": [], "to": "server"}),
        hop(1.0, 0, "planner", "gw", "MCP+", **owner),
        event("translate", 1.012, "gw", detail={"msg": 0, "at": "gw", "chain": ["MCP+", "MCP"]}),
        hop(1.015, 0, "gw", "server", "MCP", **owner),
        event("deliver", 1.02, "server", detail={"msg": 0, "kind": "request"}, **owner),
    ]
    got = _measured(tmp_path, mesh, trace).durations
    assert {q: _approx(v) for q, v in got.items()} == {
        LINK_PG: [0.012],
        Quantity("translation", "gw"): [0.003],
        LINK_GS: [0.005],
    }


def test_a_chain_s_delay_is_per_step(tmp_path: Path, mesh: Source) -> None:
    """Two translate lines at one node and instant: one sample, divided by its 3 steps."""
    chain = {"msg": 4, "at": "gw"}
    trace = [
        hop(0.0, 4, "planner", "gw", "MCP+"),
        event("translate", 0.01, "gw", detail={**chain, "chain": ["MCP+", "A", "MCP"]}),
        event("translate", 0.01, "gw", detail={**chain, "chain": ["MCP", "MCP+"]}),
        hop(0.016, 4, "gw", "server", "MCP"),
    ]
    got = _measured(tmp_path, mesh, trace).durations
    assert _approx(got[Quantity("translation", "gw")]) == [0.002]


def test_a_dropped_message_gives_no_sample(tmp_path: Path, mesh: Source) -> None:
    trace = [
        hop(0.0, 7, "planner", "gw", "MCP+"),
        event("drop", 0.01, "gw", detail={"msg": 7, "reason": "node_down"}),
        hop(1.0, 8, "planner", "gw", "MCP+"),
        event("translate", 1.01, "gw", detail={"msg": 8, "at": "gw", "chain": ["MCP+", "MCP"]}),
        event("drop", 1.01, "gw", detail={"msg": 8, "reason": "translation_failed"}),
    ]
    got = _measured(tmp_path, mesh, trace).durations
    assert {q: _approx(v) for q, v in got.items()} == {LINK_PG: [0.01]}


def test_service_time_ends_at_the_response_s_send(tmp_path: Path, mesh: Source) -> None:
    owner = {"inv": 5, "tool": "lookup"}
    response = {"msg": 9, "kind": "response", "path": [], "to": "planner"}
    trace = [
        event("execute", 2.0, "server", detail={"attempt": 1, "waited": 0.0}, **owner),
        event("send", 2.25, "server", detail=response, **owner),
        event("execute", 3.0, "server", detail={"attempt": 2, "waited": 0.0}, **owner),
        event("drop", 3.1, "server", detail={"reason": "node_down", "lost": "executing"}, **owner),
        event("send", 3.5, "server", detail={**response, "msg": 10}, **owner),
    ]
    got = _measured(tmp_path, mesh, trace).durations
    assert got == {Quantity("service", "lookup"): [0.25]}


def test_a_response_that_could_end_two_executions_is_left_out(tmp_path: Path, mesh: Source) -> None:
    owner = {"inv": 5, "tool": "lookup"}
    response = {"msg": 9, "kind": "response", "path": [], "to": "planner"}
    trace = [
        event("execute", 2.0, "server", detail={"attempt": 1}, **owner),
        event("execute", 2.1, "server", detail={"attempt": 2}, **owner),
        event("send", 2.25, "server", detail=response, **owner),
    ]
    got = _measured(tmp_path, mesh, trace)
    assert got.durations == {}
    assert got.ambiguous == 2
    assert "2 service time(s) left out" in " ".join(got.notes())


def test_a_serve_trace_s_service_ends_at_the_reply(tmp_path: Path, mesh: Source) -> None:
    owner = {"wf": "serve", "inv": 0, "tool": "lookup"}
    trace = [
        event("call", 0.5, "client", detail={"target": "server"}, **owner),
        event("validate", 0.5, "client", **owner),
        event("execute", 1.0, "server", detail={"attempt": 1, "waited": 0.0}, **owner),
        event("result", 1.4, "client", detail={"attempt": 1}, **owner),
    ]
    got = _measured(tmp_path, mesh, trace)
    assert {q: _approx(v) for q, v in got.durations.items()} == {
        Quantity("service", "lookup"): [0.4]
    }
    assert got.outcomes["lookup"].executions == 1
    assert got.notes() == [NO_HOPS]  # a serve trace has no messages: no "no send events"


def test_outcomes_are_the_executions_replies(tmp_path: Path, mesh: Source) -> None:
    def attempt(inv: int, n: int, t: float) -> dict[str, object]:
        return event("execute", t, "server", detail={"attempt": n}, inv=inv, tool="lookup")

    def reply(label: str, inv: int, t: float, **detail: object) -> dict[str, object]:
        return event(label, t, detail=detail, inv=inv, tool="lookup")

    trace = [
        attempt(1, 1, 0.0),
        reply("error", 1, 0.5, error="ServiceDown", attempt=1),
        attempt(1, 2, 1.0),
        reply("result", 1, 1.5, attempt=2),
        attempt(2, 1, 2.0),
        reply("error", 2, 32.0, error="ServiceDown", cause="timeout"),  # inferred: not one
        reply("error", 3, 33.0, error="ValidationError", missing=["id"]),  # the caller's
        attempt(4, 1, 34.0),
        reply("error", 4, 34.5, error="NotFound", attempt=1),
        attempt(5, 1, 35.0),
        reply("error", 5, 35.5, error="OutputUnavailable", attempt=1),  # served: a success
        reply("result", 6, 36.0, attempt=1),  # no execution seen: not one
    ]
    seen = _measured(tmp_path, mesh, trace).outcomes["lookup"]
    assert (seen.executions, seen.errors) == (4, {"ServiceDown": 1, "NotFound": 1})


def test_approval_latency_is_timed_from_what_asked(tmp_path: Path, mesh: Source) -> None:
    def at(label: str, t: float, inv: int, **detail: object) -> dict[str, object]:
        return event(label, t, detail=detail, inv=inv, tool="store")

    response = {"msg": 3, "kind": "response"}
    trace = [
        at("call", 1.0, 1, target="server"),
        at("validate", 1.0, 1),
        at("approve", 3.0, 1, reason="requires_approval"),  # 2.0 after validate
        at("error", 4.0, 1, error="ServiceDown", attempt=1),
        at("retry", 4.0, 1, error="ServiceDown", n=1, backoff=0.5),
        at("approve", 6.0, 1),  # 1.5 after the backoff's end
        at("invoke", 10.0, 2, target="server"),
        at("collect", 10.75, 2, slot="id"),  # 0.75 after invoke (SGD)
        at("deny", 11.0, 2),  # 0.25 after the collect
        at("call", 20.0, 3, target="server"),
        at("validate", 20.0, 3),
        event("deliver", 21.0, detail=response, inv=3, tool="store"),  # a live approval request
        at("approve", 21.5, 3),  # 1.5 after the gate's start: the question's round trip counts
        at("call", 30.0, 4, target="server"),
        at("validate", 30.0, 4),
        event("timeout", 32.0, detail={"attempt": 1, "action": "resend"}, inv=4, tool="store"),
        at("approve", 36.0, 4),  # the question was asked twice: no sample
    ]
    got = _measured(tmp_path, mesh, trace)
    assert _approx(got.durations[Quantity("approval")]) == [2.0, 1.5, 0.75, 0.25, 1.5]
    assert (got.approves, got.denies) == (4, 1)


def test_a_protocol_level_trace_says_what_it_cannot_show(tmp_path: Path, mesh: Source) -> None:
    trace = [event("execute", 1.0, "server", detail={"attempt": 1}, inv=1, tool="lookup")]
    notes = _measured(tmp_path, mesh, trace).notes()
    assert notes == [
        NO_HOPS,
        "no send events: the service times of a simulated trace need level full (the "
        "response's send ends the service); every service time is kept",
    ]


def test_replications_in_one_file_are_apart(tmp_path: Path, mesh: Source) -> None:
    trace = [
        hop(0.0, 1, "planner", "gw", "MCP+", rep=0),
        hop(0.001, 1, "planner", "gw", "MCP+", rep=1),
        event(
            "translate", 0.01, "gw", rep=0, detail={"msg": 1, "at": "gw", "chain": ["MCP+", "MCP"]}
        ),
        event(
            "translate", 0.013, "gw", rep=1, detail={"msg": 1, "at": "gw", "chain": ["MCP+", "MCP"]}
        ),
    ]
    got = _measured(tmp_path, mesh, trace).durations
    assert _approx(got[LINK_PG]) == [0.01, 0.012]


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            hop(0.0, 1, "planner", "server", "MCP"),
            "hop over planner-server: no such link in mesh.yaml",
        ),
        (
            hop(0.0, 1, "planner", "gw", "MCP"),
            "hop over planner-gw in MCP: the link carries MCP+ in mesh.yaml",
        ),
        (
            event("hop", 0.0, detail={"msg": 1, "from": "planner", "proto": "MCP+"}),
            "a hop needs detail.from, to and proto",
        ),
        (
            event("translate", 0.0, "gw9", detail={"msg": 1, "at": "gw9"}),
            "translate at agent 'gw9': no such agent in mesh.yaml",
        ),
        (
            event("execute", 0.0, "server9", detail={"attempt": 1}, inv=1, tool="lookup"),
            "execute at agent 'server9': no such agent in mesh.yaml",
        ),
        (
            event("execute", 0.0, "server", detail={"attempt": 1}, inv=1, tool="lokup"),
            "execute of tool 'lokup': no such tool in mesh.yaml",
        ),
        (event("frobnicate", 0.0), "not a trace event: unknown label 'frobnicate'"),
        (
            {k: v for k, v in event("call", 0.0, inv=1).items() if k != "t"},
            "`t` is missing: calibration needs every time",
        ),
        (event("call", "soon", inv=1), 'not a trace event: `t` must be a number (got "soon")'),
        (
            event("hop", 0.0, detail={"msg": "one"}),
            'not a trace event: `detail.msg` must be an integer (got "one")',
        ),
        (
            event("retry", 0.0, inv=1, detail={"backoff": "long"}),
            "not a trace event: Expected `float | null`, got `str` - at `$.detail.backoff`",
        ),
    ],
)
def test_a_line_calibration_cannot_use_is_located(
    tmp_path: Path, mesh: Source, line: dict[str, object], message: str
) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [event("wf_start", 0.0), line])
    with pytest.raises(TraceError) as info:
        measure([trace], Names.of(mesh.scenario, "mesh.yaml"))
    assert str(info.value) == f"{trace}:2: {message}"


def test_time_going_back_is_located(tmp_path: Path, mesh: Source) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [event("wf_start", 2.0), event("wf_start", 1.0)])
    with pytest.raises(TraceError) as info:
        measure([trace], Names.of(mesh.scenario, "mesh.yaml"))
    assert str(info.value) == f"{trace}:2: time goes back (t=1 after t=2): a trace is in time order"


def test_malformed_json_and_a_missing_file_are_located(tmp_path: Path, mesh: Source) -> None:
    names = Names.of(mesh.scenario, "mesh.yaml")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": 0, "seq": 0, "label": "wf_start"}\n\n{"t": 1,\n', encoding="utf-8")
    with pytest.raises(TraceError) as info:
        measure([bad], names)
    assert str(info.value).startswith(f"{bad}:3: malformed JSON: ")
    with pytest.raises(TraceError) as info:
        measure([tmp_path / "nope.jsonl"], names)
    assert str(info.value) == f"{tmp_path / 'nope.jsonl'}: No such file or directory"


def test_a_line_without_seq_is_refused_as_check_refuses_it(tmp_path: Path, mesh: Source) -> None:
    line = {k: v for k, v in event("wf_start", 0.0).items() if k != "seq"}
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(TraceError) as info:
        measure([trace], Names.of(mesh.scenario, "mesh.yaml"))
    assert str(info.value) == f"{trace}:1: not a trace event: `seq` must be an integer (missing)"


def test_a_sample_that_met_an_outage_is_left_out(tmp_path: Path, mesh: Source) -> None:
    """A hop whose receiver was stopped meanwhile measures the outage, not the link."""
    owner = {"inv": 1, "tool": "lookup"}
    trace = [
        hop(1.0, 1, "gw", "server", "MCP", **owner),
        event("deliver", 1.010, "server", detail={"msg": 1, "kind": "request"}, **owner),
        hop(2.0, 2, "gw", "server", "MCP", **owner),
        event("node_down", 2.001, "server"),
        event("node_up", 30.0, "server"),
        event("deliver", 30.010, "server", detail={"msg": 2, "kind": "request"}, **owner),
    ]
    got = _measured(tmp_path, mesh, trace)
    assert _approx(got.durations[LINK_GS]) == [0.01]
    assert got.outaged == 1
    assert "1 sample(s) left out: they met an outage" in " ".join(got.notes())
