"""The parts of a run merged into one trace, and the metrics counted from a trace: the
same measure as the engine's own counters."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sim.live.merge import merge, read_parts, reconcile_kills
from sim.live.metrics import live_metrics, percentile
from sim.vocabulary import FIELD_NAMES
from tests.harness.live_paths import ROOT


def line(t: float, label: str, agent: str = "a", **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict.fromkeys(FIELD_NAMES)
    base.update({"t": t, "seq": 0, "rep": 0, "label": label, "agent": agent, "detail": {}})
    base.update(kw)
    return base


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_parts_are_merged_by_time_then_part_then_line(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [line(0.000001, "send"), line(0.3, "hop")])
    b = write(tmp_path / "b.jsonl", [line(0.0000011, "hop", "b"), line(0.3, "deliver", "b")])
    assert [(e["label"], e["agent"]) for e in read_parts([a, b])] == [
        ("send", "a"), ("hop", "b"), ("hop", "a"), ("deliver", "b")
    ]  # fmt: skip


def test_ids_are_renumbered_densely_and_times_rounded(tmp_path: Path) -> None:
    own = {"wf": "w", "inst": 17, "task": "t", "inv": 43, "tool": "x", "proto": "MCP"}
    part = write(
        tmp_path / "p.jsonl",
        [
            line(1.0000004, "call", **own, detail={"target": "s"}),
            line(1.5, "send", **own, detail={"msg": 905, "kind": "request"}),
            line(2.0, "call", **{**own, "inv": 85}, detail={"target": "s", "parent": 43}),
        ],
    )
    out = io.StringIO()
    merge([part], out)
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [e["seq"] for e in got] == [0, 1, 2]
    assert [e["inv"] for e in got] == [0, 0, 1]
    assert got[0]["inst"] == 0 and got[0]["t"] == 1.0
    assert got[1]["detail"]["msg"] == 0
    assert got[2]["detail"]["parent"] == 0
    assert list(got[0]) == list(FIELD_NAMES)


def test_level_protocol_leaves_out_the_transport_lines(tmp_path: Path) -> None:
    part = write(
        tmp_path / "p.jsonl", [line(0.1, "send"), line(0.2, "node_down"), line(0.3, "hop")]
    )
    out = io.StringIO()
    full = merge([part], out, level="protocol")
    assert [json.loads(x)["label"] for x in out.getvalue().splitlines()] == ["node_down"]
    assert len(full) == 3  # what the metrics count


def test_a_killed_agent_loses_its_instances_and_the_messages_it_held() -> None:
    inst = {"wf": "w", "inst": 1}
    msg = {"wf": "w", "inst": 1, "task": "t", "inv": 2, "tool": "x", "proto": "MCP"}
    events = [
        line(1.0, "wf_start", "k", **inst),
        line(2.0, "hop", "a", **msg, detail={"msg": 7, "from": "a", "to": "k"}),
        line(2.5, "hop", "a", **msg, detail={"msg": 8, "from": "a", "to": "k"}),
        line(3.5, "drop", "k", **msg, detail={"msg": 8, "reason": "node_down"}),  # seen after
    ]
    out = reconcile_kills(events, [("k", 3.0)])
    added = [e for e in out if e not in events]
    assert [(e["label"], e["t"]) for e in added] == [("wf_end", 3.0), ("drop", 3.0)]
    assert added[0]["detail"] == {"status": "failed", "latency": 2.0, "reason": "initiator_down"}
    assert added[1]["detail"] == {"msg": 7, "reason": "node_down"}


def test_percentile_is_linear_between_order_statistics() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)


COUNTED = (
    "messages", "approvals", "recovery", "errors", "hops_by_link", "lost_work", "translations",
    "fields_lost", "reroutes", "timeouts", "calls", "executions", "writes_executed",
    "writes_without_approval", "skips", "discoveries", "outages",
)  # fmt: skip


def test_the_trace_counts_what_the_engine_counted(tmp_path: Path) -> None:
    """An engine run at level full: its trace, counted by the live mesh's rule, gives the
    engine's metrics (latencies to the trace's microseconds)."""
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    scenario = load_scenario(ROOT / "scenarios" / "gateway_failover.yaml")
    scenario = scenario.model_copy(update={"duration": 900.0})
    out = tmp_path / "rep"
    run_replication(scenario, "resilient", rep=0, out_dir=out, trace_level="full")
    engine = json.loads((out / "metrics.json").read_text())
    events = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    writes = frozenset(t.name for t in scenario.tools if t.side_effects.writes)
    counted = live_metrics(events, writes, engine["tasks_failed_by_reason"], {})
    assert counted["workflows"] == engine["workflows"] and engine["workflows"]["started"] > 100
    assert engine["timeouts"] > 0 and engine["reroutes"] > 0  # the outage is in the window
    for key in COUNTED:
        assert counted[key] == engine[key], key
    for q in ("mean", "p50", "p95", "p99", "max"):
        assert counted["latency"][q] == pytest.approx(engine["latency"][q], abs=2e-6), q
    assert set(counted) >= set(engine) - {"conformance", "violations_per_1000_instances",
        "duration", "replication", "router", "scenario", "seed", "trace_level"}  # fmt: skip
