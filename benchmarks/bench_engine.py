"""Engine throughput: message hops per second against a raw SimPy ping-pong, and scale.

``python -m benchmarks.run --only engine`` (``--quick`` for small sizes).

1. *Hops per second* with trace level ``full``, side by side with the physical limit of
   a SimPy model on this machine: the same number of processes exchanging messages
   through ``simpy.Store`` (pairs ping-ponging, no work per message). The engine's figure
   counts link hops (each one a SimPy timeout with its trace line), measured on a
   generated mesh with as many agents as the raw model has processes. Target: at least
   a third of the raw rate.
2. *Scale*: a generated mesh of 10,000 agents runs 100,000 workflow instances of 4
   tasks with trace level ``protocol``, in a fresh process (peak RSS is that process's
   ``ru_maxrss``). Targets: ≤ 60 s wall, ≤ 2 GB peak.

The generated mesh (:func:`scale_scenario`): ``gateways`` gateways speaking MCP, MCP+
and A2A on a connected random graph (a random spanning tree plus random extra links,
average degree about 6); ``callers`` LLM agents speaking MCP+ (or MCP for one in
five), each linked to two gateways; the rest tool servers speaking MCP+ or MCP, each
linked to one gateway and hosting one of ``tools`` tools (so each tool has several
hosts). Every caller runs its own workflow of 4 tasks (two in
parallel, then two in sequence) on random tools, Poisson arrivals sized to give
``instances`` instances in ``duration`` seconds. A quarter of the tools are writes
with ``requires_approval``; tools fail with ServiceDown 1 % of the time and declare
Retry(2).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import simpy

from sim.engine.simulation import World
from sim.engine.trace import TraceWriter
from sim.scenario.model import Scenario

try:  # the Section type of benchmarks/run.py (a colleague's module)
    from benchmarks.run import Section, table
except ImportError:  # pragma: no cover
    Section = None  # type: ignore[assignment,misc]
    table = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent


# --- the generated mesh ----------------------------------------------------------------


def scale_scenario(
    agents: int = 10_000,
    *,
    gateways: int = 250,
    callers: int = 1_000,
    tools: int = 2_500,
    instances: int = 100_000,
    duration: float = 1_000.0,
    seed: int = 1,
    trace: str = "protocol",
) -> Scenario:
    """A seeded mesh of ``agents`` agents running about ``instances`` instances."""
    rng = random.Random(seed)
    servers = agents - gateways - callers
    if servers < 1:
        raise ValueError("agents must exceed gateways + callers")
    agent_specs: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    gw = [f"gw{i}" for i in range(gateways)]
    for g in gw:
        agent_specs.append(
            {"id": g, "type": "GATEWAY", "protocols": {"MCP": 1.0, "MCP+": 1.0, "A2A": 1.0}}
        )
    seen: set[tuple[int, int]] = set()

    def gw_link(a: int, b: int) -> None:
        key = (min(a, b), max(a, b))
        if a == b or key in seen:
            return
        seen.add(key)
        links.append(
            {
                "between": [gw[a], gw[b]],
                "latency": {
                    "MCP+": rng.uniform(0.002, 0.02),
                    "MCP": rng.uniform(0.002, 0.02),
                    "A2A": rng.uniform(0.002, 0.02),
                },
                "jitter": 0.001,
            }
        )

    for i in range(1, gateways):
        gw_link(i, rng.randrange(i))
    while len(seen) < 3 * gateways:
        gw_link(rng.randrange(gateways), rng.randrange(gateways))
    tool_names = [f"tool{k}" for k in range(tools)]
    tool_specs: list[dict[str, Any]] = []
    for k, name in enumerate(tool_names):
        write = k % 4 == 0
        spec: dict[str, Any] = {
            "name": name,
            "description": f"Generated tool {k}.",
            "side_effects": "write" if write else "read",
            "requires_approval": write,
            "annotations": {"readOnlyHint": not write},
            "failure_modes": [{"error": "ServiceDown", "recovery": {"retry": 2}}],
            "service_time": {"dist": "exponential", "mean": 0.05},
            "errors": {"ServiceDown": 0.01},
        }
        tool_specs.append(spec)
    for s in range(servers):
        sid = f"srv{s}"
        proto = "MCP+" if rng.random() < 0.7 else "MCP"
        agent_specs.append(
            {
                "id": sid,
                "type": "TOOL_SERVER",
                "protocols": {proto: 1.0},
                "tools": [tool_names[s % tools]],
                "concurrency": 4,
            }
        )
        links.append(
            {
                "between": [sid, gw[rng.randrange(gateways)]],
                "latency": {proto: rng.uniform(0.001, 0.01)},
            }
        )
    workflows: list[dict[str, Any]] = []
    rate = instances / callers / duration
    for c in range(callers):
        cid = f"agent{c}"
        proto = "MCP" if c % 5 == 4 else "MCP+"
        agent_specs.append({"id": cid, "type": "LLM_AGENT", "protocols": {proto: 1.0}})
        for g in rng.sample(range(gateways), 2):
            links.append({"between": [cid, gw[g]], "latency": {proto: rng.uniform(0.001, 0.01)}})
        picks = rng.sample(tool_names, 4)
        workflows.append(
            {
                "name": f"wf{c}",
                "initiator": cid,
                "protocol": proto,
                "arrivals": {"process": "poisson", "rate": rate},
                "timeout": 20,
                "tasks": [
                    {"id": "a", "tool": picks[0]},
                    {"id": "b", "tool": picks[1]},
                    {"id": "c", "tool": picks[2], "after": ["a", "b"]},
                    {"id": "d", "tool": picks[3], "after": ["c"]},
                ],
            }
        )
    return Scenario.model_validate(
        {
            "name": "generated-mesh",
            "seed": seed,
            "duration": duration,
            "trace": trace,
            "protocols": ["MCP", "MCP+", "A2A"],
            "approval": {
                "latency": {"dist": "exponential", "mean": 1.0},
                "grant_probability": 0.98,
            },
            "agents": agent_specs,
            "links": links,
            "tools": tool_specs,
            "workflows": workflows,
        }
    )


# --- measurements ----------------------------------------------------------------------


def raw_pingpong(processes: int, messages: int) -> float:
    """Messages per second of ``processes`` SimPy processes ping-ponging in pairs through
    ``simpy.Store`` (one message in flight per pair, a unit timeout per message)."""
    env = simpy.Environment()
    pairs = processes // 2
    per_pair = max(1, messages // pairs)
    count = [0]

    def player(inbox: simpy.Store, outbox: simpy.Store, serve: bool) -> Any:
        if serve:
            yield outbox.put(0)
        for _ in range(per_pair // 2):
            msg = yield inbox.get()
            count[0] += 1
            yield env.timeout(1)
            yield outbox.put(msg + 1)

    for _ in range(pairs):
        a, b = simpy.Store(env), simpy.Store(env)
        env.process(player(a, b, True))
        env.process(player(b, a, False))
    start = time.perf_counter()
    env.run()
    return count[0] / (time.perf_counter() - start)


def engine_hops(agents: int, instances: int, level: str = "full") -> tuple[float, int, float]:
    """(hops per second, hops, seconds) of the engine's run loop on a generated mesh of
    ``agents`` agents; building the world is not timed, writing the trace is."""
    scenario = scale_scenario(
        agents,
        gateways=max(10, agents // 40),
        callers=max(10, agents // 10),
        tools=max(10, agents // 10),
        instances=instances,
        duration=200.0,
        trace=level,
    )
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "trace.jsonl", "w") as fh:
        writer = TraceWriter(fh, 0, level)
        world = World(scenario, "dijkstra", 0, writer)
        start = time.perf_counter()
        world.run()
        writer.flush()
        seconds = time.perf_counter() - start
    hops = world.metrics.hops
    return hops / seconds, hops, seconds


def scale_child(agents: int, instances: int, out: str) -> None:
    """Run the scale benchmark in this process; print one JSON line of figures."""
    from sim.engine import run_replication

    t0 = time.perf_counter()
    scenario = scale_scenario(agents, instances=instances)
    t1 = time.perf_counter()
    metrics = run_replication(scenario, "dijkstra", 0, out, "protocol")
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    trace_bytes = os.path.getsize(Path(out) / "trace.jsonl")
    print(
        json.dumps(
            {
                "build_scenario_s": t1 - t0,
                "run_s": t2 - t1,
                "peak_rss": peak,
                "started": metrics["workflows"]["started"],
                "succeeded": metrics["workflows"]["succeeded"],
                "hops": metrics["messages"]["hops"],
                "trace_lines": metrics["trace_lines"],
                "trace_bytes": trace_bytes,
            }
        )
    )


def scale(agents: int, instances: int) -> dict[str, Any]:
    """Run :func:`scale_child` in a fresh interpreter (so its peak RSS is its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.bench_engine",
                "scale",
                str(agents),
                str(instances),
                tmp,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - start
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    figures["wall_s"] = wall
    return figures


def run(quick: bool) -> Any:
    """The BENCHMARKS.md section."""
    # (processes, instances, repeats): engine and raw alternate, medians are reported
    sizes = (
        [(1_000, 2_000, 1), (10_000, 5_000, 1)]
        if quick
        else [
            (1_000, 10_000, 3),
            (10_000, 20_000, 2),
        ]
    )
    rows = []
    passed = True
    for processes, instances, repeats in sizes:
        engine_runs, raw_runs = [], []
        for _ in range(repeats):
            engine_runs.append(engine_hops(processes, instances))
            raw_runs.append(raw_pingpong(processes, 200_000 if quick else 1_000_000))
        rate, hops, seconds = sorted(engine_runs)[len(engine_runs) // 2]
        raw = sorted(raw_runs)[len(raw_runs) // 2]
        ok = rate >= raw / 3
        passed &= ok
        rows.append(
            [
                f"{processes:,}",
                f"{hops:,}",
                f"{seconds:.2f}",
                f"{rate:,.0f}",
                f"{raw:,.0f}",
                f"{rate / raw:.2f}",
                "yes" if ok else "no",
            ]
        )
    agents, instances = (2_000, 10_000) if quick else (10_000, 100_000)
    s = scale(agents, instances)
    scale_ok = s["wall_s"] <= 60 and s["peak_rss"] <= 2 * 1024**3
    if not quick:
        passed &= scale_ok
    hop_table = (
        table(
            [
                "processes / agents",
                "engine hops",
                "engine s",
                "engine hops/s (trace full)",
                "raw SimPy msgs/s",
                "ratio",
                "≥ 1/3",
            ],
            rows,
        )
        if table is not None
        else json.dumps(rows)
    )
    scale_rows = [
        [
            f"{agents:,}",
            f"{s['started']:,}",
            f"{s['succeeded']:,}",
            f"{s['hops']:,}",
            f"{s['trace_lines']:,}",
            f"{s['run_s']:.1f}",
            f"{s['wall_s']:.1f}",
            f"{s['peak_rss'] / 1024**2:,.0f}",
            "yes" if scale_ok else "no",
        ]
    ]
    scale_table = (
        table(
            [
                "agents",
                "instances",
                "succeeded",
                "hops",
                "trace lines (protocol)",
                "run s",
                "wall s (all)",
                "peak RSS MiB",
                "≤ 60 s, ≤ 2 GB",
            ],
            scale_rows,
        )
        if table is not None
        else json.dumps(scale_rows)
    )
    notes = [
        "Hops/s: median of 3 (1,000) / 2 (10,000) alternating runs of each side; the "
        "engine's run loop (trace level full, trace written to a file) on a "
        "generated mesh with as many agents as the raw model has processes; raw: pairs of "
        "SimPy processes exchanging messages through simpy.Store, measured in the same run.",
        f"Scale: `python -m benchmarks.bench_engine scale {agents} {instances} DIR` in a fresh "
        "process; wall time includes generating and validating the scenario, building the "
        "graph and routes, and writing the trace.",
    ]
    if Section is None:
        return ("Engine", hop_table + "\n\n" + scale_table)
    return Section(
        title="Engine",
        command="python -m benchmarks.run --only engine" + (" --quick" if quick else ""),
        table=hop_table + "\n\n" + scale_table,
        notes=notes,
        passed=passed,
    )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "scale":
        scale_child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        section = run("--quick" in sys.argv)
        print(section.render() if hasattr(section, "render") else section[1])
