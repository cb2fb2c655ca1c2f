"""The figures of a ``compare``: which, in what order, and who draws them.

:func:`draw` writes figures as ``base/plots/*.png`` from the run directories' series, the
summary and a :class:`Scene` of the first point's scenario (its duration and
:class:`MeshSketch`: plain data, cheap to send). :class:`Drawing` has a process pool draw
them as soon as what each one shows exists and a core is free for it: those of
replication 0, one after the other in one task, once every router's is kept and the runs
leave a core spare (its own pool only: a worker out of runs while the other finishes its
last one), the other per-run figures once the runs are over (while ``compare`` makes the
summary), the summary's once it is made (while ``compare`` writes the page), one task
each, costliest first, so the two workers end together. The pool is best
:func:`drawing_pool`'s, forked before this process imports the engine: its workers import
matplotlib (about 0.5 s each, one at a time) meanwhile, on a core that would otherwise
wait. Else the run pool draws them, each worker importing matplotlib in a task queued
behind the runs (a worker out of runs does it while the other finishes its last one).
Without a pool every figure is drawn in this process once the summary is made. The PNGs
are the same bytes either way.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.experiments.executors import ExecutorHandle, default_jobs
from sim.experiments.summary import Point, Summary, series_of

if TYPE_CHECKING:
    from multiprocessing.synchronize import Lock

    from sim.experiments.sweep import SweepPoint
    from sim.scenario.model import Scenario

#: Metrics drawn against the swept parameter.
SWEEP_METRICS: tuple[str, ...] = ("success_rate", "latency_p95", "messages_dropped")
#: The figures of an experiment, in the report's order (``sweep``: one per SWEEP_METRICS).
FIGURES: tuple[str, ...] = (
    "latency_cdf",
    "success_rate",
    "violations",
    "drops_reroutes",
    "timeline",
    "mesh",
    "sweep",
)
#: The figures drawn from the runs alone, and those drawn from the summary, each
#: costliest first (CPU seconds on the 10,000-agent mesh: 0.35, 0.31, 0.15 and 0.20,
#: 0.16, 0.10; a pool draws them in this order).
RUN_FIGURES: tuple[str, ...] = ("latency_cdf", "mesh", "timeline")
#: The per-run figures that show replication 0 of each router alone: a pool draws them as
#: soon as those runs are kept (ok), while the others still run.
FIRST_RUN_FIGURES: tuple[str, ...] = ("mesh", "timeline")
SUMMARY_FIGURES: tuple[str, ...] = ("sweep", "drops_reroutes", "violations", "success_rate")


@dataclass(frozen=True)
class MeshSketch:
    """What the mesh figure shows of a scenario: its agents ``(id, type)`` and links ``(a,
    b, "protocol, ...")`` in the file's order, and its routers (shown when no run recorded
    hops)."""

    agents: tuple[tuple[str, str], ...]
    links: tuple[tuple[str, str, str], ...]
    routers: tuple[str, ...]

    @classmethod
    def of(cls, scenario: Scenario) -> MeshSketch:
        """The sketch of ``scenario``."""
        return cls(
            tuple((a.id, a.type.value) for a in scenario.agents),
            tuple(
                (lk.between[0], lk.between[1], ", ".join(sorted(lk.latency)))
                for lk in scenario.links
            ),
            tuple(scenario.router_names),
        )


@dataclass(frozen=True)
class Scene:
    """What the figures show of the first point's scenario: its duration (s) and its mesh
    (None for the figures that draw no mesh)."""

    duration: float
    mesh: MeshSketch | None = None

    @classmethod
    def of(cls, scenario: Scenario, mesh: bool = True) -> Scene:
        """The scene of ``scenario`` (without its mesh unless ``mesh``)."""
        return cls(float(scenario.duration), MeshSketch.of(scenario) if mesh else None)


def write_plots(
    base: Path,
    summary: Summary,
    points: Sequence[tuple[SweepPoint, Scenario]],
    routers: Sequence[str],
    replications: int,
) -> list[Path]:
    """Every figure of the experiment as ``base/plots/*.png``; returns their paths.

    With a sweep, the per-router figures are drawn for the first point and the sweep
    figures show every point.
    """
    if not points:
        return []
    first, scenario = points[0]
    scene = Scene.of(scenario)
    point = Point(first.id, first.params)
    return draw(base, summary, point, scene, routers, replications, len(points) > 1, FIGURES)


def draw(
    base: Path,
    summary: Summary | None,
    point: Point,
    scene: Scene,
    routers: Sequence[str],
    replications: int,
    swept: bool,
    names: Sequence[str],
) -> list[Path]:
    """The figures ``names`` (of :data:`FIGURES`) as ``base/plots/*.png``, in that order;
    ``point`` is the sweep point (and ``scene`` its scenario's) the per-router figures
    show; ``swept``: the experiment has more than one point; ``summary``: None before it
    is made (only figures of the runs then). Raises ``ValueError`` when the mesh figure is
    asked of a scene without its mesh, or a summary's figure without the summary."""
    from sim.experiments import plots

    out = base / "plots"
    written: list[Path] = []
    pid = point.id

    def emit(name: str, fig: Any) -> None:
        path = out / f"{name}.png"
        plots.save(fig, path)
        written.append(path)

    # the runs' series, read only for a figure of the runs (not the summary's)
    shown = routers if any(n in RUN_FIGURES for n in names) else ()
    runs = {r: series_of(base, point, r, replications) for r in shown}
    first_runs = {r: runs[r][0] for r in shown if runs[r]}
    for name in names:
        if name in SUMMARY_FIGURES and summary is None:
            raise ValueError(f"the {name} figure needs the summary")
        if name == "latency_cdf":
            emit(name, plots.latency_cdf_figure(runs))
        elif name == "success_rate":
            emit(name, plots.success_rate_figure(_made(summary), routers, pid))
        elif name == "violations":
            emit(name, plots.violations_figure(_made(summary), routers, pid))
        elif name == "drops_reroutes":
            emit(name, plots.drops_reroutes_figure(_made(summary), routers, pid))
        elif name == "timeline":
            emit(name, plots.timeline_figure(first_runs, scene.duration))
        elif name == "mesh":
            if scene.mesh is None:
                raise ValueError("the mesh figure needs the scene's mesh")
            link_use = {r: dict(run.get("link_use", {})) for r, run in first_runs.items()}
            emit(name, plots.mesh_figure(scene.mesh, link_use))
        elif name == "sweep" and swept:
            for metric in SWEEP_METRICS:
                emit(f"sweep_{metric}", plots.sweep_figure(_made(summary), routers, metric))
    return written


def _made(summary: Summary | None) -> Summary:
    assert summary is not None  # draw checked it before the first figure
    return summary


def ready_to_draw() -> None:
    """Import the figures' modules (matplotlib: about 0.5 s), as a pool task."""
    from sim.experiments import plots  # noqa: F401


def drawer_start(parent: int, turn: Lock) -> None:
    """Initializer of :func:`drawing_pool`'s workers of process ``parent``: they stop and
    die with it (:func:`sim.processes.worker_start`) and import the figures' modules, one
    worker at a time (``turn``: on the core this process's own imports and loading leave
    idle, the two cores never shared by more than this process's work and one import).
    What they hold then is frozen out of the collector."""
    from sim.longlived import freeze, long_lived
    from sim.processes import worker_start

    worker_start(parent)
    with turn, long_lived():  # modules kept to the end: never scanned by the collector
        ready_to_draw()
    freeze()


def _forked() -> None:
    """A task that does nothing: submitted, the pool forks its workers."""


#: The most drawers worth forking: the per-run figures drawn at once (a pool's
#: shutdown waits for every worker's import, made one at a time).
MAX_DRAWERS = len(RUN_FIGURES)


def drawing_pool(jobs: int) -> ExecutorHandle | None:
    """A process pool of ``jobs`` workers (at most :data:`MAX_DRAWERS`) forked now, to
    draw a ``compare``'s figures (:class:`Drawing`), importing matplotlib meanwhile
    (:func:`drawer_start`); None where processes are not forked (their imports would then
    be no head start) or for fewer than 2 jobs. Best called before the engine is
    imported: the drawers import on the core this process's imports leave idle. NumPy and
    networkx, which both this process (the engine, the page's mesh) and the figures
    need, are imported first, and the drawers find them imported."""
    context = multiprocessing.get_context()
    if jobs < 2 or context.get_start_method() != "fork":
        return None
    import networkx  # noqa: F401
    import numpy  # noqa: F401

    workers = min(jobs, MAX_DRAWERS)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=drawer_start,
        initargs=(os.getpid(), context.Lock()),
    )
    pool.submit(_forked)  # a forking pool starts all its workers at its first task
    return ExecutorHandle(pool, "processes", workers, start_method="fork")


class Drawing:
    """The figures of an experiment being drawn (see the module): by ``pool``'s workers
    (``ready``: they have imported matplotlib already, as :func:`drawing_pool`'s have),
    else by this process in :meth:`summary_made`."""

    def __init__(
        self,
        base: Path,
        points: Sequence[tuple[SweepPoint, Scenario]],
        routers: Sequence[str],
        replications: int,
        pool: ExecutorHandle | None,
        ready: bool = False,
    ) -> None:
        self._args = (base, points, list(routers), replications)
        self._pool = pool if pool is not None and pool.kind == "processes" and points else None
        self._futures: list[Future[Any]] = []
        self._drawn: list[Path] = []
        self._readied = ready
        self._scene: Scene | None = None
        self._firsts: set[str] = set()  # the routers whose replication 0 is kept
        self._early = False
        self._own = ready  # a pool of its own (not the runs'): it may draw during the runs
        self._spare = False  # the runs leave a core spare (see runs_left)

    def runs_started(self) -> None:
        """The runs are all submitted: queue each worker's import of matplotlib behind
        them (once, unless the workers are ready)."""
        if self._pool is not None and not self._readied:
            self._readied = True
            for _ in range(self._pool.workers):
                self._pool.executor.submit(ready_to_draw)

    def run_kept(self, point: str | None, router: str, rep: int) -> None:
        """Run ``rep`` of ``router`` at sweep point ``point`` is finished and ok (or reused):
        once replication 0 of every router of the first point is, and a core is spare
        (:meth:`runs_left`), a pool of the figures' own draws :data:`FIRST_RUN_FIGURES`
        (from those runs alone: the bytes drawn later)."""
        _, points, _, _ = self._args
        if rep == 0 and point == points[0][0].id:
            self._firsts.add(router)
            self._draw_firsts()

    def runs_left(self, left: int, workers: int) -> None:
        """``left`` runs are not finished, on ``workers`` workers. Once they keep fewer
        cores busy than this process may use
        (:func:`~sim.experiments.executors.default_jobs`: a worker is out of runs while
        the other finishes its last one, or the workers are fewer), :meth:`run_kept`'s
        figures are drawn, one after the other by one drawer: on the core the runs leave,
        never slowing the runs down."""
        if min(left, workers) < default_jobs():
            self._spare = True
            self._draw_firsts()

    def _draw_firsts(self) -> None:
        """Draw :data:`FIRST_RUN_FIGURES` now if they can be (see :meth:`run_kept`)."""
        routers = self._args[2]
        if self._own and self._spare and not self._early and self._firsts.issuperset(routers):
            self._early = True
            self._submit(FIRST_RUN_FIGURES, None)

    def runs_over(self) -> None:
        """The runs are over: the pool draws the per-run figures (not drawn yet)."""
        for name in RUN_FIGURES:
            if not (self._early and name in FIRST_RUN_FIGURES):
                self._submit((name,), None)

    def summary_made(self, summary: Summary) -> None:
        """The summary is made: draw (or have the pool draw) its figures."""
        if self._pool is None:
            self._drawn = write_plots(self._args[0], summary, *self._args[1:])
            return
        for name in SUMMARY_FIGURES:
            if name != "sweep" or len(self._args[1]) > 1:
                self._submit((name,), summary)

    def _submit(self, names: tuple[str, ...], summary: Summary | None) -> None:
        """Have the pool draw ``names``, in that order, as one task."""
        if self._pool is None:
            return
        base, points, routers, replications = self._args
        first, scenario = points[0]
        point = Point(first.id, first.params)  # plain data: no sweep module to import
        if "mesh" in names:  # the only figure that needs the mesh (made once, sent once)
            scene = Scene.of(scenario)
        else:
            if self._scene is None:
                self._scene = Scene.of(scenario, mesh=False)
            scene = self._scene
        self._futures.append(
            self._pool.executor.submit(
                draw, base, summary, point, scene, routers, replications, len(points) > 1, names
            )
        )

    def paths(self) -> list[Path]:
        """The figures' paths in :data:`FIGURES` order, once every one is drawn."""
        if self._pool is None:
            return self._drawn
        drawn = {p.stem: p for f in self._futures for p in f.result()}
        order = [n for n in FIGURES if n != "sweep"] + [f"sweep_{m}" for m in SWEEP_METRICS]
        return [drawn[n] for n in order if n in drawn]
