"""The search (sim.verify.search): reduction gives the plain search's verdicts on fewer
states, the bound, shortest counterexamples."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_verify import independent
from sim.scenario import Scenario, load_scenario
from sim.verify import decide, selected
from sim.verify.model import Model
from sim.verify.search import explore
from sim.verify.verdicts import _tracker


def scenario(tmp_path: Path, n: int, unapproved: bool = False) -> Scenario:
    text = independent(n)
    if unapproved:  # the last tool writes without asking: write_approval is violated
        last = text.rindex("requires_approval: true")
        text = (
            text[:last] + "requires_approval: false" + text[last + len("requires_approval: true") :]
        )
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return load_scenario(path)


@pytest.mark.parametrize("name", ["write_approval", "recovery"])
def test_reduction_keeps_a_holding_verdict_on_fewer_states(tmp_path: Path, name: str) -> None:
    sc = scenario(tmp_path, 2)
    props = selected(sc, [], [name])
    full = decide(sc, "w", "dijkstra", props, reduce=False).properties[0]
    reduced = decide(sc, "w", "dijkstra", props, reduce=True).properties[0]
    assert full.verdict == reduced.verdict == "holds"
    # 44 states against 366 (equal states hashed alike: no duplicate stored)
    assert reduced.states * 8 < full.states


def test_reduction_finds_the_violation_and_the_plain_search_the_shortest(tmp_path: Path) -> None:
    sc = scenario(tmp_path, 3, unapproved=True)
    props = selected(sc, [], ["write_approval"])
    full = decide(sc, "w", "dijkstra", props, reduce=False).properties[0]
    reduced = decide(sc, "w", "dijkstra", props, reduce=True).properties[0]
    assert full.verdict == reduced.verdict == "violated"
    assert full.events is not None and reduced.events is not None
    # wf_start, then k2's list, call, validate, execute (no gate: requires_approval false)
    assert [e["label"] for e in full.events] == ["wf_start", "list", "call", "validate", "execute"]
    assert len(reduced.events) == len(full.events)


def test_twelve_independent_tasks_are_decided_with_reduction(tmp_path: Path) -> None:
    sc = scenario(tmp_path, 12)
    props = selected(sc, [], ["write_approval"])
    (p,) = decide(sc, "w", "dijkstra", props, max_states=10_000).properties
    assert p.verdict == "holds" and p.states < 10_000


def test_without_reduction_the_bound_is_reported_not_holds(tmp_path: Path) -> None:
    sc = scenario(tmp_path, 6)
    props = selected(sc, [], ["write_approval"])
    (p,) = decide(sc, "w", "dijkstra", props, max_states=2_000, reduce=False).properties
    assert p.verdict == "undecided" and p.states == 2_000


def test_bfs_explores_each_state_once(tmp_path: Path) -> None:
    sc = scenario(tmp_path, 2)
    model = Model(sc, "w", "dijkstra")
    props = selected(sc, [], ["exclusive"])
    tracker = _tracker("exclusive", props[0][1], sc)
    assert not isinstance(tracker, str)
    out = explore(model, tracker, 1_000_000)
    assert out.verdict == "holds"
    # the model alone, by an independent breadth-first walk over hashable states
    seen = {("init",)}
    todo = [("init",)]
    while todo:
        s = todo.pop()
        for _, _, nxt in model.successors(s):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert out.states >= len(seen)
