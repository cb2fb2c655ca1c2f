"""``compare``: every router on the same seeds, per sweep point; summary, plots, report.

Common random numbers: replication ``k`` of every router (and every sweep point)
draws from the streams spawned from (scenario seed, k) (see
:mod:`sim.engine.randomness`), so routers are compared on the same arrivals, service
times, errors and failures.

Layout under ``base`` (``results/<scenario>`` or ``--out``)::

    <router>/rep-<k>/{trace.jsonl, metrics.json, series.json, view.json, view_events.jsonl,
                      run.json[, error.json]}
    p<i>/<router>/rep-<k>/...          (with a sweep; points.json maps p<i> to values)
    summary.json  summary.csv  plots/*.png  report.md

The folder is locked for the whole experiment (:class:`~sim.experiments.store.FolderLock`):
a second ``compare`` into it fails naming the holder's pid, or waits (``wait=True``).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.engine.guard import DEFAULT_GUARD, Guard
from sim.engine.metrics import dumps
from sim.experiments.executors import inheriting
from sim.experiments.report import render_report
from sim.experiments.runner import (
    ExecutorHandle,
    Hook,
    Plan,
    Reporter,
    RunRecord,
    Task,
    fingerprint,
    is_complete,
    plan,
    run_dir,
    run_tasks,
)
from sim.experiments.store import FolderLock, StorageError, write_atomic
from sim.experiments.summary import Point, collect, series_of, summary_csv, summary_json
from sim.experiments.sweep import SweepPoint
from sim.experiments.worker import forget, load_scenario, remember, ship
from sim.processes import Stopped
from sim.scenario.model import Scenario

#: Metrics drawn against the swept parameter.
SWEEP_METRICS: tuple[str, ...] = ("success_rate", "latency_p95", "messages_dropped")


@dataclass
class Outcome:
    """What a compare produced."""

    base: Path
    summary: dict[str, Any]
    report: Path
    plots: list[Path]
    ran: list[RunRecord] = field(default_factory=list)
    skipped: int = 0
    wall: float = 0.0

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The crashed runs listed in the summary."""
        errors: list[dict[str, Any]] = self.summary["errors"]
        return errors


def build_tasks(
    base: Path,
    points: Sequence[tuple[SweepPoint, Scenario]],
    routers: Sequence[str],
    replications: int,
    trace_level: str | None = None,
    guard: Guard | None = None,
) -> list[Task]:
    """Every (point, router, replication) as a task, in a fixed order (``guard``: the
    budgets of each; default :class:`~sim.engine.guard.Guard`'s)."""
    tasks: list[Task] = []
    for point, scenario in points:
        fp = fingerprint(scenario)
        for router in routers:
            for rep in range(replications):
                tasks.append(
                    Task(
                        scenario=scenario,
                        router=router,
                        rep=rep,
                        run_dir=str(run_dir(base, point.id, router, rep)),
                        point=point.id,
                        trace_level=trace_level,
                        fingerprint=fp,
                        guard=guard if guard is not None else DEFAULT_GUARD,
                    )
                )
    return tasks


def _write(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary name unique to this writer, then a rename)."""
    write_atomic(path, text)


def run_compare(
    base_scenario: Scenario,
    points: Sequence[tuple[SweepPoint, Scenario]],
    routers: Sequence[str],
    replications: int,
    base: Path,
    handle: ExecutorHandle,
    *,
    force: bool = False,
    trace_level: str | None = None,
    hook: Hook | None = None,
    report: Reporter | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    on_plan: Callable[[Plan], None] | None = None,
    wait: bool = False,
    on_wait: Callable[[str], None] | None = None,
    guard: Guard | None = None,
    plots: bool = True,
) -> Outcome:
    """Lock ``base``, run what is missing, then write the summary, the plots (unless not
    ``plots``: ``plots/`` is then left as it is and the report shows none) and the report.

    Raises :class:`~sim.experiments.store.FolderBusy` when another process holds ``base``
    (unless ``wait``), :class:`~sim.experiments.store.StorageError` when a write fails
    (its ``kept`` lists the finished runs), and :class:`~sim.processes.Stopped` (its
    detail counting the finished runs) when a signal stops the experiment."""
    with FolderLock(base, wait=wait, on_wait=on_wait):
        return _run_locked(
            base_scenario,
            points,
            routers,
            replications,
            base,
            handle,
            force=force,
            trace_level=trace_level,
            hook=hook,
            report=report,
            on_start=on_start,
            on_record=on_record,
            on_plan=on_plan,
            guard=guard,
            plots=plots,
        )


def _run_locked(
    base_scenario: Scenario,
    points: Sequence[tuple[SweepPoint, Scenario]],
    routers: Sequence[str],
    replications: int,
    base: Path,
    handle: ExecutorHandle,
    *,
    force: bool,
    trace_level: str | None,
    hook: Hook | None,
    report: Reporter | None,
    on_start: Callable[[int, int], None] | None,
    on_record: Callable[[RunRecord], None] | None,
    on_plan: Callable[[Plan], None] | None,
    guard: Guard | None,
    plots: bool,
) -> Outcome:
    started = time.perf_counter()
    tasks = build_tasks(base, points, routers, replications, trace_level, guard)
    todo = plan(tasks, force=force)
    shipped: Path | None = None
    files: dict[str, str] = {}
    if handle.kind == "processes" and todo.todo:  # each worker loads each scenario once
        shipped = Path(tempfile.mkdtemp(prefix="protomesh-scenarios-"))
        scenarios = {t.fingerprint: t.scenario for t in todo.todo}
        # workers forked from here find them in memory: no pickle is written for them
        files = ship(scenarios, shipped, write=not handle.inherits())
        for fp, path in files.items():  # a forked worker finds it loaded already
            remember(path, fp, scenarios[fp])
        todo = dataclasses.replace(
            todo,
            todo=tuple(
                dataclasses.replace(t, scenario_file=files[t.fingerprint]) for t in todo.todo
            ),
        )
    if on_plan is not None:
        on_plan(todo)
    if on_start is not None:
        on_start(len(todo.todo), len(todo.done))
    ran: list[RunRecord] = []
    kept = [t.key for t in todo.done]
    try:
        with inheriting(handle):
            for record in run_tasks(todo.todo, handle, hook=hook, report=report):
                ran.append(record)
                if record.status == "ok":
                    kept.append(record.key)
                if on_record is not None:
                    on_record(record)
        first = tasks[0].fingerprint if tasks else ""
        return _conclude(
            base_scenario,
            points,
            routers,
            replications,
            base,
            handle,
            ran,
            todo,
            started,
            (files[first], first) if first in files else None,
            plots,
        )
    except OSError as exc:
        error = StorageError.of(exc, base)
        raise StorageError(error.path, error.reason, tuple(kept)) from None
    except StorageError as exc:
        raise StorageError(exc.path, exc.reason, tuple(kept)) from None
    except Stopped as exc:
        # Counted on disk once no worker can write any more: a run a worker renamed into
        # place after its last record reached us is kept too, and resumed from.
        handle.terminate()
        done = sum(1 for t in tasks if is_complete(Path(t.run_dir), t.fingerprint))
        raise Stopped(
            exc.signum,
            f"{max(done, len(kept))} of {len(tasks)} run(s) finished and kept in {base}; "
            "the same command resumes",
        ) from None
    finally:
        if shipped is not None:
            forget(files)
            shutil.rmtree(shipped, ignore_errors=True)


def _conclude(
    base_scenario: Scenario,
    points: Sequence[tuple[SweepPoint, Scenario]],
    routers: Sequence[str],
    replications: int,
    base: Path,
    handle: ExecutorHandle,
    ran: list[RunRecord],
    todo: Plan,
    started: float,
    shipped: tuple[str, str] | None = None,
    plots: bool = True,
) -> Outcome:
    """Summary, plots, page and report of the runs in ``base`` (``shipped``: the first
    point's scenario as shipped to a process pool, which then draws the plots while
    this process makes the summary and writes the page: :class:`Drawing`)."""
    swept = [p for p, _ in points if p.id is not None]
    drawing = Drawing(base, points, routers, replications, handle, shipped) if plots else None
    summary_points = [Point(p.id, p.params) for p, _ in points]
    summary = collect(base, summary_points, routers, replications)
    summary = {
        "scenario": base_scenario.name,
        "description": base_scenario.description,
        "seed": base_scenario.seed,
        **summary,
    }
    _write(base / "summary.json", summary_json(summary))
    _write(base / "summary.csv", summary_csv(summary))
    if swept:
        _write(
            base / "points.json",
            dumps({str(p.id): p.params for p in swept}),
        )
    if drawing is not None:
        drawing.summary_made(summary)
    try:  # the explorer beside report.md (sim.view); its failure loses no result above
        from sim.view import write_page

        write_page(base, base / "report.html", base_scenario)
    except Exception as exc:
        warnings.warn(f"report.html not written: {exc}", RuntimeWarning, stacklevel=2)
    plot_paths = drawing.paths() if drawing is not None else []
    wall = time.perf_counter() - started
    report_path = base / "report.md"
    _write(
        report_path,
        render_report(
            summary,
            base_scenario,
            routers,
            plot_paths,
            base,
            wall=wall,
            executor=f"{handle.kind} ({handle.workers} worker{'s' if handle.workers != 1 else ''})",
            ran=len(ran),
            skipped=len(todo.done),
        ),
    )
    return Outcome(base, summary, report_path, plot_paths, ran, len(todo.done), wall)


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
#: How a pool draws them: two tasks, the per-run figures (from the moment the runs are
#: over) and the summary's (once it is made).
FIGURE_TASKS: tuple[tuple[str, ...], ...] = (
    ("latency_cdf", "timeline", "mesh"),
    ("success_rate", "violations", "drops_reroutes", "sweep"),
)


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


class Drawing:
    """The figures of an experiment being drawn, in :data:`FIGURES` order. A process pool
    that was shipped the first point's scenario draws them (:data:`FIGURE_TASKS`): the
    per-run figures from the moment this is made (the runs being over) while this process
    makes the summary, the summary's from :meth:`summary_made` while it writes the page.
    Else they are all drawn here, in :meth:`summary_made`. The PNGs are the same bytes
    either way."""

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
            (handle.executor, shipped)
            if handle.kind == "processes" and shipped and points
            else None
        )
        self._futures: list[Future[list[Path]]] = []
        self._drawn: list[Path] = []
        if self._pool is not None:
            self._submit(FIGURE_TASKS[0], {})

    def _submit(self, names: Sequence[str], summary: dict[str, Any]) -> None:
        base, points, routers, replications = self._args
        if self._pool is not None:
            executor, shipped = self._pool
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
                    names,
                )
            )

    def summary_made(self, summary: dict[str, Any]) -> None:
        """Draw (or have the pool draw) the figures of ``summary``."""
        if self._pool is not None:
            self._submit(FIGURE_TASKS[1], summary)
        else:
            self._drawn = write_plots(self._args[0], summary, *self._args[1:])

    def paths(self) -> list[Path]:
        """The figures' paths, once every one is drawn."""
        if self._pool is None:
            return self._drawn
        drawn = {p.stem: p for f in self._futures for p in f.result()}
        order = [n for n in FIGURES if n != "sweep"] + [f"sweep_{m}" for m in SWEEP_METRICS]
        return [drawn[n] for n in order if n in drawn]
