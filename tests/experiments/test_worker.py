"""Workers that keep what they built: series from the engine's counters, scenarios
shipped once, and a compare's runs byte for byte those of ``run``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sim.cli import main
from sim.engine import ReplicationError, World, run_replication
from sim.engine.topology import Node, Topology, _pair
from sim.engine.trace import js
from sim.experiments.runner import Task
from sim.experiments.series import extract_series
from sim.experiments.worker import built, forget, in_memory, remember, run_series, ship
from sim.experiments.worker import load_scenario as load_scenario_shipped
from sim.scenario.load import load_scenario

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def outages(tmp_path: Path) -> Path:
    """gateway_failover, 15 minutes, with node and link outages, one still open at the end."""
    data = yaml.safe_load((REPO / "scenarios" / "gateway_failover.yaml").read_text())
    data["duration"] = 900
    data["replications"] = 2
    data["routers"] = ["dijkstra", "resilient"]
    data["failures"] = [
        {"node": "gw-fast", "at": 300, "for": 300},
        {"link": ["planner", "gw-slow"], "at": 100, "for": 50},
        {"link": ["planner", "gw-slow"], "at": 120, "for": 100},  # overlapping
        {"node": "gw-slow", "at": 800, "for": 10_000},  # open at the end
    ]
    path = tmp_path / "outages.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("level", ["full", "protocol", "off"])
def test_series_from_the_counters_equal_the_series_read_from_the_trace(
    outages: Path, tmp_path: Path, level: str
) -> None:
    scenario = load_scenario(outages)
    box: list[World] = []
    run_replication(scenario, "resilient", 1, tmp_path, level, hook=box.append)
    mine = run_series(box[0], level, scenario, 1)
    assert mine == extract_series(tmp_path / "trace.jsonl", scenario, 1)
    if level != "off":
        assert mine["outages"] == [
            ["link", "gw-slow|planner", 100.0, 220.0],  # two overlapping outages, one span
            ["node", "gw-fast", 300.0, 600.0],
            ["node", "gw-slow", 800.0, 900.0],  # still down at the end: closed at duration
        ]
        assert mine["latency_count"] > 10
        assert sum(mine["completions_per_minute"]) == mine["latency_count"]


def test_a_shipped_task_is_pickled_without_its_scenario(outages: Path, tmp_path: Path) -> None:
    scenario = load_scenario(outages)
    files = ship({"fp1": scenario}, tmp_path / "ship")
    task = Task(scenario, "dijkstra", 0, str(tmp_path / "r"), None, None, "fp1", files["fp1"])
    whole = pickle.dumps(Task(scenario, "dijkstra", 0, str(tmp_path / "r"), None, None, "fp1"))
    light = pickle.dumps(task)
    assert len(light) < 400 < len(whole)
    back = pickle.loads(light)
    assert back == task and back.scenario == scenario
    assert pickle.loads(pickle.dumps(task)).scenario is back.scenario  # loaded once


def test_a_scenario_for_forked_workers_is_remembered_not_written(outages: Path) -> None:
    scenario = load_scenario(outages)
    files = in_memory({"fp1": scenario, "fp2": scenario})
    assert set(files) == {"fp1", "fp2"} and len(set(files.values())) == 2
    assert not any(Path(p).exists() or Path(p).parent.exists() for p in files.values())
    remember(files["fp1"], "fp1", scenario)
    try:
        assert load_scenario_shipped(files["fp1"], "fp1") is scenario
        with pytest.raises(FileNotFoundError):  # never remembered: nothing to load
            load_scenario_shipped(files["fp2"], "fp2")
    finally:
        forget(files)


def test_a_worker_builds_graph_and_routers_once_per_scenario(outages: Path) -> None:
    scenario = load_scenario(outages)
    first = built(scenario, "fp-a")
    assert built(scenario, "fp-a") is first
    assert first.router("dijkstra") is first.router("dijkstra") is not None
    assert built(scenario, "fp-b") is not first
    assert built(scenario, "") is not built(scenario, "")  # no fingerprint, no reuse


def test_a_cluster_worker_keeps_the_scenarios_it_built_last(
    outages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Dask worker in a process of its own keeps what it built for the
    :data:`~sim.experiments.worker.BUILT_MOST` scenarios it ran last: commands of two
    scenarios in turn rebuild neither, and nothing is unfrozen until one is forgotten (the
    least recently used), whose world is then rebuilt when it comes back."""
    import threading

    import sim.experiments.worker as worker
    from sim.longlived import is_frozen, unfreeze

    monkeypatch.setattr(worker, "_KEEPS", ["cluster"])
    monkeypatch.setattr(worker, "_LOCAL", threading.local())
    monkeypatch.setattr(worker, "BUILT_MOST", 2)
    unfrozen: list[bool] = []

    def counted() -> None:
        unfrozen.append(True)
        unfreeze()

    monkeypatch.setattr(worker, "unfreeze", counted)
    scenario = load_scenario(outages)
    try:
        a, b = built(scenario, "fp-a"), built(scenario, "fp-b")
        assert built(scenario, "fp-a") is a and built(scenario, "fp-b") is b
        assert a._settled and b._settled and is_frozen() and unfrozen == []
        assert built(scenario, "fp-a") is a  # the most recently used now
        assert built(scenario, "fp-c") is not a  # fp-b forgotten: unfrozen, collected
        assert unfrozen == [True] and is_frozen()
        assert built(scenario, "fp-a") is a and built(scenario, "fp-b") is not b
    finally:
        if is_frozen():
            unfreeze()


def _files(base: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.name in ("trace.jsonl", "metrics.json", "series.json")
    }


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_compare_runs_are_the_bytes_of_run(outages: Path, tmp_path: Path, jobs: str) -> None:
    out = tmp_path / "cmp"
    argv = ["compare", str(outages), "--out", str(out), "--quiet", "--no-plots"]
    assert main([*argv, "--jobs", jobs]) == 0
    scenario = load_scenario(outages)
    for router in ("dijkstra", "resilient"):
        for rep in (0, 1):
            alone = tmp_path / "alone" / router / f"rep-{rep}"
            metrics: dict[str, Any] = run_replication(scenario, router, rep, alone)
            mine = out / router / f"rep-{rep}"
            assert (mine / "trace.jsonl").read_bytes() == (alone / "trace.jsonl").read_bytes()
            kept = json.loads((mine / "metrics.json").read_text())
            verdicts = ("violations", "violations_per_1000_instances", "conformance")
            assert {k: v for k, v in kept.items() if k not in verdicts} == {
                k: v for k, v in metrics.items() if k not in verdicts
            }
            series = json.loads((mine / "series.json").read_text())
            assert series == extract_series(alone / "trace.jsonl", scenario, rep)


def test_a_worker_builds_the_topology_once_and_each_run_gets_it_fresh(
    outages: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(outages)
    kept = built(scenario, "fp-topology")
    box: list[World] = []
    first = kept.topology()
    run_replication(
        scenario, "resilient", 0, tmp_path / "a", graph=kept.graph, topology=first, hook=box.append
    )
    assert box[0].topology is first
    assert any(ls.hops for ls in first.links.values())  # the run changed its copy...
    assert any(n.epoch for n in first.nodes.values()) and any(
        n.server for n in first.nodes.values()
    )
    again = kept.topology()
    assert again is not first and again.graph is kept.graph
    for key, node in again.nodes.items():  # ...never the next one's
        assert (node.down, node.epoch, node.server) == (0, 0, None)
        assert node.j is first.nodes[key].j  # the trace encodings are built once
    assert all(ls.hops == 0 and ls.down == 0 for ls in again.links.values())
    run_replication(scenario, "resilient", 0, tmp_path / "b", graph=kept.graph, topology=again)
    run_replication(scenario, "resilient", 0, tmp_path / "c")
    for name in ("trace.jsonl", "metrics.json"):
        assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()


def test_a_topology_of_another_graph_is_refused(outages: Path, tmp_path: Path) -> None:
    scenario = load_scenario(outages)
    other = built(scenario, "fp-other").topology()
    with pytest.raises(ReplicationError, match="ValueError: the topology given is not one of"):
        run_replication(scenario, "dijkstra", 0, tmp_path, topology=other)


@given(st.text(), st.text())
def test_a_link_is_encoded_from_its_ends_encodings(a: str, b: str) -> None:
    nodes = {x: Node(x, "LLM_AGENT", frozenset(), None) for x in (a, b)}
    assert _pair(nodes, a, b) == js([a, b])  # quotes, backslashes, controls, any text
    assert _pair({a: nodes[a]}, a, b) == (None if a != b else js([a, a]))


def test_the_topology_encodes_every_link_as_the_trace_does(outages: Path) -> None:
    topology = Topology(built(load_scenario(outages), "").graph)
    assert topology.links and all(ls.j == js([ls.a, ls.b]) for ls in topology.links.values())


def test_runs_run_in_this_process_settle_each_scenario_once_then_unfreeze(
    outages: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run`` and ``compare --jobs 1``: what a scenario's runs read is built at once and
    frozen with the process's heap (at trace level off, no ground truth), so that a run of
    a large world makes no full collection of its own; the next scenario unfreezes the
    last one's, collected in full once; all is unfrozen at the end."""
    import gc

    from sim.conformance import truth as truth_module
    from sim.experiments.runner import make_executor, run_tasks
    from sim.experiments.worker import running_inline
    from sim.longlived import frozen, is_frozen

    scenario = load_scenario(outages)
    other = scenario.model_copy(update={"seed": scenario.seed + 1})
    tasks = [
        Task(scenario, "dijkstra", k, str(tmp_path / f"a{k}"), None, "off", "fp-a") for k in (0, 1)
    ]
    tasks.append(Task(other, "dijkstra", 0, str(tmp_path / "b"), None, "protocol", "fp-b"))
    seen: list[tuple[bool, bool, int]] = []
    counted: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            counted.append(1)

    def hook(world: World) -> None:
        kept = built(world.scenario, "fp-a" if world.scenario is scenario else "fp-b")
        before = len(counted)
        with frozen(large=True):  # a run of a large world: the freeze is in place already
            seen.append((is_frozen(), kept._truth is not None, len(counted) - before))

    real = truth_module.from_scenario

    def checked_only(s: Any) -> Any:
        assert s is other, "the ground truth was built for a run at trace level off"
        return real(s)

    monkeypatch.setattr(truth_module, "from_scenario", checked_only)
    gc.callbacks.append(note)
    try:
        with running_inline():
            records = list(run_tasks(tasks, make_executor("local", 1), hook=hook))
    finally:
        gc.callbacks.remove(note)
    assert [r.status for r in records] == ["ok"] * 3
    assert seen == [(True, False, 0), (True, False, 0), (True, True, 0)]
    assert len(counted) == 1  # fp-b: the last scenario unfrozen, collected, then frozen
    assert not is_frozen() and gc.get_freeze_count() == 0


def test_runs_in_this_process_leave_a_freeze_they_found_and_end_with_their_block(
    outages: Path,
) -> None:
    """A freeze in place is left as it is; whatever raises in the block, nothing this
    process built stays frozen after it (a plain block, not a generator's: ``run`` and
    ``compare`` stopped by a signal leave the process as they found it)."""
    import gc

    from sim.experiments.worker import running_inline
    from sim.longlived import freeze, is_frozen, unfreeze

    freeze()
    try:
        with running_inline():
            pass
        assert is_frozen()
    finally:
        unfreeze()
    with pytest.raises(KeyboardInterrupt), running_inline():
        built(load_scenario(outages), "fp-stopped")
        assert is_frozen()
        raise KeyboardInterrupt
    assert not is_frozen() and gc.get_freeze_count() == 0
    with running_inline(inline=False):
        built(load_scenario(outages), "fp-pool")
        assert not is_frozen()
