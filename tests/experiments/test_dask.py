"""The Dask executor: each scenario handed over once to the workers that lack it and held
there by fingerprint across commands, each task submitted under an explicit key naming
its scenario by fingerprint, so that Dask never names a task by tokenizing (pickling)
its arguments; the results the bytes a process pool writes."""

from __future__ import annotations

import gc
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sim.experiments.runner as runner
import sim.experiments.worker as worker
from sim.engine import World
from sim.experiments.compare import build_tasks, run_compare
from sim.experiments.runner import (
    ExecutorHandle,
    Task,
    execute_task,
    make_executor,
    run_tasks,
)
from sim.experiments.sweep import expand, load_points, parse_set
from sim.scenario import load_scenario
from sim.scenario.model import Scenario
from tests.harness.small_mesh import SMALL_FILE as SMALL


def _heavy(args: tuple[Any, ...]) -> list[str]:
    """The names of the types in ``args`` (one level into tuples) that carry a scenario."""
    found = []
    for arg in args:
        for item in arg if isinstance(arg, tuple) else (arg,):
            if isinstance(item, Task | Scenario):
                found.append(type(item).__name__)
    return found


@pytest.fixture()
def empty_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process cluster's workers hold what this process holds: nothing, to start."""
    monkeypatch.setattr(worker, "_HELD", OrderedDict())


@pytest.fixture()
def cluster() -> Iterator[Any]:
    """A Dask cluster whose two workers are threads of this process."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as local:
        yield local


def _points(settings: list[str]) -> tuple[Scenario, list[Any], list[str]]:
    """The small mesh with ``--set`` ``settings``: scenario, points, its first router."""
    scenario = load_scenario(SMALL)
    points = load_points(SMALL, scenario, expand(scenario, [parse_set(t) for t in settings]))
    return scenario, points[0], scenario.router_names[:1]


def _compare(settings: list[str], out: Path, handle: ExecutorHandle) -> bytes:
    """summary.json of a 2-replication compare of the small mesh into ``out``."""
    scenario, points, routers = _points(settings)
    run_compare(scenario, points, routers, 2, out, handle, plots=False)
    return (out / "summary.json").read_bytes()


def test_dask_hands_each_scenario_over_once_and_names_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_hold: None, cluster: Any
) -> None:
    client_module = pytest.importorskip("distributed.client")
    tokenized: list[str] = []
    real = client_module.tokenize

    def spy(*args: Any, **kwargs: Any) -> str:
        tokenized.extend(_heavy(args))
        return str(real(*args, **kwargs))

    monkeypatch.setattr(client_module, "tokenize", spy)
    local = _compare([], tmp_path / "local", make_executor("local", 1))
    handle = make_executor("dask", 2, cluster.scheduler_address)
    try:
        assert _compare([], tmp_path / "dask", handle) == local
        assert tokenized == []  # neither a task nor a scenario was hashed
        # the spy sees what a plain submit hashes: the task, its scenario inside
        _, points, routers = _points([])
        task = build_tasks(tmp_path / "plain", points, routers, 1)[0]
        handle.executor.submit(execute_task, task).result()
        assert tokenized == ["Task"]
    finally:
        handle.close()
    for rep in range(2):
        run = Path(routers[0], f"rep-{rep}", "trace.jsonl")
        assert (tmp_path / "local" / run).read_bytes() == (tmp_path / "dask" / run).read_bytes()


def test_a_cluster_holds_each_scenario_by_its_full_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_hold: None, cluster: Any
) -> None:
    """Commands on one cluster: a scenario the workers hold is not sent again, and one
    that differs in any field (here the seed alone: same name, same file) is sent and
    run as itself, never served what the workers hold for another."""
    dumped: list[str] = []
    real = pickle.dumps

    def spy(obj: Any, *args: Any, **kwargs: Any) -> bytes:
        dumped.extend(_heavy((obj,)))
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(pickle, "dumps", spy)
    seeded = ["seed=11"]
    expected = {
        "base": _compare([], tmp_path / "local-base", make_executor("local", 1)),
        "seeded": _compare(seeded, tmp_path / "local-seeded", make_executor("local", 1)),
    }
    assert expected["base"] != expected["seeded"] and dumped == []
    handle = make_executor("dask", 2, cluster.scheduler_address)
    try:
        runs = [("base", []), ("base", []), ("seeded", seeded), ("base", [])]
        sent = []
        for k, (name, settings) in enumerate(runs):
            got = _compare(settings, tmp_path / f"dask-{k}", handle)
            assert got == expected[name], f"command {k} ({name})"
            sent.append(len(dumped))
    finally:
        handle.close()
    assert sent == [1, 1, 2, 2]  # sent once each: held across commands


def test_a_dask_client_keeps_its_heap_frozen_until_it_closes(cluster: Any) -> None:
    """What a Dask client holds lives to its command's end: frozen out of its collector
    from its connection to its close (importing ``distributed`` and the page's reading
    walked a large scenario otherwise); a freeze someone else made is left in place."""
    from sim.longlived import freeze, is_frozen, unfreeze

    assert not is_frozen()
    handle = make_executor("dask", 2, cluster.scheduler_address)
    frozen_while_open = is_frozen() and gc.get_freeze_count() > 0
    handle.close()
    assert frozen_while_open and not is_frozen() and gc.get_freeze_count() == 0
    freeze()
    try:
        make_executor("dask", 2, cluster.scheduler_address).close()
        assert is_frozen()  # not its freeze: left
    finally:
        unfreeze()
    with pytest.raises(ValueError, match="missing port"):  # no client: nothing left frozen
        make_executor("dask", 2, "tcp://")
    assert not is_frozen() and gc.get_freeze_count() == 0


def _joining(cluster: Any, submitted: threading.Event) -> None:
    """Add a worker to ``cluster`` once its scheduler has tasks to give it."""
    while not cluster.scheduler.tasks:
        if submitted.wait(0.01):
            break
    cluster.scale(1)


@pytest.mark.parametrize("resent", [3, 0])
def test_a_worker_that_joins_after_the_hand_over_is_handed_the_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_hold: None, resent: int
) -> None:
    """A cluster with no worker when the scenario is handed over (a scheduler whose
    workers come later): the tasks find it missing on the worker that joins, are handed it
    and submitted again, and write what a local run writes. Never submitted again, each
    is a failed run naming the scenario the worker lacked."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "RESENT", resent)
    _, points, routers = _points([])
    inline = make_executor("local", 1)
    local = list(run_tasks(build_tasks(tmp_path / "l", points, routers, 2), inline))
    with distributed.LocalCluster(
        n_workers=0, threads_per_worker=1, processes=False, dashboard_address=None
    ) as empty:
        handle = make_executor("dask", 1, empty.scheduler_address)
        submitted = threading.Event()
        joiner = threading.Thread(target=_joining, args=(empty, submitted))
        joiner.start()
        try:
            records = list(run_tasks(build_tasks(tmp_path / "d", points, routers, 2), handle))
        finally:
            submitted.set()
            joiner.join()
            handle.close()
    if not resent:
        assert [r.status for r in records] == ["error", "error"]
        assert all("ScenarioNotHeld: this worker does not hold" in str(r.error) for r in records)
        return
    assert sorted(r.status for r in records) == [r.status for r in local] == ["ok", "ok"]
    for rep in range(2):
        run = Path(routers[0], f"rep-{rep}", "trace.jsonl")
        assert (tmp_path / "l" / run).read_bytes() == (tmp_path / "d" / run).read_bytes()


def test_a_worker_forgets_the_least_recently_used_beyond_its_bound(empty_hold: None) -> None:
    """A worker holds at most :data:`~sim.experiments.worker.HELD_MOST` scenarios, all of
    the handing command's however many, and forgets the least recently used first."""
    blob = pickle.dumps(load_scenario(SMALL))
    names = [f"fp-{k}" for k in range(worker.HELD_MOST + 2)]
    for name in names[:-1]:
        worker.hold({name: blob}, [name])
    assert worker.holding(names) == names[1:-1]  # fp-0 forgotten; asking makes them recent
    worker.holding(["fp-1"])  # the most recently used now
    worker.hold({names[-1]: blob}, [names[-1]])
    assert worker.holding(names) == ["fp-1", *names[3:]]
    many = [f"command-{k}" for k in range(worker.HELD_MOST + 3)]
    worker.hold(dict.fromkeys(many, blob), many)  # a command's own: all held
    assert worker.holding([*names, *many]) == many
    with pytest.raises(worker.ScenarioNotHeld, match="fingerprint fp-1"):
        worker.held_scenario("fp-1")
    with pytest.raises(TypeError, match="under bad"):
        worker.hold({"bad": pickle.dumps([1])}, [])


@pytest.mark.slow  # 16 s at load 6: two worker processes, each importing the engine
def test_worker_processes_hold_both_scenarios_and_run_each_as_itself(tmp_path: Path) -> None:
    """A cluster of worker processes (what a user runs): the scenarios differing only in
    their seed alternate, each run equal to its local run, and both workers then hold
    both, by fingerprint; after a restart (fresh workers, holding nothing) they are sent
    again."""
    distributed = pytest.importorskip("distributed")
    from sim.experiments.runner import fingerprint

    seeded = ["seed=11"]
    expected = {
        "base": _compare([], tmp_path / "local-base", make_executor("local", 1)),
        "seeded": _compare(seeded, tmp_path / "local-seeded", make_executor("local", 1)),
    }
    fps = [fingerprint(_points(s)[1][0][1]) for s in ([], seeded)]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        handle = make_executor("dask", 2, local.scheduler_address)
        try:
            runs = [("base", []), ("seeded", seeded), ("base", [])]
            for k, (name, settings) in enumerate(runs):
                got = _compare(settings, tmp_path / f"dask-{k}", handle)
                assert got == expected[name], f"command {k} ({name})"
            held = handle.client.run(worker.holding, fps)
            assert sorted(held.values()) == [fps, fps]
            handle.client.restart()
            assert sorted(handle.client.run(worker.holding, fps).values()) == [[], []]
            assert _compare(seeded, tmp_path / "after", handle) == expected["seeded"]
        finally:
            handle.close()


def _exit_on_rep_1(world: World) -> None:
    """A replication that kills its worker process (as a plug-in calling ``os._exit``)."""
    if world.rep == 1:
        os._exit(3)


@pytest.mark.slow  # 8 s at load 6: two worker processes, one killed and restarted
def test_a_worker_killed_by_a_run_is_a_recorded_failure_and_the_other_runs_complete(
    tmp_path: Path,
) -> None:
    """A run that kills its worker process is a failed run naming Dask's reason (Dask told
    to give up at once: a run the scheduler had queued on that worker dies with it, and is
    recorded so too); the others, some perhaps on the nanny's fresh worker, which holds
    nothing until handed the scenario again, write what a local run writes."""
    distributed = pytest.importorskip("distributed")
    dask = pytest.importorskip("dask")  # allowed-failures 0: no worker killed twice
    _, points, routers = _points([])
    inline = make_executor("local", 1)
    local = [r.key for r in run_tasks(build_tasks(tmp_path / "l", points, routers, 4), inline)]
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
    ):
        handle = make_executor("dask", 2, cluster.scheduler_address)
        try:
            tasks = build_tasks(tmp_path / "d", points, routers, 4)
            records = {r.key: r for r in run_tasks(tasks, handle, hook=_exit_on_rep_1)}
        finally:
            handle.close()
    killed = f"{routers[0]}/rep-1"
    assert records[killed].status == "error" and "KilledWorker" in str(records[killed].error)
    assert (tmp_path / "d" / routers[0] / "rep-1" / "error.json").exists()
    ok = [k for k, r in records.items() if r.status == "ok"]
    assert len(ok) >= 2 and sorted(records) == sorted(local)
    for key, record in records.items():
        run = tmp_path / "d" / key
        if record.status == "ok":
            trace = Path(key, "trace.jsonl")
            assert (tmp_path / "l" / trace).read_bytes() == (tmp_path / "d" / trace).read_bytes()
        else:  # the killed run, or one queued behind it on the same worker
            assert "KilledWorker" in str(record.error) and (run / "error.json").exists()


def test_smc_on_dask_hands_the_scenario_over_once_for_every_batch(
    monkeypatch: pytest.MonkeyPatch, empty_hold: None, cluster: Any
) -> None:
    """``smc --executor dask``: the scenario is pickled once per command, for the workers
    lacking it (none for a later command); each batch carries its fingerprint under an
    explicit key (nothing tokenized); the outcomes are the inline executor's. A batch
    whose worker does not hold the scenario is handed it and submitted again."""
    from sim.experiments.smc_runner import Rule, SmcJob, estimate
    from sim.scenario.properties import compile_properties

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios/smc_approval.yaml")
    props = tuple(compile_properties(scenario.properties, scenario))
    job = SmcJob(scenario, props, "protocol", f"{runner.fingerprint(scenario)}:protocol")
    rule = Rule(width=0.2)
    local = [o.to_json() for o in estimate(job, ["dijkstra"], rule, make_executor("local", 1))]
    assert local[0]["runs"] > 3 * 5  # several batches of 5
    client_module = pytest.importorskip("distributed.client")
    seen: list[str] = []
    real_tokenize, real_dumps = client_module.tokenize, pickle.dumps

    def tokenize(*args: Any, **kwargs: Any) -> str:
        seen.extend(f"tokenized {n}" for n in _heavy(args) + _jobs(args))
        return str(real_tokenize(*args, **kwargs))

    def dumps(obj: Any, *args: Any, **kwargs: Any) -> bytes:
        seen.extend(f"pickled {n}" for n in _heavy((obj,)) + _jobs((obj,)))
        return real_dumps(obj, *args, **kwargs)

    monkeypatch.setattr(client_module, "tokenize", tokenize)
    monkeypatch.setattr(pickle, "dumps", dumps)
    handle = make_executor("dask", 2, cluster.scheduler_address)
    try:
        for _ in range(2):  # the second command: the workers hold it already
            got = estimate(job, ["dijkstra"], rule, handle, batch=5)
            assert [o.to_json() for o in got] == local
        assert seen == ["pickled Scenario"]
        worker._HELD.clear()  # workers restarted: and the command's hand-over is lost
        skipped: list[Any] = []
        real_hand_over = handle.hand_over
        monkeypatch.setattr(
            handle, "hand_over", lambda s: skipped.append(s) if not skipped else real_hand_over(s)
        )
        got = estimate(job, ["dijkstra"], rule, handle, batch=5)
        assert [o.to_json() for o in got] == local and len(skipped) == 1
        assert seen == ["pickled Scenario"] * 2  # handed over again, once
    finally:
        handle.close()


def _jobs(args: tuple[Any, ...]) -> list[str]:
    """``SmcJob`` for each smc job in ``args`` (one level into tuples)."""
    from sim.experiments.smc_runner import SmcJob

    return [
        "SmcJob"
        for arg in args
        for item in (arg if isinstance(arg, tuple) else (arg,))
        if isinstance(item, SmcJob)
    ]
