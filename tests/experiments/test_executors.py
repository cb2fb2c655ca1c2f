"""Executors: a pool that forks its workers hands them what the parent holds (no scenario
pickle, the parent's objects frozen out of the workers' garbage collector); a pool that
does not is shipped the pickles, with the same results."""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from sim.experiments.compare import run_compare
from sim.experiments.executors import ExecutorHandle, inheriting, make_executor
from sim.experiments.sweep import expand, load_points
from sim.processes import worker_start
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "fixtures" / "scenarios" / "small_mesh.yaml"
FORKS = "fork" in multiprocessing.get_all_start_methods()


def _pool(method: str) -> ExecutorHandle:
    context = multiprocessing.get_context(method)
    pool = ProcessPoolExecutor(
        max_workers=2, mp_context=context, initializer=worker_start, initargs=(os.getpid(),)
    )
    return ExecutorHandle(pool, "processes", 2, start_method=method)


@pytest.mark.skipif(not FORKS, reason="no fork on this platform")
def test_a_forking_pool_inherits_until_its_workers_are_forked() -> None:
    handle = _pool("fork")
    try:
        assert handle.inherits()
        assert handle.executor.submit(os.getpid).result() != os.getpid()
        assert not handle.inherits()  # forked now: later objects are not theirs
    finally:
        handle.close()
    assert not make_executor("local", 1).inherits()


def test_terminate_returns_once_the_pool_has_let_go_of_its_pipes() -> None:
    """A stop (terminate) ends with the pool's manager thread: Python 3.11's exit hook
    wakes that thread without its lock, and one still closing its pipe makes the exit
    print a traceback (OSError: Bad file descriptor)."""
    handle = make_executor("local", 2)
    busy = [handle.executor.submit(time.sleep, 30) for _ in range(3)]
    assert len(handle.executor._processes) == 2  # type: ignore[attr-defined]
    manager = handle.executor._executor_manager_thread  # type: ignore[attr-defined]
    assert manager is not None and manager.is_alive()
    wakeup = handle.executor._executor_manager_thread_wakeup  # type: ignore[attr-defined]
    close = wakeup.close

    def slow_close() -> None:  # a manager thread slower to let go than the workers to die
        time.sleep(0.3)
        close()

    wakeup.close = slow_close
    handle.terminate()  # the workers killed mid-task, as a stop finds a compare's drawers
    assert wakeup._closed and not manager.is_alive()
    assert all(f.done() for f in busy)  # cancelled, or broken with their workers


def test_a_spawning_pool_never_inherits() -> None:
    handle = _pool("spawn")
    try:
        assert not handle.inherits()
    finally:
        handle.close()


@pytest.mark.skipif(not FORKS, reason="no fork on this platform")
def test_inheriting_freezes_the_heap_only_for_a_pool_about_to_fork() -> None:
    assert gc.get_freeze_count() == 0
    handle = _pool("fork")
    try:
        with inheriting(handle):
            assert gc.get_freeze_count() > 0
            handle.executor.submit(os.getpid).result()
        assert gc.get_freeze_count() == 0
        with inheriting(handle):  # its workers exist already
            assert gc.get_freeze_count() == 0
    finally:
        handle.close()
    with inheriting(make_executor("local", 1)):
        assert gc.get_freeze_count() == 0


def _settled(path: Path, fp: str = "fp-settled") -> tuple[bool, bool, int, bool, int]:
    """In a worker: what :func:`built` leaves (truth and page built, gc frozen)."""
    from sim.experiments.worker import built

    kept = built(load_scenario(path), fp)
    done = kept._truth is not None and kept._page is not None and kept._topology is not None
    again = built(load_scenario(path), "") is kept
    return done, gc.get_freeze_count() > 0, os.getpid(), again, id(kept.graph)


@pytest.mark.skipif(not FORKS, reason="no fork on this platform")
def test_a_pool_worker_builds_what_it_keeps_at_once_and_freezes_it() -> None:
    handle = make_executor("local", 2)
    try:
        done, frozen, pid, shared, _ = handle.executor.submit(_settled, SMALL).result()
    finally:
        handle.close()
    assert pid != os.getpid() and done and frozen and not shared
    from sim.experiments.worker import built

    inline = built(load_scenario(SMALL), "fp-inline")  # this process keeps nothing frozen
    assert inline._truth is None and gc.get_freeze_count() == 0


@pytest.mark.skipif(not FORKS, reason="no fork on this platform")
def test_a_forked_worker_settles_the_graph_its_parent_built() -> None:
    from sim.experiments.worker import built

    parent = built(load_scenario(SMALL), "fp-parent")
    handle = make_executor("local", 2)
    try:
        done, frozen, _, _, graph = handle.executor.submit(_settled, SMALL, "fp-parent").result()
    finally:
        handle.close()
    assert graph == id(parent.graph) and done and frozen  # inherited, not built again
    assert parent._truth is None  # this process built the graph only


def _compare(out: Path, handle: ExecutorHandle) -> dict[str, bytes]:
    scenario = load_scenario(SMALL)
    loaded, _ = load_points(SMALL, scenario, expand(scenario, []))
    try:
        outcome = run_compare(
            scenario, loaded, ["dijkstra", "resilient"], 2, out, handle, plots=False
        )
    finally:
        handle.close()
    assert not outcome.failed
    names = ("summary.json", "summary.csv", "report.html")
    files = {n: (out / n).read_bytes() for n in names}
    files |= {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("trace.jsonl"))}
    return files


def test_workers_that_do_not_inherit_load_the_shipped_scenario(tmp_path: Path) -> None:
    spawned = _compare(tmp_path / "spawn", _pool("spawn"))
    assert spawned == _compare(tmp_path / "inline", make_executor("local", 1))
    assert len(spawned) == 3 + 4


class _Cycle:
    """Garbage only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self


def _full_collections(counted: list[int]) -> Callable[[str, dict[str, int]], None]:
    """A :data:`gc.callbacks` entry counting the full collections into ``counted``."""

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            counted.append(1)

    return note


def _on_a_cluster(path: Path) -> tuple[bool, bool, int, int, bool, bool, bool]:
    """In a process of its own, as a Dask worker: what :func:`on_cluster` leaves."""
    from sim.experiments import worker
    from sim.experiments.worker import BUILT_MOST, built, on_cluster
    from sim.longlived import frozen, is_frozen

    # a worker starts with no world kept (not what this forked test process built before)
    vars(worker._LOCAL).pop("built", None)
    dead_before = weakref.ref(_Cycle())  # garbage when the first scenario comes
    held = [_Cycle()]  # frozen with the first scenario, then garbage
    kept = on_cluster(os.getppid(), built, load_scenario(path), "fp-a")
    settled = is_frozen() and kept._truth is not None and kept._topology is not None
    counted: list[int] = []
    gc.callbacks.append(_full_collections(counted))
    try:
        on_cluster(os.getppid(), built, load_scenario(path), "fp-a")  # kept: nothing built
        with frozen(large=True):  # a run of a large world: the freeze is in place already
            again = len(counted)
        dead_while = weakref.ref(held.pop())
        for k in range(1, BUILT_MOST):  # the next scenarios: fp-a is still kept, frozen
            on_cluster(os.getppid(), built, load_scenario(path), f"fp-{k}")
        kept_while = dead_while() is not None
        on_cluster(os.getppid(), built, load_scenario(path), "fp-last")  # fp-a forgotten
    finally:
        gc.callbacks.pop()
    freed = dead_while() is None
    return settled, dead_before() is None, again, len(counted), kept_while, freed, is_frozen()


@pytest.mark.skipif(not FORKS, reason="no fork on this platform")
def test_a_cluster_worker_settles_each_scenario_once_and_frees_the_last() -> None:
    """A Dask worker in a process of its own builds a scenario's world once and freezes it
    (after a full collection: no garbage frozen), so that a run of a large world makes no
    full collection of its own (0.2 s each on the 10,000-agent mesh); it keeps the worlds
    of the :data:`~sim.experiments.worker.BUILT_MOST` scenarios it ran last frozen, and
    the scenario that makes it forget one unfreezes them, so what died with it is
    collected."""
    from sim.experiments.worker import BUILT_MOST

    handle = _pool("fork")  # plain workers, as a cluster's: no pool_worker_start
    try:
        settled, freed_before, again, collections, kept_while, freed, still = (
            handle.executor.submit(_on_a_cluster, SMALL).result()
        )
    finally:
        handle.close()
    assert settled and freed_before
    assert again == 0  # neither the kept scenario nor the run collected in full
    assert kept_while  # the scenarios after fp-a, while it is kept, unfreeze nothing
    # one full collection per new scenario; the one that forgets fp-a frees its garbage
    assert collections == BUILT_MOST and freed and still


def test_an_in_process_cluster_freezes_nothing() -> None:
    """A cluster whose workers are the client's threads (``processes=False``) leaves the
    client's collector alone."""
    from sim.experiments.worker import built, on_cluster
    from sim.longlived import is_frozen

    kept = on_cluster(os.getpid(), built, load_scenario(SMALL), "fp-in-process")
    assert kept._truth is None and not is_frozen() and gc.get_freeze_count() == 0
