"""``verify`` decides write_approval, requires_order and exclusive by their checks' cores
(``CoreTracker``): a violation it finds on a small model is the one ``check`` reports
on the counterexample trace, a holding one has no counterexample, and the cores read
only labels the untimed model keeps (so the verdict carries over to a real trace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_verify import independent
from sim.conformance.checks import CORES, check_trace
from sim.conformance.truth import from_scenario
from sim.scenario import Scenario, load_scenario
from sim.verify import decide, selected
from sim.verify.counterexample import write_trace
from sim.verify.decidable import UNMODELED
from sim.verify.observe import CoreTracker
from sim.verify.verdicts import _tracker

#: a second tool's dependency on the first, as the two-task scenario declares it
REQUIRES = "    dependencies: [{relation: Requires, tool: t0}]\n"
EXCLUSIVE = "    dependencies: [{relation: ExclusiveWith, tool: t0}]\n"


def two_tasks(
    tmp_path: Path, dependency: str = "", after: bool = False, ask: bool = True, plain: bool = False
) -> Scenario:
    """Two write tools on one server, a task each (``after``: k1 after k0); ``dependency``
    on t1; ``ask`` False: t1 executes with no approval asked; ``plain``: over plain MCP,
    whose tools/list carries no dependency (the caller does not order them)."""
    text = independent(2)
    if plain:
        text = text.replace("MCP+", "MCP")
    head, t1 = text.split("  - name: t1\n")
    if not ask:
        t1 = t1.replace("requires_approval: true", "requires_approval: false", 1)
    t1 = t1.replace("    service_time:", dependency + "    service_time:", 1)
    if after:
        t1 = t1.replace("{id: k1, tool: t1}", "{id: k1, tool: t1, after: [k0]}")
    path = tmp_path / "two.yaml"
    path.write_text(head + "  - name: t1\n" + t1, encoding="utf-8")
    return load_scenario(path)


@pytest.mark.parametrize(
    ("name", "dependency", "ask", "plain"),
    [
        ("write_approval", "", False, False),
        ("requires_order", REQUIRES, True, True),
        ("exclusive", EXCLUSIVE, True, True),
    ],
)
def test_a_violation_verify_finds_is_the_one_check_reports_on_its_trace(
    tmp_path: Path, name: str, dependency: str, ask: bool, plain: bool
) -> None:
    sc = two_tasks(tmp_path, dependency, ask=ask, plain=plain)
    props = selected(sc, [], [name])
    assert props == [(name, None)]  # a check, no formula
    assert isinstance(_tracker(name, None, sc), CoreTracker)
    (pv,) = decide(sc, "w", "dijkstra", props).properties
    assert pv.verdict == "violated" and pv.events
    write_trace(pv.events, tmp_path / "cx.jsonl")
    verdict = check_trace(str(tmp_path / "cx.jsonl"), sc, [name]).verdict(name)
    assert verdict.violations >= 1, verdict
    last = pv.events[-1]
    # the violation became certain at the path's last event; check quotes that event
    assert any(e["seq"] == last["seq"] for e in verdict.counterexample), verdict.message
    assert last["label"] in ("execute", "call")


@pytest.mark.parametrize(
    ("name", "dependency", "after"),
    [
        ("write_approval", "", False),
        ("requires_order", REQUIRES, True),
        ("exclusive", EXCLUSIVE, True),
    ],
)
def test_what_the_scenario_orders_or_gates_holds(
    tmp_path: Path, name: str, dependency: str, after: bool
) -> None:
    sc = two_tasks(tmp_path, dependency, after=after)
    (pv,) = decide(sc, "w", "dijkstra", selected(sc, [], [name])).properties
    assert (pv.verdict, pv.events) == ("holds", None)


_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["call", "invoke", "approve", "execute", "result", "error"]),
        st.sampled_from(["t0", "t1", "x"]),
        st.sampled_from([0, 1]),
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(_EVENTS, st.sampled_from(sorted(UNMODELED)), st.sampled_from(["t0", "t1", None]))
def test_an_event_the_model_leaves_out_never_changes_a_cores_state(
    events: list[tuple[str, str, int]], label: str, tool: Any
) -> None:
    """Inserted anywhere, an event of a label the untimed model leaves out (a hop, a
    translation...) leaves every core's state as it was, and is no violation."""
    truth = from_scenario(load_scenario(_SCENARIO[0])) if _SCENARIO else None
    assert truth is not None
    for core_of in CORES.values():
        core = core_of(truth)
        assert not set(core.labels) & UNMODELED
        state = core.initial
        for lab, t, task in events:
            assert core.step(state, label, tool, task, "w") == (state, False)
            state, _ = core.step(state, lab, t, task, "w")
        assert core.step(state, label, tool, 0, "w") == (state, False)


_SCENARIO: list[Path] = []


@pytest.fixture(autouse=True, scope="module")
def _with_dependencies(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A scenario whose truth rules every core (Requires and ExclusiveWith on t1)."""
    tmp = tmp_path_factory.mktemp("cores")
    dependency = (
        "    dependencies: [{relation: Requires, tool: t0}, {relation: ExclusiveWith, tool: t0}]\n"
    )
    two_tasks(tmp, dependency)
    _SCENARIO[:] = [tmp / "two.yaml"]


@pytest.mark.parametrize(
    ("name", "dependency", "ask", "plain"),
    [("write_approval", "", False, False), ("requires_order", REQUIRES, True, True)],
)
def test_storm_decides_a_core_as_the_explicit_search_does(
    tmp_path: Path, name: str, dependency: str, ask: bool, plain: bool
) -> None:
    """The PRISM program takes the core's states too: composed, a module per task (the
    invocation slots the core's; the instance's monitor module the core's states)."""
    pytest.importorskip("stormpy")
    from sim.verify.engines import decide_storm

    sc = two_tasks(tmp_path, dependency, ask=ask, plain=plain)
    props = selected(sc, [], [name])
    (explicit,) = decide(sc, "w", "dijkstra", props).properties
    (storm,) = decide_storm(sc, "w", "dijkstra", props).properties
    assert storm.verdict == explicit.verdict == "violated"
    assert storm.events == explicit.events
    assert "composed" in storm.note, storm.note
