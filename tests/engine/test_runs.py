"""Whole runs: determinism, seeds, errors inside a run, the ``run`` command."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sim.cli import main
from sim.conformance import check_trace
from sim.engine import ReplicationError, run_replication
from sim.engine.simulation import Replication
from sim.scenario import load_scenario, load_scenario_with_warnings
from sim.scenario.load import Override

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"


def small(seed: int | None = None, duration: float = 900.0):  # type: ignore[no-untyped-def]
    scenario = load_scenario(TRAIN)
    update: dict[str, object] = {"duration": duration}
    if seed is not None:
        update["seed"] = seed
    return scenario.model_copy(update=update)


def digest(folder: Path) -> tuple[str, str]:
    return tuple(  # type: ignore[return-value]
        hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in ("trace.jsonl", "metrics.json")
    )


@pytest.mark.parametrize("router", ["dijkstra", "resilient"])
def test_same_seed_gives_identical_bytes(tmp_path: Path, router: str) -> None:
    run_replication(small(), router, 1, tmp_path / "a")
    run_replication(small(), router, 1, tmp_path / "b")
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert (tmp_path / "a" / "trace.jsonl").stat().st_size > 10_000


def test_seed_and_replication_change_the_run(tmp_path: Path) -> None:
    run_replication(small(), "dijkstra", 0, tmp_path / "a")
    run_replication(small(seed=8), "dijkstra", 0, tmp_path / "b")
    run_replication(small(), "dijkstra", 1, tmp_path / "c")
    a, b, c = (digest(tmp_path / x) for x in "abc")
    assert a[0] != b[0] and a[1] != b[1]
    assert a[0] != c[0] and a[1] != c[1]


def test_trace_level_does_not_change_the_metrics(tmp_path: Path) -> None:
    full = run_replication(small(), "resilient", 0, tmp_path / "a", "full")
    off = run_replication(small(), "resilient", 0, tmp_path / "b", "off")
    for key in ("workflows", "latency", "messages", "approvals", "executions"):
        assert full[key] == off[key]
    assert (tmp_path / "b" / "trace.jsonl").read_text() == ""


def test_an_error_inside_a_run_names_scenario_replication_and_time(tmp_path: Path) -> None:
    def inject(world: Replication) -> None:  # a callback that raises at t = 5.5
        def broken(_event: object) -> None:
            raise ValueError("injected failure")

        world.env.timeout(5.5).callbacks.append(broken)

    with pytest.raises(ReplicationError) as info:
        run_replication(small(), "dijkstra", 2, tmp_path, hook=inject)
    text = str(info.value)
    assert "scenario 'train-booking'" in text and "replication 2" in text
    assert "injected failure" in text
    assert info.value.now == 5.5 and "t=5.500000" in text
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert lines and json.loads(lines[-1])["t"] <= info.value.now
    assert not (tmp_path / "metrics.json").exists()


def test_run_command_writes_results_and_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = TRAIN.read_text().replace("duration: 3600", "duration: 300")
    file = tmp_path / "s.yaml"
    file.write_text(scenario)
    code = main(
        [
            "run",
            str(file),
            "--replications",
            "2",
            "--out",
            str(tmp_path / "res"),
            "--trace",
            "protocol",
            "--router",
            "resilient",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "mean" in out and "resilient" in out
    for k in (0, 1):
        folder = tmp_path / "res" / "resilient" / f"rep-{k}"
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["replication"] == k and metrics["trace_level"] == "protocol"
        assert '"label":"hop"' not in (folder / "trace.jsonl").read_text()


def test_run_command_reports_a_failed_replication_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sim.experiments.runner as runner

    real = runner.run_replication

    def flaky(scenario, router, rep, out, level, **kw):  # type: ignore[no-untyped-def]
        if rep == 0:
            raise ReplicationError(scenario.name, router, rep, 12.5, ZeroDivisionError("boom"))
        return real(scenario, router, rep, out, level, **kw)

    monkeypatch.setattr(runner, "run_replication", flaky)
    file = tmp_path / "s.yaml"
    file.write_text(TRAIN.read_text().replace("duration: 3600", "duration: 100"))
    code = main(["run", str(file), "--replications", "2", "--out", str(tmp_path / "r")])
    captured = capsys.readouterr()
    assert code == 2
    assert "replication 0" in captured.err and "t=12.500000" in captured.err
    assert (tmp_path / "r" / "dijkstra" / "rep-1" / "metrics.json").exists()
    assert (tmp_path / "r" / "dijkstra" / "rep-0" / "error.json").exists()


def test_run_command_rejects_a_bad_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(TRAIN.read_text().replace("duration: 3600", "duration: -1"))
    assert main(["run", str(file), "--out", str(tmp_path / "r")]) == 2
    assert "duration" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))
LARGE = {"large_mesh"}  # 10,000 agents: bfs alone takes most of a minute there


@pytest.mark.parametrize("router", ["dijkstra", "bfs", "resilient", "semantic"])
def test_shipped_scenarios_run_under_every_router(tmp_path: Path, router: str) -> None:
    _run_shipped(tmp_path, router, [p for p in SHIPPED if p.stem not in LARGE])


@pytest.mark.slow
@pytest.mark.parametrize("router", ["dijkstra", "bfs", "resilient", "semantic"])
def test_the_large_shipped_scenario_runs_under_every_router(tmp_path: Path, router: str) -> None:
    _run_shipped(tmp_path, router, [p for p in SHIPPED if p.stem in LARGE])


def _run_shipped(tmp_path: Path, router: str, paths: list[Path]) -> None:
    assert paths
    for path in paths:
        scenario = load_scenario(path).model_copy(update={"duration": 300.0})
        out = tmp_path / path.stem / router
        metrics = run_replication(scenario, router, 0, out, "full")
        wf = metrics["workflows"]
        assert wf["started"] > 0, path.stem
        # every instance ends exactly one way; unfinished ones are counted as failed too
        assert wf["succeeded"] + wf["failed"] + wf["cancelled"] == wf["started"], path.stem
        assert wf["unfinished"] <= wf["failed"]
        msgs = metrics["messages"]
        assert msgs["sent"] == msgs["delivered"] + msgs["dropped"], path.stem
        report = check_trace(out / "trace.jsonl", scenario, ["conservation", "route_validity"])
        for verdict in report.verdicts:
            assert verdict.ok, (path.stem, verdict.name, verdict.message)
            if msgs["sent"]:
                assert verdict.applicable and verdict.examined > 0, (path.stem, verdict.name)
        if msgs["sent"] == 0:  # bfs finds no route on travel_mesh (it needs translations)
            assert set(metrics["tasks_failed_by_reason"]) == {"no_route"}, path.stem


def test_mcp_vs_mcp_plus_shows_the_expressiveness_gap(tmp_path: Path) -> None:
    file = ROOT / "scenarios" / "mcp_vs_mcp_plus.yaml"
    never = load_scenario(file)
    hints, _ = load_scenario_with_warnings(
        file, [Override(("approval", "mcp_policy"), "hints", "--set approval.mcp_policy=hints")]
    )
    short = {"duration": 600.0}
    m_never = run_replication(never.model_copy(update=short), "dijkstra", 0, tmp_path / "n", "off")
    m_hints = run_replication(hints.model_copy(update=short), "dijkstra", 0, tmp_path / "h", "off")
    for m in (m_never, m_hints):
        plus = m["by_workflow"]["book-plus"]
        assert plus["writes_executed"] > 0 and plus["writes_without_approval"] == 0
    mcp_never = m_never["by_workflow"]["book-mcp"]
    assert mcp_never["writes_executed"] > 0
    assert mcp_never["writes_without_approval"] == mcp_never["writes_executed"]
    assert mcp_never["approvals_asked"] == 0
    mcp_hints = m_hints["by_workflow"]["book-mcp"]
    plus_hints = m_hints["by_workflow"]["book-plus"]
    assert mcp_hints["writes_without_approval"] == 0
    # hints: the plain-MCP caller also asks for the three reads without readOnlyHint
    assert (
        mcp_hints["approvals_asked"] / mcp_hints["started"]
        > 2 * plus_hints["approvals_asked"] / plus_hints["started"]
    )


def longest_stretch(world: Replication) -> int:
    """The most links a message of ``world`` could cross as one event."""
    return max(
        (end - i for path in world.routes._paths.values() for i, end in enumerate(path.reach)),
        default=0,
    )


def hop_by_hop(world: Replication) -> None:
    """Every node and link may go down: no message crosses two links as one event."""
    for element in (*world.topology.nodes.values(), *world.topology.links.values()):
        element.fallible = True


def test_every_trace_level_runs_the_same_events_with_jitter_on_long_stretches(
    tmp_path: Path,
) -> None:
    # during gw1's outage (600 s to 900 s) the resilient router's routes go by gw2, where
    # nothing can happen: its messages cross two jittered links without stopping there
    scenario = load_scenario(TRAIN).model_copy(update={"duration": 700.0})
    worlds: list[Replication] = []
    full = run_replication(scenario, "resilient", 0, tmp_path / "full", "full", hook=worlds.append)
    protocol = run_replication(
        scenario, "resilient", 0, tmp_path / "protocol", "protocol", hook=worlds.append
    )
    assert all(longest_stretch(w) >= 2 for w in worlds)
    assert any(link.jitter > 0 for link in scenario.links)
    events = {}
    for level in ("full", "protocol"):
        lines = (tmp_path / level / "trace.jsonl").read_text().splitlines()
        decoded = [json.loads(x) for x in lines]
        events[level] = [
            {**e, "seq": None} for e in decoded if e["label"] not in ("send", "hop", "deliver")
        ]
    assert events["full"] == events["protocol"]
    for key in set(full) - {"trace_level", "trace_lines"}:
        assert full[key] == protocol[key], key


def test_stretches_change_nothing_but_the_event_count_without_jitter(tmp_path: Path) -> None:
    base = load_scenario(TRAIN).model_copy(update={"duration": 700.0})
    still = [link.model_copy(update={"jitter": 0.0}) for link in base.links]
    for scenario, same in ((base.model_copy(update={"links": still}), True), (base, False)):
        worlds: list[Replication] = []
        a = run_replication(scenario, "resilient", 0, tmp_path / "a", "full", hook=worlds.append)
        b = run_replication(scenario, "resilient", 0, tmp_path / "b", "full", hook=hop_by_hop)
        assert longest_stretch(worlds[0]) >= 2
        trace_a, trace_b = ((tmp_path / x / "trace.jsonl").read_bytes() for x in "ab")
        # with jitter the delays of a stretch are drawn when it starts: another sample path
        assert (trace_a == trace_b and a == b) is same


def test_hops_by_link_counts_every_hop_at_every_trace_level(tmp_path: Path) -> None:
    scenario = load_scenario(TRAIN).model_copy(update={"duration": 300.0})
    full = run_replication(scenario, "resilient", 0, tmp_path / "full", "full")
    protocol = run_replication(scenario, "resilient", 0, tmp_path / "protocol", "protocol")
    counted: dict[str, int] = {}
    for line in (tmp_path / "full" / "trace.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["label"] == "hop":
            key = "|".join(sorted((event["detail"]["from"], event["detail"]["to"])))
            counted[key] = counted.get(key, 0) + 1
    assert full["hops_by_link"] == dict(sorted(counted.items()))
    assert protocol["hops_by_link"] == full["hops_by_link"]
    assert sum(full["hops_by_link"].values()) == full["messages"]["hops"]
    assert protocol["messages"]["hops"] == full["messages"]["hops"]
