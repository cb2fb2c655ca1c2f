"""Routing at scale: whole runs at 1,000 / 10,000 / 100,000 agents, about 10,000 instances.

``python -m benchmarks.run --only routing_scale`` (``--quick``: 1,000 and 3,000 agents,
2,000 instances).

Each size is a generated scenario (:func:`scenario_text`: Barabási–Albert, m = 2, MCP /
MCP+ / A2A, 5 % gateways, a ``search`` tool on 20 generated servers and ``book`` on 5,
one workflow started by every LLM agent at 10 instances per simulated second for 1,000
s), run once, router ``dijkstra``, trace level protocol, each run in a fresh interpreter
(``sim run``), CPU time of the child (user + system). Two modes, interleaved size by
size in the same process: **reverse** (the routers as shipped: one reverse tree per
target set, walks per caller) and **forward** (the same code with the walk disabled:
one forward SciPy tree per caller, the search before issue 17). Both traces must be
byte-identical (checked). Growth exponent: the slope of log CPU time over log agents
between the smallest and the largest size.
Targets (issue 17): exponent ≤ 1.1; reverse ≥ 8× forward at 100,000 agents.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks.run import ROOT, Section, table

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 3_000)
INSTANCES = 10_000
QUICK_INSTANCES = 2_000
DURATION = 1_000.0
EXPONENT_TARGET = 1.1
SPEEDUP_TARGET = 8.0
COMMAND = "python -m benchmarks.run --only routing_scale"

#: Run in the child: ``forward`` disables the walk (every route from a forward tree).
_CHILD = r"""
import resource, sys
if sys.argv[1] == "forward":
    from sim.mesh.routing import Router
    shortest = Router._shortest
    Router._shortest = lambda self, *a: shortest(self, *a, towards=False)
    Router._serve_walk = lambda self, *a: None
from sim.cli import main
code = main(["run", sys.argv[2], "--router", "dijkstra", "--replications", "1",
             "--trace", "protocol", "--out", sys.argv[3]])
from benchmarks.memory import own_peak_rss
use = resource.getrusage(resource.RUSAGE_SELF)
print(f"{use.ru_utime + use.ru_stime} {own_peak_rss()}", file=sys.stderr)
sys.exit(code)
"""


def scenario_text(agents: int, instances: int) -> str:
    """The generated scenario of ``agents`` agents and about ``instances`` instances."""
    doc = {
        "name": f"scale-{agents}",
        "seed": 7,
        "duration": DURATION,
        "replications": 1,
        "routers": ["dijkstra"],
        "trace": "protocol",
        "protocols": ["MCP", "MCP+", "A2A"],
        "agents": [{"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP": 1.0}}],
        "topology": {
            "generator": "barabasi_albert",
            "agents": agents,
            "params": {"m": 2},
            "attach": [{"agent": "planner", "links": 3}],
            "protocols": {"MCP": 0.6, "MCP+": 0.3, "A2A": 0.1},
            "gateways": 0.05,
            "types": {"LLM_AGENT": 0.75, "TOOL_SERVER": 0.2, "COORDINATOR": 0.05},
            "affinity": {"min": 0.6, "max": 1.0},
            "latency": {"dist": "uniform", "low": 0.001, "high": 0.02},
            "tools": [{"name": "search", "replicas": 20}, {"name": "book", "replicas": 5}],
        },
        "tools": [
            {"name": "search", "description": "Searches the catalogue.", "side_effects": "read"},
            {"name": "book", "description": "Books the offer.", "side_effects": "read"},
        ],
        "workflows": [
            {
                "name": "shop",
                "initiators": {"type": "LLM_AGENT"},
                "protocol": "MCP",
                "arrivals": {"process": "poisson", "rate": instances / DURATION},
                "tasks": [
                    {"id": "find", "tool": "search"},
                    {"id": "buy", "tool": "book", "after": ["find"]},
                ],
                "timeout": 10,
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def run_once(mode: str, scenario: Path, out: Path) -> tuple[float, int, str, int]:
    """(CPU seconds, peak RSS bytes, trace sha256, instances) of one run in a child."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(scenario), str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} run of {scenario.name} failed:\n{done.stderr[-2000:]}")
    cpu, rss = done.stderr.strip().splitlines()[-1].split()
    trace = out / "dijkstra" / "rep-0" / "trace.jsonl"
    data = trace.read_bytes()
    return float(cpu), int(rss), hashlib.sha256(data).hexdigest(), data.count(b"wf_start")


def exponent(sizes: tuple[int, ...], times: list[float]) -> float:
    """The slope of log time over log size between the first and the last size."""
    return math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])


def run(quick: bool) -> Section:
    sizes = QUICK_SIZES if quick else SIZES
    instances = QUICK_INSTANCES if quick else INSTANCES
    rows = []
    new_t: list[float] = []
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            scenario = Path(tmp) / f"scale-{n}.yaml"
            scenario.write_text(scenario_text(n, instances))
            t_new, rss_new, sha_new, inst = run_once("reverse", scenario, Path(tmp) / f"r{n}")
            t_old, rss_old, sha_old, _ = run_once("forward", scenario, Path(tmp) / f"f{n}")
            if sha_new != sha_old:
                raise AssertionError(f"{n} agents: the traces differ between the two searches")
            new_t.append(t_new)
            ratios.append(t_old / t_new)
            rows.append(
                [
                    f"{n:,}",
                    f"{inst:,}",
                    f"{t_old:.1f}",
                    f"{t_new:.1f}",
                    f"**{t_old / t_new:.1f}×**",
                    f"{rss_old / 2**20:,.0f} / {rss_new / 2**20:,.0f}",
                    "yes",
                ]
            )
    slope = exponent(sizes, new_t)
    met_slope = slope <= EXPONENT_TARGET
    met_speed = quick or ratios[-1] >= SPEEDUP_TARGET
    text = table(
        [
            "Agents",
            "Instances",
            "Forward trees per caller, CPU (s)",
            "Reverse trees per target, CPU (s)",
            "Speed-up",
            "Peak RSS forward / reverse (MiB)",
            "Same trace bytes",
        ],
        rows,
        "rrrrrrl",
    )
    notes = [
        f"Growth exponent of the reverse runs, {sizes[0]:,} → {sizes[-1]:,} agents: "
        f"**{slope:.2f}** (target ≤ {EXPONENT_TARGET}: {'PASS' if met_slope else 'FAIL'}).",
        f"Speed-up at {sizes[-1]:,} agents: **{ratios[-1]:.1f}×** (target ≥ "
        f"{SPEEDUP_TARGET:.0f}× at 100,000 agents"
        + (
            ": not applicable in quick mode)."
            if quick
            else f": {'PASS' if met_speed else 'FAIL'})."
        ),
        "CPU time is the child's user + system time for the whole `sim run` (loading and "
        "generating the scenario, compiling the graph, the run, the trace, the checks "
        "that `run` does); the two modes of one size run one after the other. Peak RSS is "
        "the child's own VmHWM (benchmarks/memory.py).",
    ]
    return Section(
        title="Routing at scale: whole runs, reverse vs forward trees",
        command=COMMAND + (" --quick" if quick else ""),
        table=text,
        notes=notes,
        passed=met_slope and met_speed,
    )
