"""The figures of a ``compare``: which, in what order, and who draws them.

:func:`draw` writes figures as ``base/plots/*.png`` from the run directories' series and
the summary. :class:`Drawing` has a process pool draw them, one task per figure, as soon
as what each one shows exists: the per-run figures once the runs are over (while
``compare`` makes the summary), the summary's once it is made (while ``compare`` writes
the page), costliest first, so the two workers end together; each worker imports
matplotlib before that, in a task queued behind the runs (a worker out of runs does it
while the other finishes its last one). Without a pool every figure is drawn in this
process once the summary is made. The PNGs are the same bytes either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from sim.experiments.executors import ExecutorHandle
from sim.experiments.summary import Point, series_of
from sim.experiments.sweep import SweepPoint
from sim.experiments.worker import load_scenario
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
SUMMARY_FIGURES: tuple[str, ...] = ("sweep", "drops_reroutes", "violations", "success_rate")


def write_plots(
    base: Path,
    summary: dict[str, Any],
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
    return draw(base, summary, first, scenario, routers, replications, len(points) > 1, FIGURES)


def draw(
    base: Path,
    summary: dict[str, Any],
    first: SweepPoint,
    scenario: Scenario,
    routers: Sequence[str],
    replications: int,
    swept: bool,
    names: Sequence[str],
) -> list[Path]:
    """The figures ``names`` (of :data:`FIGURES`) as ``base/plots/*.png``, in that order;
    ``first`` is the sweep point (and ``scenario`` its scenario) the per-router figures
    show; ``swept``: the experiment has more than one point."""
    from sim.experiments import plots

    out = base / "plots"
    written: list[Path] = []
    pid = first.id
    point = Point(pid, first.params)

    def emit(name: str, fig: Any) -> None:
        path = out / f"{name}.png"
        plots.save(fig, path)
        written.append(path)

    runs = {r: series_of(base, point, r, replications) for r in routers}
    first_runs = {r: runs[r][0] for r in routers if runs[r]}
    for name in names:
        if name == "latency_cdf":
            emit(name, plots.latency_cdf_figure(runs))
        elif name == "success_rate":
            emit(name, plots.success_rate_figure(summary, routers, pid))
        elif name == "violations":
            emit(name, plots.violations_figure(summary, routers, pid))
        elif name == "drops_reroutes":
            emit(name, plots.drops_reroutes_figure(summary, routers, pid))
        elif name == "timeline":
            emit(name, plots.timeline_figure(first_runs, float(scenario.duration)))
        elif name == "mesh":
            link_use = {r: dict(run.get("link_use", {})) for r, run in first_runs.items()}
            emit(name, plots.mesh_figure(scenario, link_use))
        elif name == "sweep" and swept:
            for metric in SWEEP_METRICS:
                emit(f"sweep_{metric}", plots.sweep_figure(summary, routers, metric))
    return written


def draw_shipped(
    base: Path,
    summary: dict[str, Any],
    first: SweepPoint,
    shipped: tuple[str, str],
    routers: Sequence[str],
    replications: int,
    swept: bool,
    names: Sequence[str],
) -> list[Path]:
    """:func:`draw` in a pool worker, the scenario loaded from its shipped ``(path,
    fingerprint)`` (:func:`sim.experiments.worker.ship`)."""
    scenario = load_scenario(*shipped)
    return draw(base, summary, first, scenario, routers, replications, swept, names)


def ready_to_draw() -> None:
    """Import the figures' modules (matplotlib: about 0.3 s), as a pool task."""
    from sim.experiments import plots  # noqa: F401


class Drawing:
    """The figures of an experiment being drawn (see the module). A process pool draws
    them when it was shipped the first point's scenario (``shipped``: its path and
    fingerprint); else this process does, in :meth:`summary_made`."""

    def __init__(
        self,
        base: Path,
        points: Sequence[tuple[SweepPoint, Scenario]],
        routers: Sequence[str],
        replications: int,
        handle: ExecutorHandle,
        shipped: tuple[str, str] | None,
    ) -> None:
        self._args = (base, points, list(routers), replications)
        self._pool = (
            (handle.executor, shipped, handle.workers)
            if handle.kind == "processes" and shipped and points
            else None
        )
        self._futures: list[Future[Any]] = []
        self._drawn: list[Path] = []
        self._readied = False

    def runs_started(self) -> None:
        """The runs are all submitted: queue each worker's import of matplotlib behind
        them (once)."""
        if self._pool is not None and not self._readied:
            self._readied = True
            executor, _, workers = self._pool
            for _ in range(workers):
                executor.submit(ready_to_draw)

    def runs_over(self) -> None:
        """The runs are over: the pool draws the per-run figures."""
        for name in RUN_FIGURES:
            self._submit(name, {})

    def summary_made(self, summary: dict[str, Any]) -> None:
        """The summary is made: draw (or have the pool draw) its figures."""
        if self._pool is None:
            self._drawn = write_plots(self._args[0], summary, *self._args[1:])
            return
        for name in SUMMARY_FIGURES:
            if name != "sweep" or len(self._args[1]) > 1:
                self._submit(name, summary)

    def _submit(self, name: str, summary: dict[str, Any]) -> None:
        if self._pool is None:
            return
        base, points, routers, replications = self._args
        executor, shipped, _ = self._pool
        self._futures.append(
            executor.submit(
                draw_shipped,
                base,
                summary,
                points[0][0],
                shipped,
                routers,
                replications,
                len(points) > 1,
                (name,),
            )
        )

    def paths(self) -> list[Path]:
        """The figures' paths in :data:`FIGURES` order, once every one is drawn."""
        if self._pool is None:
            return self._drawn
        drawn = {p.stem: p for f in self._futures for p in f.result()}
        order = [n for n in FIGURES if n != "sweep"] + [f"sweep_{m}" for m in SWEEP_METRICS]
        return [drawn[n] for n in order if n in drawn]
