"""Every counterexample up to the cap: the checks and the property monitor keep the
earliest ``KEEP_COUNTEREXAMPLES`` violations by ``seq`` (the first is the one ``check``
prints), whatever order they were found in; ``check``'s output keeps only the first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sim.vocabulary.counterexamples as counterexamples_module
from sim.cli import main
from sim.conformance.checks import check_trace
from sim.scenario import load_scenario
from sim.scenario.properties import load_properties, tool_attributes
from sim.vocabulary.counterexamples import KEEP_COUNTEREXAMPLES, Earliest

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"
APPROVALS = ROOT / "tests" / "properties" / "approvals.yaml"
Events = list[dict[str, Any]]


@given(st.lists(st.integers(-5, 50), max_size=60), st.integers(1, 8))
def test_earliest_keeps_the_smallest_seqs_first_reported_on_ties(seqs: list[int], cap: int) -> None:
    kept = Earliest(cap)
    for n, seq in enumerate(seqs):
        kept.add(seq, f"m{n}", [b"x"])
    want = sorted(range(len(seqs)), key=lambda n: (seqs[n], n))[:cap]
    assert [m for _, m, _, _ in kept.kept()] == [f"m{n}" for n in want]


@pytest.fixture
def no_approvals(train_mutations: dict[str, Events], tmp_path: Path) -> Path:
    """train_booking with every ``approve`` removed: one write_approval violation per
    executed write (far more than the cap)."""
    path = tmp_path / "trace.jsonl"
    events = train_mutations["no_approvals"]
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _kept_then_every(
    verdict_of: Any, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    """The verdict with the cap, then with no cap: the first kept is the one printed, and
    the capped list is the uncapped one's head."""
    v = verdict_of(trace)
    assert v.violations > KEEP_COUNTEREXAMPLES
    assert len(v.counterexamples) == KEEP_COUNTEREXAMPLES
    first = v.counterexamples[0]
    assert (first.message, first.events) == (v.message, v.counterexample)
    monkeypatch.setattr(counterexamples_module, "KEEP_COUNTEREXAMPLES", 10**6)
    every = verdict_of(trace)
    assert len(every.counterexamples) == every.violations == v.violations
    assert v.counterexamples == every.counterexamples[:KEEP_COUNTEREXAMPLES]
    return v, every


def _write_approval(trace: Path) -> Any:
    return check_trace(trace, load_scenario(TRAIN), checks=["write_approval"]).verdicts[0]


def test_a_check_keeps_the_earliest_counterexamples_up_to_the_cap(
    no_approvals: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, every = _kept_then_every(_write_approval, no_approvals, monkeypatch)
    ends = [c.events[-1] for c in every.counterexamples]
    writes = {t.name for t in load_scenario(TRAIN).tools if t.side_effects in ("write", "delete")}
    assert all(e["label"] == "execute" and e["tool"] in writes for e in ends)
    assert [e["seq"] for e in ends] == sorted({e["seq"] for e in ends})  # distinct, in order
    assert all(
        f"seq {e['seq']}" in c.message for c, e in zip(every.counterexamples, ends, strict=True)
    )


def _approved_writes(trace: Path) -> Any:
    from sim.properties import Monitor

    scenario = load_scenario(TRAIN)
    props = [p for p in load_properties(APPROVALS, scenario) if p.name == "approved-writes"]
    monitor = Monitor(props, tool_attributes(scenario))
    check_trace(trace, scenario, checks=[], consumers=[monitor])
    (p,) = monitor.finish()
    return p


def test_the_property_monitor_keeps_the_earliest_counterexamples(
    no_approvals: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p, every = _kept_then_every(_approved_writes, no_approvals, monkeypatch)
    assert p.counterexamples[0].elided == p.elided
    # one per violated invocation, each certain at an execute with no approve before it
    invs = [c.events[-1]["inv"] for c in every.counterexamples]
    assert len(set(invs)) == len(invs)
    seqs = [c.events[-1]["seq"] for c in every.counterexamples]
    assert seqs == sorted(seqs)
    for c in every.counterexamples:
        assert c.events[-1]["label"] == "execute"
        assert "approve" not in {e["label"] for e in c.events}


def test_check_prints_and_reports_only_the_first(
    no_approvals: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["check", str(no_approvals), "--scenario", str(TRAIN), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    wa = next(c for c in report["checks"] if c["name"] == "write_approval")
    assert set(wa) == {"name", "examined", "violations", "ok", "by_workflow", "first"} | (
        {"next_messages"} if "next_messages" in wa else set()
    )
    assert main(["check", str(no_approvals), "--scenario", str(TRAIN)]) == 1
    text = capsys.readouterr().out
    violated = [c for c in report["checks"] if not c["ok"]]
    assert text.count("first counterexample of ") == len(violated) == 2
    printed = [json.loads(line) for line in text.splitlines() if line.startswith("  {")]
    assert printed == [e for c in violated for e in c["first"]["events"]]
