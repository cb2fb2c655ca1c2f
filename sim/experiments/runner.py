"""Replications as tasks, the executors that run them, resume and crash records.

A task is one (sweep point, router, replication). :func:`execute_task` is a plain,
picklable function: it runs :func:`sim.engine.run_replication` into a temporary
directory beside the run's final one, extracts the per-run series the plots need
(:mod:`sim.experiments.series`), writes ``run.json`` (what was run, with the
scenario's fingerprint), and only then renames the temporary directory to
``rep-<k>``: a killed sweep leaves complete run directories or ``.rep-<k>.tmp``
leftovers, never a half-written ``metrics.json`` under a final name.

A run whose replication raises gets ``error.json`` (scenario, router, replication,
simulated time, message) beside the trace written so far, under its final name; the
other tasks go on. On a re-run (``resume``), a run directory whose ``run.json``
carries the same fingerprint and whose ``metrics.json`` is complete is skipped;
everything else (missing, crashed, partial, another scenario) runs again.

Executors all implement :class:`concurrent.futures.Executor`: :class:`InlineExecutor`
(``jobs=1``, in this process), :class:`~concurrent.futures.ProcessPoolExecutor`
(``jobs>1``), and Dask's ``Client.get_executor()`` (``executor="dask"``). The results
never depend on which one runs a task, or in which order: each task's seeds come from
(scenario seed, replication) only, and the summary reads the run directories in a
fixed order.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import __version__
from sim.conformance import TraceError, check_run_dir
from sim.engine import ReplicationError, World, run_replication
from sim.engine.metrics import dumps
from sim.experiments.series import extract_series
from sim.scenario.model import Scenario

RUN_FILE = "run.json"
METRICS_FILE = "metrics.json"
ERROR_FILE = "error.json"
SERIES_FILE = "series.json"

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

    @property
    def key(self) -> str:
        """``[point/]router/rep-k``: a stable name for messages and progress."""
        prefix = f"{self.point}/" if self.point else ""
        return f"{prefix}{self.router}/rep-{self.rep}"


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


def run_dir(base: Path, point: str | None, router: str, rep: int) -> Path:
    """``base/[point/]router/rep-k``."""
    parts = [point] if point else []
    return base.joinpath(*parts, router, f"rep-{rep}")


def is_complete(directory: Path, fp: str) -> bool:
    """True when ``directory`` holds a finished run of the scenario with fingerprint ``fp``."""
    try:
        record = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
        metrics = json.loads((directory / METRICS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("fingerprint") == fp
        and record.get("status") == "ok"
        and isinstance(metrics, dict)
        and all(k in metrics for k in _REQUIRED_METRICS)
    )


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
    tmp = final.with_name(f".{final.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
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
    try:
        run_replication(
            task.scenario, task.router, task.rep, tmp, task.trace_level, hook=engine_hook
        )
    except ReplicationError as exc:
        record["status"] = "error"
        error = {
            "scenario": exc.scenario,
            "point": task.point,
            "router": exc.router,
            "replication": exc.rep,
            "sim_time": round(exc.now, 6),
            "error": f"{type(exc.cause).__name__}: {exc.cause}",
            "message": str(exc),
        }
        _write_json(tmp / ERROR_FILE, error)
        _write_json(tmp / RUN_FILE, record)
        _publish(tmp, final)
        return RunRecord(
            task.key,
            task.point,
            task.router,
            task.rep,
            "error",
            str(exc),
            exc.now,
            time.perf_counter() - started,
        )
    finally:
        stop.set()
        if sampler is not None:
            sampler.join()
    _write_json(tmp / SERIES_FILE, extract_series(tmp / "trace.jsonl", task.scenario, task.rep))
    _add_verdicts(tmp, task.scenario)
    record["status"] = "ok"
    _write_json(tmp / RUN_FILE, record)
    _publish(tmp, final)
    return RunRecord(
        task.key, task.point, task.router, task.rep, "ok", wall=time.perf_counter() - started
    )


def _add_verdicts(directory: Path, scenario: Scenario) -> None:
    """Check the run's trace (SPEC §6) and merge the verdicts into its ``metrics.json``.

    An unreadable trace is recorded as ``conformance.error``, never fatal to the run.
    """
    path = directory / METRICS_FILE
    metrics = json.loads(path.read_text(encoding="utf-8"))
    try:
        metrics.update(check_run_dir(directory, scenario))
    except TraceError as exc:
        metrics["conformance"] = {"ok": False, "error": str(exc)}
    _write_json(path, metrics)


def _publish(tmp: Path, final: Path) -> None:
    """Replace ``final`` by ``tmp`` (a rename: the run appears whole or not at all)."""
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


# --- executors ---------------------------------------------------------------------------


class InlineExecutor(Executor):
    """A :class:`concurrent.futures.Executor` that runs each task at once, in this process."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the caller sees it through the future
            future.set_exception(exc)
        return future


EXECUTORS: tuple[str, ...] = ("local", "dask")


@dataclass
class ExecutorHandle:
    """An executor and what to close when done (a Dask client)."""

    executor: Executor
    kind: str  # "inline" | "processes" | "dask"
    workers: int
    _close: list[Callable[[], Any]] = field(default_factory=list)

    def close(self) -> None:
        """Shut the executor (and its client) down."""
        self.executor.shutdown(wait=True)
        for fn in self._close:
            fn()


def default_jobs() -> int:
    """The default worker count: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def make_executor(
    kind: str = "local", jobs: int = 1, scheduler: str | None = None
) -> ExecutorHandle:
    """``local`` with ``jobs=1``: in-process; ``local`` with more: a process pool;
    ``dask``: a Dask distributed client on ``scheduler`` (an address, or a
    ``LocalCluster``-like object with ``scheduler_address``), through its
    ``concurrent.futures`` executor. Raises ``ValueError`` on a bad choice and
    ``ImportError`` when Dask is not installed."""
    if kind == "local":
        if jobs <= 1:
            return ExecutorHandle(InlineExecutor(), "inline", 1)
        return ExecutorHandle(ProcessPoolExecutor(max_workers=jobs), "processes", jobs)
    if kind == "dask":
        if not scheduler:
            raise ValueError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
        from distributed import Client

        client = Client(scheduler)  # type: ignore[no-untyped-call]
        workers = len(client.scheduler_info().get("workers", {})) or 1
        executor = client.get_executor()  # type: ignore[no-untyped-call]
        return ExecutorHandle(executor, "dask", workers, [client.close])
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not '{kind}'")


# --- running a set of tasks --------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """The tasks of an experiment, split into those to run and those already done."""

    todo: tuple[Task, ...]
    done: tuple[Task, ...]


def plan(tasks: Iterable[Task], *, force: bool = False) -> Plan:
    """Split ``tasks``: with ``force`` every task runs; else finished runs are skipped."""
    todo: list[Task] = []
    done: list[Task] = []
    for task in tasks:
        if not force and is_complete(Path(task.run_dir), task.fingerprint):
            done.append(task)
        else:
            todo.append(task)
    return Plan(tuple(todo), tuple(done))


def run_tasks(
    tasks: Iterable[Task],
    handle: ExecutorHandle,
    *,
    hook: Hook | None = None,
    report: Reporter | None = None,
) -> Iterator[RunRecord]:
    """Submit every task to ``handle``'s executor; yield records as runs finish.

    A task whose worker itself fails (not a replication error, which is recorded in
    its directory: e.g. a worker killed) yields an ``error`` record with the reason.
    """
    futures: dict[Future[RunRecord], Task] = {}
    for task in tasks:
        futures[handle.executor.submit(execute_task, task, hook, report)] = task
    for future in as_completed(futures):
        task = futures[future]
        try:
            yield future.result()
        except Exception as exc:  # a worker that died, a task that could not be sent
            yield RunRecord(
                task.key, task.point, task.router, task.rep, "error", f"{type(exc).__name__}: {exc}"
            )
