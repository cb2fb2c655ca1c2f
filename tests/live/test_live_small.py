"""The shipped live scenario, as issue 31 asks it to hold (slow: ``make bench``): two
live runs of ``scenarios/live_small.yaml`` (120 scenario seconds, both routers), a
gateway stopped mid-run, the traces checked, the simulation calibrated on the first run
and held to the second."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness.live_paths import ROOT, SMALL

pytestmark = pytest.mark.slow


def sim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sim", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=1200)  # fmt: skip


def events(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("live-small")
    for name, seed in (("A", "5"), ("B", "6")):
        done = sim("live", str(SMALL), "--duration", "120", "--seed", seed,
                   "--out", str(base / name), "--capture", "--quiet")  # fmt: skip
        assert done.returncode == 0, done.stderr
    return base


def test_every_process_is_gone_and_the_checks_pass(runs: Path) -> None:
    from tests.harness.live_runs import ours

    assert ours(str(runs)) == []
    for router in ("dijkstra", "resilient"):
        run = runs / "A" / router / "live-0"
        done = sim("check", str(run / "trace.jsonl"), "--scenario", str(SMALL))
        assert done.returncode == 0, done.stdout
        metrics = json.loads((run / "metrics.json").read_text())
        assert metrics["conformance"]["ok"] and metrics["live"]["duration"] == 120.0


def test_the_mcp_server_never_receives_the_mcp_plus_metadata(runs: Path) -> None:
    wire = runs / "A" / "dijkstra" / "live-0" / "wire"

    def bodies(agent: str) -> list[str]:
        lines = (wire / f"{agent}.jsonl").read_text().splitlines()
        return [json.loads(x)["body"] for x in lines]

    received = bodies("bookings")
    assert any('"tools/call"' in b for b in received)
    assert not any("protomesh/mcp-plus" in b for b in received)
    assert any("protomesh/mcp-plus" in b for b in bodies("gw1"))
    steps = [e["detail"] for e in events(runs / "A" / "dijkstra" / "live-0")
             if e["label"] == "translate"]  # fmt: skip
    translated = {(d["at"], d["from_proto"], d["to_proto"]) for d in steps}
    assert {("gw1", "MCP+", "MCP"), ("coord", "A2A", "MCP")} <= translated


def test_the_stopped_gateway_times_the_static_caller_out_and_the_resilient_reroutes(
    runs: Path,
) -> None:
    static = events(runs / "A" / "dijkstra" / "live-0")
    down = [e["t"] for e in static if e["label"] == "node_down" and e["agent"] == "gw1"]
    up = [e["t"] for e in static if e["label"] == "node_up" and e["agent"] == "gw1"]
    assert len(down) == len(up) == 1 and 40 <= down[0] < 41 and 70 <= up[0] < 71
    timeouts = [e for e in static if e["label"] == "timeout"]
    assert len(timeouts) >= 10 and all(down[0] < e["t"] < up[0] + 10 for e in timeouts)
    assert not [e for e in static if e["label"] == "reroute"]
    dynamic = events(runs / "A" / "resilient" / "live-0")
    around = [e["detail"] for e in dynamic if e["label"] == "reroute" and down[0] < e["t"] < up[0]]
    assert around  # while gw1 is down, every reroute goes around it
    assert all("gw1" in d["from_path"] and "gw2" in d["to_path"] and d["avoid"] == ["gw1"]
               for d in around)  # fmt: skip
    static_m = json.loads((runs / "A" / "dijkstra" / "live-0" / "metrics.json").read_text())
    dynamic_m = json.loads((runs / "A" / "resilient" / "live-0" / "metrics.json").read_text())
    rate = [m["workflows"]["succeeded"] / m["workflows"]["started"] for m in (static_m, dynamic_m)]
    assert rate[1] > rate[0]  # rerouting pays while gw1 is down


def test_calibrated_on_one_run_the_simulation_predicts_the_other(runs: Path) -> None:
    """A loose bound on 120 s runs; BENCHMARKS.md holds the issue's (10 % and 0.03) on
    480 s runs, measured by ``make bench`` (benchmarks/bench_live.py). p95 is left to it:
    in 120 s about 5 % of the instances that succeed were delayed by the outage (a timeout
    and a retry), so p95 falls either side of that gap from one run to the next."""
    traces = sorted(str(p) for p in (runs / "A").glob("*/live-0/trace.jsonl"))
    calibrated = runs / "calibrated.yaml"
    done = sim("calibrate", *traces, "--scenario", str(SMALL), "--out", str(calibrated))
    assert done.returncode == 0, done.stderr
    done = sim("compare", str(calibrated), "--against", str(runs / "B"), "--replications", "6",
               "--out", str(runs / "sim"), "--json", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    against = json.loads(done.stdout)
    for router in ("dijkstra", "resilient"):
        r = against["routers"][router]
        assert r["latency_p50"]["relative_error"] <= 0.15, (router, r["latency_p50"])
        diff = abs(r["success_rate"]["simulated"]["mean"] - r["success_rate"]["live"])
        assert diff <= 0.06, (router, r["success_rate"])
