"""``compare``: every router on the same seeds, per sweep point; summary, plots, report.

Common random numbers: replication ``k`` of every router (and every sweep point)
draws from the streams spawned from (scenario seed, k) (see
:mod:`sim.engine.randomness`), so routers are compared on the same arrivals, service
times, errors and failures.

Layout under ``base`` (``results/<scenario>`` or ``--out``)::

    <router>/rep-<k>/{trace.jsonl, metrics.json, series.json, view.json, view_events.jsonl,
                      run.json[, error.json]}
    p<i>/<router>/rep-<k>/...          (with a sweep; points.json maps p<i> to values)
    summary.json  summary.csv  plots/*.png  report.md  [against.json]

With ``against`` (the live runs of :mod:`sim.experiments.against`), ``against.json`` and
the report's section set the summary beside them; without, an ``against.json`` left by
an earlier ``compare --against`` is removed (it compared other runs' summary).

The folder is locked for the whole experiment (:class:`~sim.experiments.store.FolderLock`):
a second ``compare`` into it fails naming the holder's pid, or waits (``wait=True``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.engine.guard import DEFAULT_GUARD, Guard
from sim.engine.metrics import dumps
from sim.experiments.against import AGAINST_FILE, Live, compared, section
from sim.experiments.executors import inheriting
from sim.experiments.failing import why
from sim.experiments.figures import Drawing
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
from sim.experiments.summary import (
    About,
    Point,
    RunError,
    Summary,
    collect,
    summary_csv,
    summary_json,
)
from sim.experiments.sweep import SweepPoint
from sim.experiments.verdict import verdict
from sim.experiments.worker import (
    built,
    forget,
    in_memory,
    kept_page,
    remember,
    running_inline,
    ship,
)
from sim.processes import Stopped
from sim.scenario.model import Scenario

if TYPE_CHECKING:
    from sim.view.data import Ahead


@dataclass
class Outcome:
    """What a compare produced."""

    base: Path
    summary: Summary
    report: Path
    plots: list[Path]
    ran: list[RunRecord] = field(default_factory=list)
    skipped: int = 0
    wall: float = 0.0
    #: the comparison with the live runs (``against.json``), when asked
    against: dict[str, Any] | None = None

    @property
    def failed(self) -> tuple[RunError, ...]:
        """The crashed runs listed in the summary."""
        return self.summary.errors


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


class PageAhead:
    """What the page needs and a ``compare`` builds or reads before its runs are over
    (:class:`~sim.view.data.Ahead`), so that less is left to do once they are: the
    scenario's mesh and digest as the runs' worker cache built them (:func:`kept_page`:
    the parent of forked workers, or this process running them), else built at the
    first finished run (workers elsewhere: Dask's, spawned ones), and each finished run's
    fragment, read as its record comes (runs of ``scenario`` only, the one the page
    shows; the others' fragments are checked with another)."""

    def __init__(
        self,
        scenario: Scenario,
        points: Sequence[tuple[SweepPoint, Scenario]],
        tasks: Sequence[Task],
    ) -> None:
        self._scenario = scenario
        self._points = {p.id for p, s in points if s is scenario}
        self._fp = next((t.fingerprint for t in tasks if t.scenario is scenario), "")
        self._ahead: Ahead | None = None

    def ahead(self, build: bool = False) -> Ahead | None:
        """What is built and read so far (None: nothing, when no run of this process's
        worker cache was of the page's scenario); ``build``: else build the mesh and
        digest now (workers this process did not fork, e.g. Dask's: it waits for them)."""
        if self._ahead is None:
            known = kept_page(self._scenario, self._fp)
            if known is None and build:
                from sim.view.fragment import scenario_digest
                from sim.view.mesh import mesh_from_scenario

                known = (mesh_from_scenario(self._scenario), scenario_digest(self._scenario))
            if known is not None:
                from sim.view.data import Ahead

                self._ahead = Ahead(*known)
        return self._ahead

    def run_kept(self, base: Path, record: RunRecord) -> None:
        """``record``'s run is finished and ok: read its fragment now (never fatal to the
        runs: a fragment not read here is read with the page, which reports the error)."""
        if record.point in self._points and (ahead := self.ahead(build=True)) is not None:
            with contextlib.suppress(Exception):
                ahead.read(run_dir(base, record.point, record.router, record.rep))


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
    drawers: ExecutorHandle | None = None,
    against: Live | None = None,
) -> Outcome:
    """Lock ``base``, run what is missing, then write the summary, the plots (unless not
    ``plots``: ``plots/`` is then left as it is and the report shows none) and the report
    (with the live runs ``against``, the comparison: ``against.json`` and its section).
    ``drawers`` (:func:`~sim.experiments.figures.drawing_pool`, the caller's to close)
    draws the figures; without it a process pool ``handle`` does, else this process.

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
            drawers=drawers,
            against=against,
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
    drawers: ExecutorHandle | None,
    against: Live | None,
) -> Outcome:
    started = time.perf_counter()
    tasks = build_tasks(base, points, routers, replications, trace_level, guard)
    todo = plan(tasks, force=force)
    shipped: Path | None = None
    files: dict[str, str] = {}
    if handle.kind == "processes" and todo.todo:  # each worker loads each scenario once
        scenarios = {t.fingerprint: t.scenario for t in todo.todo}
        if handle.inherits():  # forked from here: no pickle, and what workers keep built
            # once (while the figures' pool imports matplotlib on the other core)
            built(todo.todo[0].scenario, todo.todo[0].fingerprint).prepare()
            files = in_memory(scenarios)
        else:
            shipped = Path(tempfile.mkdtemp(prefix="protomesh-scenarios-"))
            files = ship(scenarios, shipped)
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
    pool = drawers if drawers is not None else handle
    drawing = (
        Drawing(base, points, routers, replications, pool, ready=drawers is not None)
        if plots
        else None
    )
    left = len(todo.todo)  # the runs not finished yet
    page = PageAhead(base_scenario, points, todo.todo)
    try:
        if drawing is not None:
            drawing.runs_left(left, handle.workers)
            for task in todo.done:
                drawing.run_kept(task.point, task.router, task.rep)
        # what forked workers inherit stays frozen to the end: this process keeps it too,
        # and the summary's and page's collections need not walk it
        with inheriting(handle), running_inline(handle.kind == "inline"):
            readied = _ready_to_conclude(handle, left, False)
            for record in run_tasks(todo.todo, handle, hook=hook, report=report):
                left -= 1
                readied = _ready_to_conclude(handle, left, readied)
                if drawing is not None:  # every run is submitted by now
                    drawing.runs_started()
                    if left:  # the last one's record: the runs are over (below)
                        drawing.runs_left(left, handle.workers)
                ran.append(record)
                if record.status == "ok":
                    kept.append(record.key)
                    if drawing is not None:
                        drawing.run_kept(record.point, record.router, record.rep)
                    page.run_kept(base, record)
                if on_record is not None:
                    on_record(record)
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
                drawing,
                page.ahead(),
                against,
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
        forget(files)
        if shipped is not None:
            shutil.rmtree(shipped, ignore_errors=True)


#: What the summary and the page import once the runs are over (scipy.special: the
#: summary's Student t, 0.2-0.6 s on this machine; the explorer's page and its writer).
CONCLUDING_MODULES = ("scipy.special", "sim.view.page", "sim.atomic")


def _ready_to_conclude(handle: ExecutorHandle, left: int, readied: bool) -> bool:
    """Import :data:`CONCLUDING_MODULES` now (once: ``readied``) if the runs not finished
    (``left``) keep fewer workers busy than ``handle`` has: on the core the last runs
    leave, not after them. Nothing in this process when it runs the runs itself.
    Whether they are imported."""
    if readied or handle.kind == "inline" or left >= handle.workers:
        return readied
    for name in CONCLUDING_MODULES:
        importlib.import_module(name)
    return True


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
    drawing: Drawing | None,
    ahead: Ahead | None = None,
    against: Live | None = None,
) -> Outcome:
    """Summary, plots (``drawing``; None: none), page (with what was built for it ahead,
    :class:`PageAhead`) and report of the runs in ``base``, the runs being over (a pool
    draws the figures meanwhile: :class:`Drawing`)."""
    swept = [p for p, _ in points if p.id is not None]
    if drawing is not None:
        drawing.runs_over()
    summary_points = [Point(p.id, p.params) for p, _ in points]
    summary = collect(base, summary_points, routers, replications)
    scenarios = {p.id: scenario for p, scenario in points}
    results = tuple(
        row
        if row.failed_every_instance is None  # a router that failed every instance: say why
        else replace(
            row,
            failed_every_instance=replace(
                row.failed_every_instance, why=why(scenarios[row.point], row.router)
            ),
        )
        for row in summary.results
    )
    about = About(base_scenario.name, base_scenario.description, base_scenario.seed)
    summary = replace(summary, results=results, about=about)
    summary = replace(summary, verdict=verdict(summary, routers))
    _write(base / "summary.json", summary_json(summary))
    _write(base / "summary.csv", summary_csv(summary))
    if swept:
        _write(
            base / "points.json",
            dumps({str(p.id): p.params for p in swept}),
        )
    if drawing is not None:
        drawing.summary_made(summary)
    table = None  # before the page, which shows against.json
    if against is not None:
        table = compared(summary, against, routers, base_scenario.duration)
        _write(base / AGAINST_FILE, dumps(table))
    else:
        (base / AGAINST_FILE).unlink(missing_ok=True)
    try:  # the explorer beside report.md (sim.view); its failure loses no result above
        from sim.view import write_page

        runs = [
            run_dir(base, p.id, router, rep)
            for p, _ in points
            for router in routers
            for rep in range(replications)
        ]  # what the summary reads: never a run another command left in the folder
        write_page(base, base / "report.html", base_scenario, ahead=ahead, only=runs)
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
            sections=section(table, against.directory) if table and against else (),
        ),
    )
    return Outcome(base, summary, report_path, plot_paths, ran, len(todo.done), wall, table)
