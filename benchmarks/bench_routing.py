"""Routing: protomesh's dijkstra router against networkx on the same state graph.

For each mesh size (``benchmarks.generate.random_mesh``: average degree 4, MCP / MCP+ /
A2A, ~10% gateways) this builds the graph and the router's (node, protocol)
``StateSpace`` once, copies that state graph edge for edge (its ``rows``, ``cols`` and
``weights`` arrays) into a ``networkx.DiGraph``, and then, for the same random queries
(source, target, source protocol; any arrival protocol), interleaved query by query:

* **cold** — ``DijkstraRouter.route`` with the router's tree, reverse-tree and route
  caches cleared
  (the compiled state space and its CSR matrix are kept: their one-time cost is the
  *compile* column);
* **warm** — the same call again (a route-cache hit), averaged over repeats;
* **networkx** — ``networkx.dijkstra_path`` from the same source state to a virtual
  target node joined by 0-weight edges from every state of the target agent, which is
  what the router computes when no target protocol is given.

Every query checks that both sides return the same cost (within 1e-9) and that the
router's route re-costs to the same figure with ``route_cost`` on the graph itself.
Garbage collection is run before, and disabled during, each timed call on both sides.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import dijkstra as csgraph_dijkstra

from benchmarks.generate import random_mesh
from benchmarks.memory import own_peak_rss, reset_peak_rss, status
from benchmarks.run import ROOT, Section, table
from sim.mesh import DijkstraRouter, ProtocolGraph, Route, route_cost
from sim.mesh.routing import NO_DOWN, StateSpace

T = TypeVar("T")

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (200, 1_000)
QUERIES = 20
QUICK_QUERIES = 5
WARM_REPEATS = 200
SEED = 20_240_601
TOLERANCE = 1e-9

#: Median cold-query targets in seconds, by mesh size.
TARGETS = {10_000: 0.030, 100_000: 0.5}
COMMAND = "python -m benchmarks.run --only routing"


@dataclass
class Result:
    """Measurements for one mesh size (times in seconds, memory in bytes)."""

    n: int
    links: int
    states: int
    edges: int
    build: float
    compile: float
    nx_build: float
    traced_peak: int
    traced_kept: int
    rss_growth: int
    rss_build: int
    rss_end: int
    cold: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    nx: list[float] = field(default_factory=list)
    scipy: list[float] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    translations: int = 0


def _timed(call: Callable[[], T]) -> tuple[float, T]:
    """(seconds, value) of one call, after a GC and with GC disabled during it."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        value = call()
        return time.perf_counter() - start, value
    finally:
        gc.enable()


def _state_digraph(space: StateSpace) -> nx.DiGraph:
    """The router's state graph as a networkx DiGraph, edge for edge."""
    graph = nx.DiGraph()
    graph.add_weighted_edges_from(
        zip(space.rows.tolist(), space.cols.tolist(), space.weights.tolist(), strict=True)
    )
    return graph


def _queries(graph: ProtocolGraph, count: int, seed: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    agents = graph.agents
    out: list[tuple[str, str, str]] = []
    while len(out) < count:
        s, d = (int(x) for x in rng.integers(0, len(agents), size=2))
        if s == d:
            continue
        spoken = list(agents[s].protocols)
        out.append((agents[s].id, agents[d].id, spoken[int(rng.integers(0, len(spoken)))]))
    return out


def traced_build(n: int, seed: int) -> dict[str, float]:
    """tracemalloc peak and kept bytes of generating the mesh and compiling its state space.

    Run in a fresh process (see :func:`_traced_in_child`) so tracemalloc's overhead
    touches neither the timings nor the RSS figures of the main run.
    """
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    graph = random_mesh(n, seed=seed)
    space = StateSpace(graph)
    space.matrix(NO_DOWN)
    seconds = time.perf_counter() - start
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"peak": peak, "kept": kept, "seconds": seconds}


def _traced_in_child(n: int, seed: int) -> dict[str, float]:
    code = (
        "import json, sys\n"
        "from benchmarks.bench_routing import traced_build\n"
        "print(json.dumps(traced_build(int(sys.argv[1]), int(sys.argv[2]))))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", code, str(n), str(seed)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"traced build of n={n} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(n: int, queries: int, seed: int = SEED) -> Result:
    """Build a mesh of ``n`` agents and time ``queries`` queries on both sides."""
    mesh_seed = seed + n
    gc.collect()
    reset_peak_rss()
    rss_before = status("VmRSS")
    start = time.perf_counter()
    graph = random_mesh(n, seed=mesh_seed)
    build = time.perf_counter() - start

    router = DijkstraRouter(graph)
    start = time.perf_counter()
    space = router.space()
    space.matrix(NO_DOWN)
    compile_time = time.perf_counter() - start
    gc.collect()
    rss_growth = status("VmRSS") - rss_before
    rss_build = own_peak_rss()
    traced = _traced_in_child(n, mesh_seed)

    start = time.perf_counter()
    states = _state_digraph(space)
    nx_build = time.perf_counter() - start
    rss_end = own_peak_rss()

    result = Result(
        n=n,
        links=len(graph.links),
        states=states.number_of_nodes(),
        edges=len(space.rows),
        build=build,
        compile=compile_time,
        nx_build=nx_build,
        traced_peak=int(traced["peak"]),
        traced_kept=int(traced["kept"]),
        rss_growth=rss_growth,
        rss_build=rss_build,
        rss_end=rss_end,
    )
    k = space.k
    virtual = -1
    for i, (source, target, protocol) in enumerate(_queries(graph, queries, seed + 7 * n)):
        start_state = space.index[source] * k + space.pindex[protocol]
        d = space.index[target]
        states.add_weighted_edges_from((d * k + j, virtual, 0.0) for j in space.speaks[d])

        def cold(source: str = source, target: str = target, protocol: str = protocol) -> Route:
            router._trees.clear()
            router._sinks.clear()
            router._routes.clear()
            return router.route(source, target, source_protocol=protocol)

        def baseline(start_state: int = start_state) -> list[int]:
            return nx.dijkstra_path(states, start_state, virtual)  # type: ignore[no-any-return]

        def bare(start_state: int = start_state) -> object:
            # what the router calls, alone: how much of a cold query is SciPy's C code
            return csgraph_dijkstra(
                space.matrix(NO_DOWN),
                directed=True,
                indices=[start_state],
                return_predecessors=True,
                min_only=True,
            )

        # alternate which side goes first, so neither always runs on a warmer cache
        if i % 2 == 0:
            t_cold, route = _timed(cold)
            t_nx, path = _timed(baseline)
        else:
            t_nx, path = _timed(baseline)
            t_cold, route = _timed(cold)
        t_scipy, _ = _timed(bare)
        nx_cost = nx.path_weight(states, path, "weight")
        states.remove_node(virtual)

        def warm(source: str = source, target: str = target, protocol: str = protocol) -> Route:
            hit = router.route(source, target, source_protocol=protocol)
            for _ in range(WARM_REPEATS - 1):
                hit = router.route(source, target, source_protocol=protocol)
            return hit

        t_warm, again = _timed(warm)
        if again is not route:
            raise AssertionError(f"warm query {source}->{target} missed the route cache")
        if abs(route.cost - nx_cost) > TOLERANCE:
            raise AssertionError(
                f"n={n} {source}->{target} ({protocol}): protomesh cost {route.cost!r} "
                f"!= networkx cost {nx_cost!r}"
            )
        recost = route_cost(graph, route.path, route.protocols, source_protocol=protocol)
        if abs(recost - route.cost) > TOLERANCE:
            raise AssertionError(
                f"n={n} {source}->{target}: route re-costs to {recost!r}, not {route.cost!r}"
            )
        result.cold.append(t_cold)
        result.nx.append(t_nx)
        result.scipy.append(t_scipy)
        result.warm.append(t_warm / WARM_REPEATS)
        result.hops.append(route.hops)
        result.translations += len(route.translations)
    return result


# --- the section -----------------------------------------------------------------------


def _ms(x: float) -> str:
    return f"{x * 1e3:.3g}" if x < 1 else f"{x * 1e3:,.0f}"


def _mib(x: int) -> str:
    return f"{x / 2**20:,.0f}"


def _median(xs: list[float]) -> float:
    return float(np.median(xs))


def _p90(xs: list[float]) -> float:
    return float(np.percentile(xs, 90))


def checks(result: Result) -> list[tuple[str, bool]]:
    """The targets that apply to ``result``: (description, met)."""
    cold, base = _median(result.cold), _median(result.nx)
    out = []
    target = TARGETS.get(result.n)
    if target is not None:
        out.append((f"median ≤ {_ms(target)} ms", cold <= target))
    out.append(("≥ 1× networkx", base / cold >= 1.0))
    return out


def render(results: list[Result], quick: bool) -> Section:
    """The routing section of BENCHMARKS.md."""
    rows = []
    passed = True
    for r in results:
        found = checks(r)
        passed &= all(ok for _, ok in found)
        verdict = "; ".join(f"{what}: {'PASS' if ok else 'FAIL'}" for what, ok in found)
        ratios = [b / c for b, c in zip(r.nx, r.cold, strict=True)]
        spread = f"{min(ratios):.1f}–{max(ratios):.1f}×"
        rows.append(
            [
                f"{r.n:,}",
                f"{r.links:,}",
                f"{r.states:,} / {r.edges:,}",
                f"{r.compile:.3g}",
                f"{_ms(_median(r.cold))} / {_ms(_p90(r.cold))}",
                f"{_ms(_median(r.scipy))}",
                f"{_median(r.warm) * 1e6:.1f}",
                f"{_ms(_median(r.nx))} / {_ms(_p90(r.nx))}",
                f"**{_median(r.nx) / _median(r.cold):.1f}×** ({spread})",
                f"{sum(c > b for c, b in zip(r.cold, r.nx, strict=True))}/{len(r.cold)}",
                verdict,
            ]
        )
    times = table(
        [
            "Agents",
            "Links",
            "States / edges",
            "Compile (s)",
            "protomesh cold, median / p90 (ms)",
            "of which SciPy dijkstra (ms)",
            "Warm hit (µs)",
            "networkx, median / p90 (ms)",
            "networkx ÷ protomesh (per-query range)",
            "Queries where networkx was faster",
            "Targets",
        ],
        rows,
        "rrrrrrrrrrl",
    )
    memory = table(
        [
            "Agents",
            "Generate mesh (s)",
            "tracemalloc peak (MiB)",
            "Kept after build (MiB)",
            "RSS growth while building (MiB)",
            "Max RSS after build (MiB)",
            "Max RSS after networkx copy (MiB)",
            "networkx copy build (s)",
        ],
        [
            [
                f"{r.n:,}",
                f"{r.build:.2f}",
                _mib(r.traced_peak),
                _mib(r.traced_kept),
                _mib(r.rss_growth),
                _mib(r.rss_build),
                _mib(r.rss_end),
                f"{r.nx_build:.2f}",
            ]
            for r in results
        ],
    )
    largest = results[-1]
    queries = len(largest.cold)
    hops = [h for r in results for h in r.hops]
    notes = [
        f"{queries} random queries per size (same queries on both sides, interleaved, "
        "alternating which side runs first); source protocol fixed, any arrival protocol. "
        f"All {sum(len(r.cold) for r in results)} queries returned the same cost on both "
        f"sides (|Δ| ≤ {TOLERANCE:g}) and re-cost identically with `route_cost`. Routes "
        f"had {min(hops)}–{max(hops)} hops (median {int(np.median(hops))}) and "
        f"{sum(r.translations for r in results)} translations in all.",
        "**cold**: `DijkstraRouter.route` with its tree and route caches cleared before "
        "each query, so it runs SciPy's `dijkstra` on the CSR state matrix (a full "
        "single-source tree: SciPy has no early exit) and rebuilds the route; the "
        "one-time compile of the state space (Python loop over links and agents, then the "
        "CSR matrix) is excluded and shown as *Compile*. **warm**: the same call again, "
        f"a route-cache hit (mean of {WARM_REPEATS} calls).",
        "**networkx**: `networkx.dijkstra_path` on a `DiGraph` built once from the "
        "StateSpace's own `rows`/`cols`/`weights` arrays (so exactly the same states, "
        "edges and weights), from the source state to a virtual node joined by 0-weight "
        "edges from every state of the target agent (added and removed around each "
        "query, outside the timing). networkx stops as soon as the target is settled.",
        "Ratios: bold is median(networkx) ÷ median(protomesh cold); the range is the "
        "per-query min–max of the same ratio. networkx wins the queries whose target is "
        "a few hops away: it stops once the target is settled, while the router always "
        "computes the whole tree from the source (and caches it, so later queries from "
        "the same source are tree hits). *of which SciPy dijkstra* times the router's "
        "`scipy.sparse.csgraph.dijkstra` call alone on the same source: the rest of a "
        "cold query (checks, cache keys, walking predecessors, building the `Route`) is "
        "the difference.",
        "Memory: *tracemalloc peak* is the peak of Python and numpy allocations while "
        "generating the mesh (numpy sampling, then `ProtocolGraph`), compiling the "
        "`StateSpace` and its CSR matrix; *kept* is what is still allocated at the end. "
        "Both come from a separate, fresh process, so tracemalloc's overhead is in "
        "neither the timings nor the RSS figures. *RSS growth* is the main process's "
        "resident set after the build (graph + compiled state space, after a GC) minus "
        "before it; *max RSS* is the process high-water mark (`VmHWM`) since the size "
        "began (reset then), which includes the interpreter, numpy/scipy/networkx and "
        "whatever the process still holds; "
        "the column after the networkx copy shows what the baseline graph adds on top.",
    ]
    if quick:
        notes.insert(0, "Quick mode (small sizes): the 10k / 100k time targets do not apply.")
    return Section(
        title="Routing: dijkstra router vs networkx",
        command=COMMAND + (" --quick" if quick else ""),
        table="\n\n".join(["### Query time", times, "### Memory", memory]),
        notes=notes,
        passed=passed,
    )


def run(quick: bool) -> Section:
    """Measure every size and render the section."""
    sizes = QUICK_SIZES if quick else SIZES
    queries = QUICK_QUERIES if quick else QUERIES
    return render([measure(n, queries) for n in sizes], quick)
