"""The executors that run an experiment's tasks, all :class:`concurrent.futures.Executor`:
:class:`InlineExecutor` (``jobs=1``, in this process), a
:class:`~concurrent.futures.ProcessPoolExecutor` (``jobs>1``; its workers ignore SIGINT
and die with their parent) and Dask's ``Client.get_executor()`` (``executor="dask"``).
:meth:`ExecutorHandle.terminate` stops a pool's workers when a command is stopped.

A pool whose workers are forked (:meth:`ExecutorHandle.inherits`) is started at its first
task: what this process holds then (the scenarios, their pickles never written) is in
every worker's memory for free; :func:`inheriting` freezes it for the fork, so that the
workers' garbage collector never walks (and copies, page by page) what they inherited.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sim.longlived import freeze, is_frozen, unfreeze
from sim.processes import GRACE, terminate

if TYPE_CHECKING:
    from sim.scenario.model import Scenario


class InlineExecutor(Executor):
    """A :class:`concurrent.futures.Executor` that runs each task at once, in this process."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # the caller sees it through the future
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
    _closed: bool = False
    #: how a pool starts its workers ("fork", "spawn", "forkserver"; "" when no pool)
    start_method: str = ""
    #: the Dask client (``kind == "dask"``), else None
    client: Any = None

    def hand_over(self, scenarios: Mapping[str, Scenario], keep: Collection[str] = ()) -> None:
        """On Dask, have every worker hold each of ``scenarios`` (by fingerprint) for the
        tasks that name it (:func:`~sim.experiments.worker.held_scenario`): the workers
        are asked which they hold (one round trip), and a scenario is pickled once and
        sent to the workers lacking it only, none when all hold it (from an earlier
        command: a cluster outlives them). ``keep``: more fingerprints of the command,
        which the workers keep too. A worker that fails to answer or to take it is left
        out: its tasks find the scenario missing and are handed it again
        (:func:`~sim.experiments.runner.run_tasks`). Nothing on other executors."""
        if self.client is None or not scenarios:
            return
        from sim.experiments.worker import hold, holding

        fps = list(scenarios)
        found: dict[str, list[str]] = self.client.run(holding, fps, on_error="ignore")
        lacking: dict[frozenset[str], list[str]] = {}  # fingerprints -> workers lacking them
        for address, held in found.items():
            if missing := frozenset(fps) - set(held):
                lacking.setdefault(missing, []).append(address)
        blobs: dict[str, bytes] = {}
        for missing, workers in lacking.items():
            for fp in missing - blobs.keys():
                blobs[fp] = pickle.dumps(scenarios[fp], protocol=pickle.HIGHEST_PROTOCOL)
            sent = {fp: blobs[fp] for fp in sorted(missing)}
            kept = sorted({*fps, *keep})
            self.client.run(hold, sent, kept, workers=workers, on_error="ignore")

    def submit_named(self, key: str, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        """Submit ``fn(*args)``; on Dask under the explicit ``key`` (unique to the task
        and the experiment) and not pure: Dask would otherwise name the task by
        tokenizing ``fn`` and every argument, pickling them (a scenario included). A Dask
        worker in a process of its own keeps what it builds for a scenario frozen out of
        its collector (:func:`sim.experiments.worker.on_cluster`)."""
        if self.client is None:
            return self.executor.submit(fn, *args)
        from sim.experiments.worker import on_cluster

        task: Callable[..., Any] = on_cluster
        return self.executor.submit(task, os.getpid(), fn, *args, key=key, pure=False)

    def inherits(self) -> bool:
        """True when this is a pool whose workers are yet to be forked from this process:
        they will find in memory what this process holds when it submits the first task
        (a pool forks every worker then, and never forks another one)."""
        if self.start_method != "fork" or not isinstance(self.executor, ProcessPoolExecutor):
            return False
        return not getattr(self.executor, "_processes", None)

    def close(self) -> None:
        """Shut the executor (and its client) down (once)."""
        if self._closed:
            return
        self._closed = True
        self.executor.shutdown(wait=True)
        for fn in self._close:
            fn()

    def terminate(self) -> None:
        """Stop now: cancel the tasks not started, SIGTERM the pool's workers (SIGKILL after
        a grace period), release the executor without waiting for running tasks."""
        if self._closed:
            return
        self._closed = True
        workers: list[int] = []
        # The pool's manager thread closes its wake-up pipe once the workers are gone;
        # Python 3.11's exit hook wakes that thread without its lock, so an exit that
        # overlaps the closing writes to a closed pipe (a traceback): it is waited for
        # below (taken now: shutdown forgets it).
        manager = getattr(self.executor, "_executor_manager_thread", None)
        if isinstance(self.executor, ProcessPoolExecutor):
            processes = getattr(self.executor, "_processes", None) or {}
            workers = [p.pid for p in list(processes.values()) if p.pid is not None]
        if isinstance(self.executor, ProcessPoolExecutor | InlineExecutor):
            self.executor.shutdown(wait=False, cancel_futures=True)
        else:  # Dask's executor takes no cancel_futures; its client is closed below
            with contextlib.suppress(Exception):
                self.executor.shutdown(wait=False)
        terminate(workers)
        if manager is not None:
            manager.join(timeout=GRACE)
        for fn in self._close:
            with contextlib.suppress(Exception):
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
        context = multiprocessing.get_context()
        from sim.experiments.worker import pool_worker_start

        pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=pool_worker_start,
            initargs=(os.getpid(),),
        )
        return ExecutorHandle(pool, "processes", jobs, start_method=context.get_start_method())
    if kind == "dask":
        if not scheduler:
            raise ValueError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
        thawing = _held_to_the_end()
        try:
            from distributed import Client

            client = Client(scheduler)  # type: ignore[no-untyped-call]
            workers = len(client.scheduler_info().get("workers", {})) or 1
            executor = client.get_executor()  # type: ignore[no-untyped-call]
        except BaseException:
            thawing()
            raise
        closing = [client.close, thawing]
        return ExecutorHandle(executor, "dask", workers, closing, client=client)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not '{kind}'")


def _held_to_the_end() -> Callable[[], None]:
    """Freeze what this process holds (:func:`gc.freeze`) while it is a Dask client: the
    scenarios and the modules it imported live to the command's end, and the collections
    that importing ``distributed`` and reading the runs' fragments start would each walk
    them (a 10,000-agent scenario: 2-3 more full collections than a pool's parent,
    which :func:`inheriting` freezes, 0.7-1.5 s at load 8). Returns what unfreezes it
    (nothing when it was frozen already: that freeze is someone else's)."""
    if is_frozen():
        return lambda: None
    freeze()
    return unfreeze


@contextlib.contextmanager
def inheriting(handle: ExecutorHandle) -> Iterator[None]:
    """While the block submits the first tasks of a pool that forks its workers, what this
    process holds is frozen out of the garbage collector (:func:`gc.freeze`): the workers
    inherit it, and their collections never walk it (each walk writes every object's
    header, copying the parent's memory page by page into every worker); nor do this
    process's until the block ends. Unfrozen after the block; nothing when the pool does
    not fork (or already has its workers)."""
    if not handle.inherits():
        yield
        return
    freeze()
    try:
        yield
    finally:
        unfreeze()
