"""SGD intents as engine invocations, on a tiny mesh: the missing slots collected, then
the confirmation gate; retries through the gate, deterministic."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from sim.scenario import parse_scenario
from tests.harness.engine_runs import (
    Event,
    by_inv,
    run,
)

SGD_MESH = (Path(__file__).parents[1] / "fixtures" / "scenarios" / "sgd_reserve.yaml").read_text()


PROTOCOL = ("invoke", "call", "collect", "validate", "approve", "deny", "execute", "result")


def test_sgd_invocation_collects_the_missing_slots_then_confirms(tmp_path: Path) -> None:
    from sim.conformance.checks import check_trace

    scenario, _ = parse_scenario(textwrap.dedent(SGD_MESH))
    events, m = run(tmp_path, SGD_MESH)
    (evs,) = [v for v in by_inv(events).values() if v[0]["label"] == "invoke"]
    proto = [e for e in evs if e["label"] in PROTOCOL]
    assert [e["label"] for e in proto] == [
        "invoke", "collect", "collect", "collect", "approve", "execute", "result",
    ]  # fmt: skip
    assert [e["detail"]["slot"] for e in proto if e["label"] == "collect"] == [
        "city", "date", "party",
    ]  # fmt: skip
    # each answer takes the approval latency (1.0 s), and so does the confirmation
    t0 = proto[0]["t"]
    assert [round(e["t"] - t0, 6) for e in proto[:5]] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert all(e["proto"] == "SGD" for e in proto if e["label"] != "execute")
    assert m["writes_without_approval"] == 0
    assert check_trace(events, scenario).ok

    def lts_of(mutated: list[Event]) -> Any:
        return check_trace(mutated, scenario, ["lts"]).verdict("lts")

    # dropping the collect of a missing slot still passes lts: the sgd dialect lets any
    # in-order subset of the required slots be collected (the caller's args may bind them)
    date = next(e for e in events if e["label"] == "collect" and e["detail"]["slot"] == "date")
    assert lts_of([e for e in events if e is not date]).ok
    # out of order, or a validate (the mcp dialect's τ) in an SGD invocation, fails
    first = events.index(proto[1])
    swapped = [*events[:first], proto[2], proto[1], *events[first + 2 :]]
    assert events[first + 1] is proto[2]
    out_of_order = lts_of(swapped)
    assert not out_of_order.ok and "collect(city)" in out_of_order.message
    validate = {**proto[3], "label": "validate", "detail": {}}
    at = events.index(proto[3]) + 1
    bad = lts_of([*events[:at], validate, *events[at:]])
    assert not bad.ok and "validate" in bad.message, bad.message
    # and an SGD invocation traced as call is an MCP-dialect run: collect is not in it
    as_call = [{**e, "label": "call"} if e is proto[0] else e for e in events]
    as_mcp = lts_of(as_call)
    assert not as_mcp.ok and "collect" in as_mcp.message, as_mcp.message


def test_sgd_invocations_retry_through_the_gate_and_are_deterministic(tmp_path: Path) -> None:
    from sim.conformance.checks import check_trace

    text = (
        SGD_MESH.replace("arrivals: {times: [0]}", "arrivals: {times: [0, 10, 20, 30, 40, 50]}")
        .replace(
            "    service_time: {dist: constant, value: 0.1}",
            "    failure_modes: [{error: ExecutionError, recovery: {retry: 2}}]\n"
            "    errors: {ExecutionError: 0.5}\n"
            "    service_time: {dist: constant, value: 0.1}",
        )
        .replace("args: {restaurant: Nopa, note: window}", "args: {city: SF, date: d, party: 2}")
    )
    scenario, _ = parse_scenario(textwrap.dedent(text))
    events, _ = run(tmp_path, text)
    invs = [v for v in by_inv(events).values() if v[0]["label"] == "invoke"]
    assert len(invs) == 6
    retried = 0
    for evs in invs:
        labels = [e["label"] for e in evs if e["label"] in (*PROTOCOL, "error", "retry")]
        assert labels[:2] == ["invoke", "collect"]  # only restaurant is missing
        assert "validate" not in labels and labels.count("collect") == 1
        # every execute (first or retried) is preceded by its own approval
        for i, lab in enumerate(labels):
            if lab == "execute":
                assert labels[i - 1] == "approve"
        retried += labels.count("retry")
    assert retried > 0
    assert check_trace(events, scenario).ok
    again = tmp_path / "again"
    again.mkdir()
    run(again, text)
    assert (again / "dijkstra" / "trace.jsonl").read_bytes() == (
        tmp_path / "dijkstra" / "trace.jsonl"
    ).read_bytes()
