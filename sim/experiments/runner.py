"""Replications as tasks, the executors that run them, resume and crash records.

A task is one (sweep point, router, replication). :func:`execute_task` is a plain,
picklable function: it runs :func:`sim.engine.run_replication` into a temporary
directory unique to its writer (:func:`sim.experiments.store.temp_name`), extracts the
per-run series the plots need (:mod:`sim.experiments.series`), writes ``run.json``
(what was run, the scenario's fingerprint and the SHA-256 of each file), and only then
renames the directory to ``rep-<k>``: a killed sweep leaves complete run directories
or temporary leftovers, never a half-written ``metrics.json`` under a final name.

A run whose replication raises gets ``error.json`` (scenario, router, replication,
simulated time, message) beside the trace written so far, under its final name; the
other tasks go on. On a re-run (``resume``), a run directory is reused only when its
``run.json`` says ``ok`` with the same fingerprint, no ``error.json`` is there and every
file has its recorded digest (:func:`reuse_problem`); everything else runs again, and a
run that was there but damaged is named with the reason. An ``OSError`` while writing
(a full disk) is a :class:`~sim.experiments.store.StorageError`, which stops the
experiment.

The executors (:mod:`sim.experiments.executors`, their names re-exported here) all
implement :class:`concurrent.futures.Executor`. The results never depend on which one
runs a task, or in which order: each task's seeds come from (scenario seed, replication)
only, and the summary reads the run directories in a fixed order.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, as_completed, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim import __version__
from sim.engine import ReplicationError, World, run_replication
from sim.engine.guard import DEFAULT_GUARD, Guard
from sim.engine.metrics import dumps
from sim.experiments.checked import RunChecks
from sim.experiments.executors import EXECUTORS as EXECUTORS  # re-exported
from sim.experiments.executors import ExecutorHandle as ExecutorHandle
from sim.experiments.executors import InlineExecutor as InlineExecutor
from sim.experiments.executors import default_jobs as default_jobs
from sim.experiments.executors import make_executor as make_executor
from sim.experiments.rundir import CHECKING
from sim.experiments.rundir import ERROR_FILE as ERROR_FILE  # re-exported
from sim.experiments.rundir import METRICS_FILE as METRICS_FILE
from sim.experiments.rundir import RUN_FILE as RUN_FILE
from sim.experiments.rundir import SERIES_FILE as SERIES_FILE
from sim.experiments.rundir import TRACE_FILE as TRACE_FILE
from sim.experiments.rundir import VERIFIED_FILES as VERIFIED_FILES
from sim.experiments.rundir import run_dir as run_dir
from sim.experiments.store import StorageError, damage, digests, publish, temp_name
from sim.experiments.worker import (
    ScenarioNotHeld,
    built,
    held_scenario,
    load_scenario,
    run_series,
)
from sim.experiments.worker import running_inline as running_inline  # re-exported
from sim.scenario.model import Scenario

#: Keys a complete ``metrics.json`` has (a truncated file fails to parse or lacks one).
_REQUIRED_METRICS = ("workflows", "latency", "messages", "replication", "router")

Hook = Callable[[World], None]
#: Called in the worker with (task key, simulated time now) while a run goes.
Reporter = Callable[[str, float], None]


def fingerprint(scenario: Scenario) -> str:
    """A digest of everything that decides a run's bytes (the scenario and the version)."""
    text = scenario.model_dump_json(by_alias=True)
    return hashlib.sha256(f"{__version__}\n{text}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Task:
    """One replication to run: the scenario (of its sweep point), router and index."""

    scenario: Scenario
    router: str
    rep: int
    run_dir: str
    point: str | None = None
    trace_level: str | None = None
    fingerprint: str = ""
    #: where a pool worker loads the scenario from (:func:`sim.experiments.worker.ship`):
    #: set, the task is pickled without its scenario
    scenario_file: str = ""
    #: the run's budgets (never part of its bytes: not in the fingerprint)
    guard: Guard = DEFAULT_GUARD

    def __reduce__(self) -> Any:
        if not self.scenario_file:
            return super().__reduce__()
        return (shipped_task, (self.scenario_file, *self.fields()))

    def fields(self) -> tuple[Any, ...]:
        """Everything but the scenario (small, picklable): :func:`execute_held`'s."""
        return (
            self.fingerprint,
            self.router,
            self.rep,
            self.run_dir,
            self.point,
            self.trace_level,
            self.guard,
        )

    @property
    def key(self) -> str:
        """``[point/]router/rep-k``: a stable name for messages and progress."""
        prefix = f"{self.point}/" if self.point else ""
        return f"{prefix}{self.router}/rep-{self.rep}"


def shipped_task(
    path: str,
    fp: str,
    router: str,
    rep: int,
    directory: str,
    point: str | None,
    trace_level: str | None,
    guard: Guard,
) -> Task:
    """A task unpickled in a worker: its scenario loaded once per worker from ``path``
    (:func:`sim.experiments.worker.load_scenario`)."""
    scenario = load_scenario(path, fp)
    return Task(scenario, router, rep, directory, point, trace_level, fp, path, guard)


@dataclass(frozen=True)
class RunRecord:
    """What became of one task (returned by the worker; small and picklable)."""

    key: str
    point: str | None
    router: str
    rep: int
    status: str  # "ok" | "error" | "skipped"
    error: str | None = None
    sim_time: float | None = None
    wall: float = 0.0


def reuse_problem(directory: Path, fp: str) -> str | None:
    """Why ``directory`` is not a finished run of the scenario with fingerprint ``fp``
    (None: it is, and can be reused)."""
    if not directory.exists():
        return "missing"
    try:
        record = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{RUN_FILE} is missing"
    except (OSError, ValueError) as exc:
        return f"{RUN_FILE} cannot be read: {exc}"
    if not isinstance(record, dict):
        return f"{RUN_FILE} is not an object"
    if record.get("status") != "ok":
        return "it failed before"
    if record.get("fingerprint") != fp:
        return "it is a run of another scenario or version"
    if (directory / ERROR_FILE).exists():
        return f"{ERROR_FILE} is present beside an ok {RUN_FILE}"
    files = record.get("files")
    problem = damage(directory, files if isinstance(files, dict) else {})
    if problem is not None:
        return problem
    try:
        metrics = json.loads((directory / METRICS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{METRICS_FILE} cannot be read"
    if not isinstance(metrics, dict) or not all(k in metrics for k in _REQUIRED_METRICS):
        return f"{METRICS_FILE} is incomplete"
    return None


def is_complete(directory: Path, fp: str) -> bool:
    """True when ``directory`` holds a finished, intact run with fingerprint ``fp``."""
    return reuse_problem(directory, fp) is None


def _write_json(path: Path, data: Any) -> None:
    path.write_text(dumps(data), encoding="utf-8")


def _sampler(world_box: list[World], key: str, report: Reporter, stop: threading.Event) -> None:
    """Report the running world's simulated time twice a second (reads only)."""
    while not stop.wait(0.5):
        if world_box:
            report(key, float(world_box[0].env.now))


def execute_task(task: Task, hook: Hook | None = None, report: Reporter | None = None) -> RunRecord:
    """Run ``task`` into its directory atomically; never raises for a crashed replication.

    ``hook`` is passed to the engine (tests use it to inject a crash); ``report``, if
    given, receives the simulated time of the run from a sampling thread that only
    reads the world's clock, so the run's bytes do not depend on it.
    """
    final = Path(task.run_dir)
    tmp = temp_name(final)
    try:
        return _execute(task, final, tmp, hook, report)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)  # give the space back
        raise StorageError.of(exc, final) from None


def execute_held(
    fp: str,
    fields: tuple[Any, ...],
    hook: Hook | None = None,
    report: Reporter | None = None,
) -> RunRecord:
    """:func:`execute_task` of the task with :meth:`Task.fields` ``fields`` and the
    scenario with fingerprint ``fp`` this Dask worker holds (handed over once:
    :meth:`ExecutorHandle.hand_over`); raises
    :class:`~sim.experiments.worker.ScenarioNotHeld` when it holds none."""
    scenario = held_scenario(fp)
    fp_of_run, router, rep, directory, point, level, guard = fields
    task = Task(scenario, router, rep, directory, point, level, fp_of_run, "", guard)
    return execute_task(task, hook, report)


def _located(exc: ReplicationError, task: Task) -> str:
    """The replication's error; a plug-in's (a router or approval policy that misbehaved)
    located first at its entry in the scenario file, when the task knows the file."""
    from sim.approval import ApprovalPolicyError
    from sim.mesh.errors import RouterError

    if task.guard.source is None:
        return str(exc)
    from sim.mesh.registry import router_field
    from sim.scenario.compose import locate_field

    if isinstance(exc.cause, RouterError):
        path = router_field(task.scenario, exc.router)
    elif isinstance(exc.cause, ApprovalPolicyError):
        path = ("approval", "policy", "plugin")
    else:
        return str(exc)
    return f"{locate_field(task.guard.source, path)}: {exc}"


def _execute(
    task: Task, final: Path, tmp: Path, hook: Hook | None, report: Reporter | None
) -> RunRecord:
    tmp.mkdir(parents=True)
    started = time.perf_counter()
    world_box: list[World] = []

    def engine_hook(world: World) -> None:
        world_box.append(world)
        if hook is not None:
            hook(world)

    stop = threading.Event()
    sampler: threading.Thread | None = None
    if report is not None:
        sampler = threading.Thread(
            target=_sampler, args=(world_box, task.key, report, stop), daemon=True
        )
        sampler.start()
    record: dict[str, Any] = {
        "scenario": task.scenario.name,
        "point": task.point,
        "router": task.router,
        "replication": task.rep,
        "seed": task.scenario.seed,
        "fingerprint": task.fingerprint,
        "version": __version__,
    }
    level = task.trace_level or task.scenario.trace.value
    kept = built(task.scenario, task.fingerprint, checked=level != "off")
    checks = RunChecks(tmp, kept)  # fed the trace as the engine writes it
    try:
        run_replication(
            task.scenario,
            task.router,
            task.rep,
            tmp,
            task.trace_level,
            graph=kept.graph,
            compiled_router=kept.router(task.router),
            hook=engine_hook,
            guard=task.guard,
            topology=kept.topology(),
            tap=checks.tap,
        )
    except ReplicationError as exc:
        checks.close()
        if isinstance(exc.cause, OSError):
            raise exc.cause from None
        message = _located(exc, task)
        record["status"] = "error"
        error = {
            "scenario": exc.scenario,
            "point": task.point,
            "router": exc.router,
            "replication": exc.rep,
            "sim_time": round(exc.now, 6),
            "error": f"{type(exc.cause).__name__}: {exc.cause}",
            "message": message,
        }
        _write_json(tmp / ERROR_FILE, error)
        _write_json(tmp / RUN_FILE, record)
        publish(tmp, final)
        return RunRecord(
            task.key,
            task.point,
            task.router,
            task.rep,
            "error",
            message,
            exc.now,
            time.perf_counter() - started,
        )
    except BaseException:
        checks.close()
        raise
    finally:
        stop.set()
        if sampler is not None:
            sampler.join()
    if report is not None:  # the simulation is over: the verdicts are written now
        report(task.key, CHECKING)
    world = world_box[0]
    _write_json(tmp / SERIES_FILE, run_series(world, level, task.scenario, task.rep))
    checks.merge()
    record["status"] = "ok"
    from sim.view.fragment import EVENTS_FILE, VIEW_FILE

    page = [n for n in (VIEW_FILE, EVENTS_FILE) if (tmp / n).exists()]
    files = digests(tmp, [n for n in (*VERIFIED_FILES, *page) if n != TRACE_FILE])
    record["files"] = {TRACE_FILE: checks.trace_digest(), **files}  # digested as tapped
    _write_json(tmp / RUN_FILE, record)
    publish(tmp, final)
    return RunRecord(
        task.key, task.point, task.router, task.rep, "ok", wall=time.perf_counter() - started
    )


def record_failure(task: Task, reason: str) -> None:
    """A task that died outside the replication (e.g. its worker was killed): its directory
    becomes a failed run (``run.json`` with status error and ``error.json``), atomically."""
    final = Path(task.run_dir)
    tmp = temp_name(final)
    try:
        tmp.mkdir(parents=True)
        _write_json(
            tmp / ERROR_FILE,
            {
                "point": task.point,
                "router": task.router,
                "replication": task.rep,
                "sim_time": None,
                "error": reason,
                "message": f"the task failed outside the replication: {reason}",
            },
        )
        _write_json(
            tmp / RUN_FILE,
            {
                "scenario": task.scenario.name,
                "point": task.point,
                "router": task.router,
                "replication": task.rep,
                "fingerprint": task.fingerprint,
                "status": "error",
            },
        )
        publish(tmp, final)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StorageError.of(exc, final) from None


# --- running a set of tasks --------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """The tasks of an experiment, split into those to run and those already done;
    ``damaged`` names the runs to redo that were there but cannot be reused, and why."""

    todo: tuple[Task, ...]
    done: tuple[Task, ...]
    damaged: tuple[tuple[Task, str], ...] = ()


def plan(tasks: Iterable[Task], *, force: bool = False) -> Plan:
    """Split ``tasks``: with ``force`` every task runs; else finished runs are skipped."""
    todo: list[Task] = []
    done: list[Task] = []
    damaged: list[tuple[Task, str]] = []
    for task in tasks:
        problem = None if force else reuse_problem(Path(task.run_dir), task.fingerprint)
        if force or problem is not None:
            todo.append(task)
            if problem not in (None, "missing", "it failed before"):
                damaged.append((task, str(problem)))
        else:
            done.append(task)
    return Plan(tuple(todo), tuple(done), tuple(damaged))


def run_tasks(
    tasks: Iterable[Task],
    handle: ExecutorHandle,
    *,
    hook: Hook | None = None,
    report: Reporter | None = None,
) -> Iterator[RunRecord]:
    """Submit every task to ``handle``'s executor; yield records as runs finish.

    A task whose worker itself fails (not a replication error, which is recorded in
    its directory: e.g. a worker killed) is recorded as a failed run and yields an
    ``error`` record with the reason. A :class:`StorageError` stops everything: the
    tasks not started are cancelled and the error raised. On Dask each scenario is handed
    over to the workers lacking it (:meth:`ExecutorHandle.hand_over`) and each task
    carries its fingerprint instead, under an explicit key; a task whose worker lacked it
    is handed it and submitted again (:data:`RESENT` times at most).
    """
    if handle.kind == "inline":  # one at a time: a stop or a full disk ends the loop
        for task in tasks:
            yield _settle(task, handle.executor.submit(execute_task, task, hook, report), ())
        return
    if handle.kind != "dask":
        futures = {handle.executor.submit(execute_task, t, hook, report): t for t in tasks}
        for future in as_completed(futures):
            yield _settle(futures[future], future, futures)
        return
    tasks = list(tasks)
    fps = [t.fingerprint or fingerprint(t.scenario) for t in tasks]
    scenarios = {fp: t.scenario for fp, t in zip(fps, tasks, strict=True)}
    handle.hand_over(scenarios)  # each sent to the workers lacking it only
    token = uuid.uuid4().hex
    pending: dict[Future[RunRecord], tuple[Task, str, int]] = {}

    def submit(task: Task, fp: str, resent: int) -> None:  # named, never hashed
        name = f"protomesh-run-{token}-{task.key}" + (f"-again-{resent}" if resent else "")
        future = handle.submit_named(name, execute_held, fp, task.fields(), hook, report)
        pending[future] = (task, fp, resent)

    for task, fp in zip(tasks, fps, strict=True):
        submit(task, fp, 0)
    while pending:
        for future in wait(pending, return_when=FIRST_COMPLETED)[0]:
            task, fp, resent = pending.pop(future)
            if resent < RESENT and missed_hand_over(future):  # its Dask worker came after
                handle.hand_over({fp: task.scenario}, keep=scenarios)
                submit(task, fp, resent + 1)
            else:
                yield _settle(task, future, pending)


#: how many times a task whose Dask worker did not hold its scenario (it joined, or was
#: restarted, after the hand-over) is handed it and submitted again
RESENT = 3


def missed_hand_over(future: Future[Any]) -> bool:
    """Whether ``future``'s task failed for want of its scenario on its Dask worker (waits
    for it: a stop while waiting is raised, never caught)."""
    return not future.cancelled() and isinstance(future.exception(), ScenarioNotHeld)


def _settle(
    task: Task, future: Future[RunRecord], others: Iterable[Future[RunRecord]]
) -> RunRecord:
    """The record of a finished future (see :func:`run_tasks`)."""
    try:
        return future.result()
    except StorageError:
        for pending in others:
            pending.cancel()
        raise
    except Exception as exc:  # a worker that died, a task that could not be sent
        reason = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, BrokenProcessPool):  # os._exit cannot be caught where it runs
            reason = (
                "BrokenProcessPool: a worker process ended abruptly while this run was "
                "running or queued (killed, out of memory, or code such as a plug-in "
                "calling os._exit)"
            )
        record_failure(task, reason)
        return RunRecord(task.key, task.point, task.router, task.rep, "error", reason)
