"""The model's step reads only the tasks that can matter (issue 36 item 4): on every
reachable state, its transitions are those of the same model whose readiness scans every
task (the engine's loop: an oracle subclass), the reduced search's ample set is the
filter of all transitions it replaced, and equal states hash alike whatever objects they
share."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_verify import shaped
from sim.scenario import Scenario, load_scenario
from sim.verify.knowledge import ToolModel
from sim.verify.model import Model
from sim.verify.search import _ample, _digest
from sim.verify.states import DONE_OK, END, INIT, PENDING, WAITING, Transition

ROOT = Path(__file__).resolve().parents[2]
#: shipped scenarios whose tools declare Requires, ExclusiveWith and ProducesInputFor
SHIPPED = [("train_booking", "book"), ("travel_mesh", "weekend-trip"), ("travel_mesh", "dinner")]
BOUND = 600


class ScanningModel(Model):
    """The model as it was: every readiness check and every ``_advance`` looks at every
    task (the oracle)."""

    def _watched(self, view: ToolModel) -> tuple[int, ...]:
        return tuple(range(len(self.tasks)))

    def _feeders(self, me: str) -> tuple[int, ...]:
        return tuple(range(len(self.tasks)))

    def _advance(
        self,
        evs: list[Any],
        tasks: list[Any],
        status: Any,
        known: tuple[int, ...],
        latest: tuple[Any, ...],
        woken: Iterable[int] | None = None,
    ) -> tuple[list[Any], tuple[Any, ...]]:
        return super()._advance(evs, tasks, status, known, latest, None)


def reachable(model: Model, bound: int = BOUND) -> list[Any]:
    """The first ``bound`` states breadth-first (INIT first)."""
    seen = {INIT: None}
    order: list[Any] = [INIT]
    k = 0
    while k < len(order) and len(order) < bound:
        for _, _, nxt in model.successors(order[k]):
            if nxt not in seen:
                seen[nxt] = None
                order.append(nxt)
        k += 1
    return order


def cases() -> list[tuple[str, Scenario, str]]:
    out = [(f"{n}/{w}", load_scenario(ROOT / "scenarios" / f"{n}.yaml"), w) for n, w in SHIPPED]
    return out


#: per tool of the ``related`` shape, its dependencies (t1 excludes t0, t2 requires t0
#: and is fed by t1, t3 requires t2)
RELATED = {
    1: "[{tool: t0, relation: ExclusiveWith}, {tool: t2, relation: ProducesInputFor}]",
    2: "[{tool: t0, relation: Requires}]",
    3: "[{tool: t2, relation: Requires}]",
}


def related(n: int) -> str:
    """``shaped(n, "independent")`` with the dependencies of :data:`RELATED`."""
    text = shaped(n, "independent")
    for k, deps in RELATED.items():
        mark = f"    description: Tool {k}.\n"
        text = text.replace(mark, f"{mark}    dependencies: {deps}\n")
    return text


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Scenario, str]]:
    out = []
    for shape in ("chain", "fanout", "independent", "related"):
        path = tmp_path_factory.mktemp(shape) / f"{shape}.yaml"
        path.write_text(related(4) if shape == "related" else shaped(4, shape), encoding="utf-8")
        out.append((shape, load_scenario(path), "w"))
    return out


@pytest.mark.parametrize("exact", [True, False])
def test_every_step_is_the_scanning_models(
    shapes: list[tuple[str, Scenario, str]], exact: bool
) -> None:
    for name, scenario, wf in cases() + shapes:
        router = scenario.router_names[0]
        model = Model(scenario, wf, router, exact=exact)
        oracle = ScanningModel(scenario, wf, router, exact=exact)
        labels = set()
        for state in reachable(model):
            found = model.successors(state)
            assert found == oracle.successors(state), (name, state)
            labels.update(ev[0] for _, evs, _ in found for ev in evs)
        # the shape relates its tasks every way readiness reads
        assert name != "related" or {"skip", "_failed"} <= labels, labels


def test_no_pending_task_is_ready_in_a_reachable_state(
    shapes: list[tuple[str, Scenario, str]],
) -> None:
    # the invariant that lets _advance look only at the woken tasks
    for name, scenario, wf in cases() + shapes:
        model = Model(scenario, wf, scenario.router_names[0])
        for state in reachable(model):
            if state in (INIT, END) or state[1]:
                continue
            codes = state[0]
            for task in model.tasks:
                if codes[task.index] == PENDING:
                    assert not all(codes[j] in DONE_OK for j in task.after), (name, task.id)
            assert WAITING not in codes or any(isinstance(c, tuple) for c in codes), name


def old_ample(state: Any, trs: list[Transition], isolated: frozenset[int]) -> list[Transition]:
    """The reduced search's ample set as it was: a filter of every transition."""
    if state == INIT or not isolated or len(trs) < 2:
        return trs
    others = [t for t in trs if t[0] not in isolated]
    if others:
        return others
    for i in sorted(isolated):
        mine = [t for t in trs if t[0] == i]
        if mine:
            return mine
    return trs


def test_the_ample_set_is_the_filter_of_every_transition(
    shapes: list[tuple[str, Scenario, str]],
) -> None:
    for name, scenario, wf in shapes:
        model = Model(scenario, wf, "dijkstra", exact=False)
        assert model.isolated or name != "independent"
        isolated = tuple(sorted(model.isolated))
        others = tuple(t.index for t in model.tasks if t.index not in model.isolated)
        for state in reachable(model):
            want = old_ample(state, model.successors(state), frozenset(isolated))
            assert _ample(model, state, others, isolated) == want, (name, state)


def test_equal_states_have_one_digest_whatever_they_share() -> None:
    shared = tuple([1, "t0", None])
    one = ((shared, shared, 0), "", (), ())
    two = ((tuple([1, "t0", None]), tuple([1, "t0", None]), 0), "", (), ())
    assert one == two and _digest(one) == _digest(two)
    assert _digest(one) != _digest(((shared, shared, 1), "", (), ()))
