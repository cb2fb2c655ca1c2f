"""Who draws a compare's figures: this process, the run pool or the drawing pool forked
before the scenario loads; the same PNG bytes whoever does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from sim.experiments import figures
from sim.experiments.compare import run_compare
from sim.experiments.executors import ExecutorHandle, InlineExecutor
from sim.experiments.figures import (
    FIRST_RUN_FIGURES,
    MAX_DRAWERS,
    RUN_FIGURES,
    Drawing,
    MeshSketch,
    Scene,
    draw,
    drawing_pool,
)
from sim.experiments.runner import make_executor
from sim.experiments.summary import Point, Summary
from sim.experiments.sweep import expand, load_points
from sim.scenario import load_scenario

SMALL = Path(__file__).parents[1] / "fixtures" / "scenarios" / "small_mesh.yaml"
ROUTERS = ["dijkstra", "resilient"]
REPLICATIONS = 2


def _pngs(base: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((base / "plots").glob("*.png"))}


@pytest.mark.parametrize("pool", ["run pool", "drawing pool"])
def test_a_pool_draws_the_bytes_this_process_draws(
    small_drawn: Path, tmp_path: Path, pool: str
) -> None:
    base = tmp_path / "again"
    shutil.copytree(small_drawn, base)
    shutil.rmtree(base / "plots")
    scenario = load_scenario(SMALL)
    points = load_points(SMALL, scenario, expand(scenario, []))[0]
    handle = make_executor("local", 2) if pool == "run pool" else drawing_pool(2)
    assert handle is not None
    try:
        drawing = Drawing(base, points, ROUTERS, REPLICATIONS, handle, ready=pool != "run pool")
        drawing.runs_started()
        drawing.runs_over()
        summary = json.loads((base / "summary.json").read_text(encoding="utf-8"))
        drawing.summary_made(Summary.from_json(summary))
        paths = drawing.paths()
    finally:
        handle.close()
    expected = _pngs(small_drawn)
    assert len(expected) == 6
    assert [p.name for p in paths] == [
        f"{n}.png"
        for n in ("latency_cdf", "success_rate", "violations", "drops_reroutes", "timeline")
    ] + ["mesh.png"]
    assert _pngs(base) == expected


def test_a_drawing_pool_needs_two_jobs_and_forks_no_more_drawers_than_figures_at_once() -> None:
    assert drawing_pool(1) is None
    pool = drawing_pool(64)
    assert pool is not None
    try:
        assert pool.workers == MAX_DRAWERS == len(RUN_FIGURES)
    finally:
        pool.terminate()


#: Run in a fresh interpreter, where nothing imported matplotlib nor the engine: what this
#: process holds before and after it forks a drawing pool, and what a drawer holds when
#: its first task runs.
_FRESH_DRAWERS = """
import json, sys
from sim.experiments.figures import drawing_pool
HEAVY = ('sim.engine', 'sim.scenario', 'sim.experiments.runner', 'pydantic', 'scipy')
def held():
    return {
        'heavy': sorted(m for m in HEAVY if m in sys.modules),
        'matplotlib': 'matplotlib' in sys.modules and 'sim.experiments.plots' in sys.modules,
    }
before = held()
pool = drawing_pool(2)
drawer = pool.executor.submit(held).result()
print(json.dumps({'before': before, 'drawer': drawer, 'after': held()}))
pool.close()
"""


@pytest.fixture(scope="module")
def fresh_drawers() -> dict[str, Any]:
    """What :data:`_FRESH_DRAWERS` prints (one interpreter for the tests below)."""
    out = subprocess.run(
        [sys.executable, "-c", _FRESH_DRAWERS],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    seen: dict[str, Any] = json.loads(out.stdout)
    return seen


def test_the_drawing_pool_imports_matplotlib_before_its_first_task(
    fresh_drawers: dict[str, Any],
) -> None:
    # the workers did it in their initializer (before the task ran), this process never did
    assert fresh_drawers["drawer"]["matplotlib"] is True
    assert fresh_drawers["after"]["matplotlib"] is False


def test_the_drawers_fork_and_draw_without_the_engine_or_the_scenario_model(
    fresh_drawers: dict[str, Any],
) -> None:
    # forked before this process imports them, the drawers import matplotlib alone (on
    # the core the engine's import leaves idle) and never the engine, even to draw
    assert fresh_drawers["before"]["heavy"] == []
    assert fresh_drawers["drawer"]["heavy"] == []


def test_the_mesh_figure_needs_the_scene_mesh(small_drawn: Path, tmp_path: Path) -> None:
    scenario = load_scenario(SMALL)
    first = Point(None, {})
    bare = Scene.of(scenario, mesh=False)
    assert bare.mesh is None and bare.duration == float(scenario.duration)
    with pytest.raises(ValueError, match="the mesh figure needs the scene's mesh"):
        draw(small_drawn, {}, first, bare, ROUTERS, REPLICATIONS, False, ("mesh",))


def test_the_sketch_is_the_scenario_agents_links_and_routers() -> None:
    scenario = load_scenario(SMALL)
    sketch = MeshSketch.of(scenario)
    assert sketch.agents == tuple((a.id, a.type.value) for a in scenario.agents)
    assert [(a, b) for a, b, _ in sketch.links] == [tuple(lk.between) for lk in scenario.links]
    assert all(p == ", ".join(sorted(p.split(", "))) for _, _, p in sketch.links)
    assert sketch.routers == tuple(scenario.router_names)


def test_the_report_is_written_with_the_inherited_heap_still_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # forked workers inherit the scenario frozen; the parent keeps it to the end, so its
    # summary, page and report are made with it still out of the collector's scans
    import gc

    from sim.experiments import compare

    seen: list[int] = []
    render = compare.render_report

    def spy(*args: Any, **kwargs: Any) -> str:
        seen.append(gc.get_freeze_count())
        return render(*args, **kwargs)

    monkeypatch.setattr(compare, "render_report", spy)
    scenario = load_scenario(SMALL)
    points = load_points(SMALL, scenario, expand(scenario, []))[0]
    handle = make_executor("local", 2)
    try:
        run_compare(scenario, points, ROUTERS, 1, tmp_path / "out", handle, plots=False)
    finally:
        handle.close()
    assert len(seen) == 1 and seen[0] > 0
    assert gc.get_freeze_count() == 0  # and unfrozen once the experiment is over


class _Recording(InlineExecutor):
    """An executor that records the figures it is asked to draw (and draws none)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.tasks: list[tuple[str, ...]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.names.extend(args[-1])
        self.tasks.append(tuple(args[-1]))
        future: Future[Any] = Future()
        future.set_result([])
        return future


def _drawing(own: bool) -> tuple[Drawing, _Recording]:
    scenario = load_scenario(SMALL)
    points = load_points(SMALL, scenario, expand(scenario, []))[0]
    recording = _Recording()
    pool = ExecutorHandle(recording, "processes", 2)
    return Drawing(Path("unused"), points, ROUTERS, REPLICATIONS, pool, ready=own), recording


def test_the_first_runs_figures_are_drawn_once_every_router_has_its_replication_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(figures, "default_jobs", lambda: 2)
    drawing, pool = _drawing(own=True)
    drawing.runs_left(1, 2)  # a core is spare from the start
    drawing.run_kept(None, "dijkstra", 1)
    drawing.run_kept(None, "dijkstra", 0)
    assert pool.names == []  # resilient's replication 0 still runs
    drawing.run_kept(None, "resilient", 0)
    assert pool.names == list(FIRST_RUN_FIGURES) == ["mesh", "timeline"]
    drawing.run_kept(None, "resilient", 0)  # once
    drawing.runs_over()
    assert pool.names == ["mesh", "timeline", "latency_cdf"]


def test_the_first_runs_figures_wait_for_a_core_the_runs_leave_spare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(figures, "default_jobs", lambda: 2)
    drawing, pool = _drawing(own=True)
    drawing.runs_left(4, 2)
    for router in ROUTERS:
        drawing.run_kept(None, router, 0)
    drawing.runs_left(2, 2)
    assert pool.names == []  # both cores run replications
    drawing.runs_left(1, 2)  # a worker is out of runs: one drawer draws them on its core
    assert pool.tasks == [("mesh", "timeline")]
    drawing.runs_over()
    assert pool.tasks == [("mesh", "timeline"), ("latency_cdf",)]


def test_workers_fewer_than_the_cores_leave_one_to_draw_on_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(figures, "default_jobs", lambda: 4)
    drawing, pool = _drawing(own=True)
    drawing.runs_left(10, 2)
    for router in ROUTERS:
        drawing.run_kept(None, router, 0)
    assert pool.names == ["mesh", "timeline"]


def test_first_runs_figures_left_to_the_end_come_with_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(figures, "default_jobs", lambda: 2)
    drawing, pool = _drawing(own=True)
    drawing.runs_left(3, 2)
    for router in ROUTERS:
        drawing.run_kept(None, router, 0)
    drawing.runs_over()
    assert pool.names == list(RUN_FIGURES) == ["latency_cdf", "mesh", "timeline"]


def test_the_runs_pool_draws_nothing_while_it_runs() -> None:
    drawing, pool = _drawing(own=False)
    for router in ROUTERS:
        drawing.run_kept(None, router, 0)
    assert pool.names == []
    drawing.runs_over()
    assert pool.names == list(RUN_FIGURES)
