"""The ``topology:`` generator: expanding a block against networkx building its graph alone.

For each size, side by side and interleaved repeat by repeat:

* (a) ``networkx.barabasi_albert_graph(n, 2, seed)``, the link structure alone;
* (b) ``sim.scenario.generate.expand`` of the block of ``scenarios/large_mesh.yaml`` resized
  to ``n`` agents: the same structure plus types, protocols, affinities, latencies and the
  gateways that join the components;

and, once per repeat, ``load_scenario("scenarios/large_mesh.yaml")`` (YAML, validation,
expansion of 10,000 agents and every rule) against (a) at 10,000 agents. Figures are
medians; garbage collection is disabled while timing. The ratios are the figures to quote.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

import networkx as nx

from benchmarks.run import ROOT, Section, table
from sim.scenario import load_scenario
from sim.scenario.generate import expand
from sim.scenario.model import TopologySpec

LARGE_MESH = ROOT / "scenarios" / "large_mesh.yaml"
SEED = 3
SIZES = (1_000, 4_000, 10_000)
QUICK_SIZES = (500, 2_000)
TARGET_EXPAND = 25.0  # expand ≤ this × networkx's generator, at every size
#: time per agent at the largest size ≤ this × at the smallest: a quadratic part would give
#: the size ratio (10×); cache effects alone give about 2× on this machine.
TARGET_GROWTH = 3.0
TARGET_LOAD = 50.0  # loading large_mesh.yaml ≤ this × networkx's generator at 10,000
COMMAND = "python -m benchmarks.run --only generate"


def block(agents: int) -> TopologySpec:
    """The ``topology:`` block of ``scenarios/large_mesh.yaml`` with ``agents`` agents (its
    tool placements and attachments left out: they need the scenario's tools and agents)."""
    return TopologySpec(
        generator="barabasi_albert",
        agents=agents,
        params={"m": 2},
        protocols={"MCP": 0.6, "MCP+": 0.3, "A2A": 0.1},
        gateways=0.05,
        types={"LLM_AGENT": 0.75, "TOOL_SERVER": 0.2, "COORDINATOR": 0.05},
        affinity={"min": 0.6, "max": 1.0},
        latency={"dist": "uniform", "low": 0.001, "high": 0.02},
    )


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(sizes: tuple[int, ...], repeats: int) -> list[tuple[int, float, float, int]]:
    """``(agents, networkx s, expand s, links)`` per size, medians of ``repeats``."""
    rows = []
    for n in sizes:
        spec = block(n)
        links = len(expand(spec, SEED).links)  # warm up, and the size of what is built
        base, ours = [], []
        for _ in range(repeats):
            base.append(_timed(lambda n=n: nx.barabasi_albert_graph(n, 2, seed=SEED)))
            ours.append(_timed(lambda spec=spec: expand(spec, SEED)))
        rows.append((n, statistics.median(base), statistics.median(ours), links))
    return rows


def measure_load(repeats: int) -> tuple[float, float, int]:
    """``(networkx s at 10,000, load s, agents loaded)``, medians of ``repeats``."""
    agents = len(load_scenario(LARGE_MESH).agents)
    base, load = [], []
    for _ in range(repeats):
        base.append(_timed(lambda: nx.barabasi_albert_graph(10_000, 2, seed=SEED)))
        load.append(_timed(lambda: load_scenario(LARGE_MESH)))
    return statistics.median(base), statistics.median(load), agents


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    repeats = 2 if quick else 5
    rows = measure(QUICK_SIZES if quick else SIZES, repeats)
    ratios = [ours / base for _, base, ours, _ in rows]
    per_agent = [ours / n for n, _, ours, _ in rows]
    growth = per_agent[-1] / per_agent[0]
    body = [
        [
            f"{n:,}",
            f"{links:,}",
            f"{base * 1000:.1f} ms",
            f"{ours * 1000:.1f} ms",
            f"{ours / base:.1f}×",
            f"{ours / n * 1e6:.1f} µs",
        ]
        for (n, base, ours, links) in rows
    ]
    header = ["agents", "links", "(a) networkx", "(b) expand", "(b)/(a)", "(b) per agent"]
    text = table(header, body)
    notes = [
        f"Targets: (b)/(a) ≤ {TARGET_EXPAND:g} at every size; (b) per agent at the largest "
        f"size ≤ {TARGET_GROWTH:g}× at the smallest (no quadratic part, which would give "
        f"the size ratio; measured {growth:.2f}×).",
        f"Medians of {repeats} repeats, (a) and (b) alternating; garbage collection disabled "
        "while timing. (a) is `networkx.barabasi_albert_graph(n, 2)`, (b) "
        "`sim.scenario.generate.expand` of the `topology:` block of "
        "`scenarios/large_mesh.yaml` resized to n agents.",
    ]
    passed: bool | None = None
    if quick:
        notes.append("Quick mode: small sizes, no load of large_mesh.yaml; targets not checked.")
    else:
        base, load, agents = measure_load(repeats)
        text += "\n\n" + table(
            ["measure", "median", "ratio to (a) at 10,000"],
            [
                ["(a) networkx, 10,000 agents", f"{base * 1000:.1f} ms", "1.0×"],
                [
                    f"load_scenario(scenarios/large_mesh.yaml), {agents:,} agents",
                    f"{load * 1000:.1f} ms",
                    f"{load / base:.1f}×",
                ],
            ],
            "lrr",
        )
        notes.append(
            f"Target: loading scenarios/large_mesh.yaml (YAML, validation, expansion, every "
            f"rule) ≤ {TARGET_LOAD:g}× (a) at 10,000 agents."
        )
        passed = (
            all(r <= TARGET_EXPAND for r in ratios)
            and growth <= TARGET_GROWTH
            and load / base <= TARGET_LOAD
        )
    return Section(
        title="Generated topologies: expand against networkx",
        command=COMMAND,
        table=text,
        notes=notes,
        passed=passed,
    )


if __name__ == "__main__":  # pragma: no cover
    print(run().render())
