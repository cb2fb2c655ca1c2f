"""Link latencies given as distributions: each crossing is drawn from the law on the
``latency`` stream, the routers weigh the link by the law's mean, and the compiled and
the pure-Python engine draw the same (``sim/engine/paths.py`` ``Hop``,
``sim/engine/transport.py``)."""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import subprocess
import textwrap
from pathlib import Path

import pytest

from sim import native
from sim.engine import run_replication
from sim.engine.bugs import EngineBug
from sim.engine.paths import DRAWN, Hop
from sim.engine.topology import Topology
from sim.mesh import DijkstraRouter, ProtocolGraph
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario

DRAWN_MESH = """
name: drawn
seed: 5
duration: 60
protocols: [MCP]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: gw, type: GATEWAY, protocols: {MCP: 1.0}}
  - {id: server, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [lookup]}
links:
  - {between: [planner, gw], latency: {MCP: {dist: gamma, mean: 0.012, sd: 0.004}}}
  - {between: [gw, server], latency: {MCP: 0.005}}
tools:
  - {name: lookup, side_effects: read, service_time: {dist: constant, value: 0.05}}
workflows:
  - name: flow
    initiator: planner
    protocol: MCP
    arrivals: {process: poisson, rate: 5}
    tasks: [{id: a, tool: lookup}]
"""


@pytest.fixture(scope="module")
def drawn() -> Scenario:
    scenario, _ = parse_scenario(textwrap.dedent(DRAWN_MESH), "drawn.yaml")
    return scenario


def hop_delays(trace: Path) -> dict[frozenset[str], list[float]]:
    """Per link: each ``hop``'s time to the next event of the same message (no drop)."""
    open_hops: dict[int, dict[str, object]] = {}
    delays: dict[frozenset[str], list[float]] = {}
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        msg = event["detail"].get("msg") if event["label"] != "send" else None
        if msg is None:
            continue
        hop = open_hops.pop(msg, None)
        if hop is not None and event["label"] != "drop":
            ends = frozenset((hop["from"], hop["to"]))  # type: ignore[arg-type]
            delays.setdefault(ends, []).append(event["t"] - hop["t"])  # type: ignore[operator]
        if event["label"] == "hop":
            open_hops[msg] = {**event["detail"], "t": event["t"]}
    return delays


def test_each_crossing_is_drawn_from_the_law(drawn: Scenario, tmp_path: Path) -> None:
    run_replication(drawn, "dijkstra", 0, tmp_path, "full")
    delays = hop_delays(tmp_path / "trace.jsonl")
    gamma = delays[frozenset(("planner", "gw"))]
    assert len(gamma) > 500
    # the law's mean 0.012 s and sd 0.004 s (loosely: five standard errors of the mean)
    assert abs(statistics.fmean(gamma) - 0.012) < 5 * 0.004 / len(gamma) ** 0.5
    assert abs(statistics.stdev(gamma) - 0.004) < 0.0006
    assert len(set(gamma)) > len(gamma) // 2  # drawn, not one value
    fixed = delays[frozenset(("gw", "server"))]
    assert max(abs(d - 0.005) for d in fixed) < 2e-6  # the number's path: the trace's µs


def test_the_router_weighs_a_drawn_link_by_its_mean(drawn: Scenario) -> None:
    graph = ProtocolGraph.from_scenario(drawn)
    link = graph.link("planner", "gw")
    assert link is not None and link.latency == {"MCP": 0.012}
    assert link.laws["MCP"].family == "gamma"
    route = DijkstraRouter(graph).route("planner", "server")
    assert route.cost == pytest.approx(0.017)


def test_both_trace_levels_run_the_same_draws(drawn: Scenario, tmp_path: Path) -> None:
    full = run_replication(drawn, "dijkstra", 0, tmp_path / "full", "full")
    protocol = run_replication(drawn, "dijkstra", 0, tmp_path / "protocol", "protocol")
    assert full["workflows"] == protocol["workflows"]
    assert full["latency"] == protocol["latency"]


def test_a_hop_over_an_unbound_law_is_an_engine_bug(drawn: Scenario) -> None:
    topology = Topology(ProtocolGraph.from_scenario(drawn))
    with pytest.raises(EngineBug, match="not bound to a stream"):
        Hop(topology.link("planner", "gw"), 0.012, "MCP", "planner", "gw")


def test_a_numeric_latency_keeps_its_rate() -> None:
    scenario, _ = parse_scenario(
        textwrap.dedent(DRAWN_MESH).replace(
            "latency: {MCP: 0.005}", "latency: {MCP: 0.005}, jitter: 0.001"
        ),
        "drawn.yaml",
    )
    topology = Topology(ProtocolGraph.from_scenario(scenario))
    topology.draw_latencies(random.Random(0))
    numeric = Hop(topology.link("gw", "server"), 0.005, "MCP", "gw", "server")
    assert (numeric.latency, numeric.rate) == (0.005, 1000.0)
    assert Hop(topology.link("planner", "gw"), 0.012, "MCP", "planner", "gw").rate == DRAWN


_CHILD = """
import hashlib, sys, textwrap
from pathlib import Path
from sim import native
from sim.engine import run_replication
from sim.scenario import parse_scenario
out = Path(sys.argv[2])
run_replication(parse_scenario(textwrap.dedent(sys.argv[1]))[0], "dijkstra", 1, out, "full")
print(native.status().split()[0])
for name in ("trace.jsonl", "metrics.json"):
    print(hashlib.sha256((out / name).read_bytes()).hexdigest())
"""


def test_the_compiled_and_the_pure_engine_draw_the_same(drawn: Scenario, tmp_path: Path) -> None:
    run_replication(drawn, "dijkstra", 1, tmp_path / "compiled", "full")
    ours = [
        hashlib.sha256((tmp_path / "compiled" / name).read_bytes()).hexdigest()
        for name in ("trace.jsonl", "metrics.json")
    ]
    args = ["-c", _CHILD, DRAWN_MESH, str(tmp_path / "pure")]
    command, env = native.pure_command(tmp_path / "tree", *args)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    state, *theirs = done.stdout.split()
    assert state == "pure" and theirs == ours
