"""A run's memory (issue 38, items 3 and 10): the world of a replication does not outlive
it, however many replications a process runs, and the resident-memory budget stops a run
that grows with the scenario element that drives it, located."""

from __future__ import annotations

import gc
import io
import textwrap
import weakref
from pathlib import Path

import pytest
import simpy

from sim.engine import ReplicationError, run_replication
from sim.engine.guard import MEMORY_HEADROOM, UNBOUNDED, Guard, Runaway, resident_bytes
from sim.engine.loop import FREEZE_AGENTS, run_until
from sim.engine.simulation import Replication
from sim.engine.trace import TraceWriter
from sim.scenario import load_scenario, parse_scenario
from sim.scenario.model import Scenario
from tests.harness.engine_parts import MESH


def test_a_small_world_runs_unfrozen_and_keeps_the_collector_s_counts(mesh: Scenario) -> None:
    """Each run froze the world it ran, and a freeze zeroes the collector's count of young
    collections since its last full one: a process running replication after replication
    never collected in full, and the worlds of 20,000 smc replications (1.5 GB) stayed."""
    gc.collect()
    for _ in range(3):
        gc.collect(1)
    frozen_during: list[int] = []
    world = Replication(mesh, "dijkstra", 0, TraceWriter(io.StringIO(), 0, "off"))
    world.env.timeout(1).callbacks.append(lambda _e: frozen_during.append(gc.get_freeze_count()))
    world.run()
    assert frozen_during == [0]  # a small world: not frozen
    assert gc.get_count()[2] >= 3  # the count toward a full collection is kept


def test_a_large_world_is_frozen_without_the_garbage_before_it() -> None:
    dead = weakref.ref(_cycle())
    env = simpy.Environment()
    frozen_during: list[int] = []
    env.timeout(1).callbacks.append(lambda _e: frozen_during.append(gc.get_freeze_count()))
    run_until(env, env.timeout(2), UNBOUNDED, large=True)
    assert frozen_during[0] > 0 and gc.get_freeze_count() == 0
    assert dead() is None  # collected before the freeze, not frozen to outlive the run


def test_a_replication_of_many_agents_is_frozen_while_it_runs() -> None:
    text = textwrap.dedent(MESH).replace(
        "duration: 100",
        f"duration: 100\ntopology: {{generator: barabasi_albert, agents: {FREEZE_AGENTS},"
        " params: {m: 1}, protocols: {MCP: 1.0}, attach: [{agent: a, links: 1}]}",
    )
    scenario, _ = parse_scenario(text)
    world = Replication(scenario, "dijkstra", 0, TraceWriter(io.StringIO(), 0, "off"))
    frozen_during: list[int] = []
    world.env.timeout(1).callbacks.append(lambda _e: frozen_during.append(gc.get_freeze_count()))
    world.run()
    assert frozen_during[0] > 0 and gc.get_freeze_count() == 0


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _cycle() -> _Cycle:
    """A young cyclic object, garbage as soon as it is returned and dropped."""
    return _Cycle()


@pytest.fixture
def flood(tmp_path: Path) -> tuple[Path, str]:
    """The parts mesh with a million arrivals a second (each instance waits on the one
    slot of the tool server: they pile up), and where its rate is in the file."""
    text = textwrap.dedent(MESH).replace(
        "arrivals: {times: [0]}", "arrivals: {process: poisson, rate: 1000000}"
    )
    path = tmp_path / "flood.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "rate: 1000000" in ln)
    column = text.splitlines()[line - 1].index("1000000") + 1
    return path, f"{path}:{line}:{column}: workflows[0].arrivals.rate"


def test_the_memory_budget_stops_a_growing_run_at_its_driver(
    flood: tuple[Path, str], tmp_path: Path
) -> None:
    path, where = flood
    budget = resident_bytes() + MEMORY_HEADROOM + 16_000_000  # 16 MB more than now
    guard = Guard(None, None, str(path), budget)
    with pytest.raises(ReplicationError) as info:
        run_replication(load_scenario(path), "dijkstra", 0, tmp_path / "out", "off", guard=guard)
    stop = info.value.cause
    assert isinstance(stop, Runaway) and stop.budget.startswith("--max-memory ")
    assert f"workflow 'w' starts instances without bound: rate 1e+06 ({where})" in str(stop)
    assert resident_bytes() < budget + 100_000_000  # stopped near the budget, not far past


def test_without_a_memory_budget_the_run_goes_on(flood: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = flood
    low = Guard(20_000, None, str(path), None)  # no memory budget: the event budget stops it
    with pytest.raises(ReplicationError) as info:
        run_replication(load_scenario(path), "dijkstra", 0, tmp_path / "out", "off", guard=low)
    assert isinstance(info.value.cause, Runaway)
    assert info.value.cause.budget == "--max-events 20000"
