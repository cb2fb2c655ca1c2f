"""``run`` end to end against raw SimPy: the command a user waits for, not the engine alone.

``python -m benchmarks.run --only run`` (``--quick``: a smaller mesh, one round). Alone:
``python -m benchmarks.bench_run [--quick] [--rounds N]``.

The generated mesh of :mod:`benchmarks.engine_mesh` at 1,000 agents (25 gateways, 100
callers, 100 tools), written as a scenario file, with enough instances for more than
500,000 link hops; ``python -m sim run FILE --replications 1 --quiet`` in a fresh
process, at ``--trace full`` and at ``--trace off``: everything the user pays for
(interpreter start, imports, loading and validating the file, building the graph and
routes, the run, the checks and properties, the explorer's data, metrics, the summary).
Its hops per CPU-second (CPU of the child and its children, ``wait4``) are set against
raw SimPy Store ping-pong messages per CPU-second at 1,000 processes
(:func:`benchmarks.bench_engine.raw_pingpong`) measured in the same round, the three
back to back; a ratio is the median of the rounds' own ratios.

Targets (issue 36): trace full ≥ 1.0×, trace off ≥ 2.0×.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from benchmarks.bench_engine import ROOT, raw_pingpong
from benchmarks.engine_mesh import scale_yaml
from benchmarks.run import Section, load_note, table

#: (agents, instances, rounds) full size and ``--quick``.
SIZES = {False: (1_000, 21_000, 5), True: (1_000, 4_000, 1)}
#: Trace level → target ratio against raw SimPy (issue 36).
TARGETS = {"full": 1.0, "off": 2.0}
HEADER = [
    "trace",
    "hops",
    "trace lines",
    "run CPU s (wall s)",
    "hops/CPU-s",
    "raw SimPy msgs/CPU-s",
    "ratio (rounds)",
    "target",
]


def mesh_file(folder: Path, agents: int, instances: int) -> Path:
    """The benchmark's scenario file in ``folder`` (the same arguments, the same text)."""
    path = folder / f"mesh{agents}.yaml"
    gateways, callers, tools = max(10, agents // 40), max(10, agents // 10), max(10, agents // 10)
    text = scale_yaml(
        agents,
        gateways=gateways,
        callers=callers,
        tools=tools,
        instances=instances,
        duration=200.0,
    )
    path.write_text(text, encoding="utf-8")
    return path


def run_once(scenario: Path, level: str, out: Path) -> dict[str, float]:
    """``python -m sim run`` in a fresh process: its CPU and wall seconds, the hops and
    trace lines of its metrics."""
    args = [sys.executable, "-m", "sim", "run", str(scenario), "--replications", "1"]
    args += ["--trace", level, "--out", str(out), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)} exited {os.waitstatus_to_exitcode(status)}")
    metrics = json.loads(next(out.glob("*/rep-0/metrics.json")).read_text(encoding="utf-8"))
    return {
        "cpu": usage.ru_utime + usage.ru_stime,
        "wall": wall,
        "hops": float(metrics["messages"]["hops"]),
        "lines": float(metrics.get("trace_lines", 0)),
    }


def measure(quick: bool, rounds: int | None = None) -> tuple[list[list[str]], bool]:
    """The table's rows: each round runs ``run`` at trace full, raw SimPy and ``run`` at
    trace off, back to back."""
    agents, instances, default_rounds = SIZES[quick]
    figures: dict[str, list[dict[str, float]]] = {level: [] for level in TARGETS}
    raw: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenario = mesh_file(folder, agents, instances)
        for k in range(rounds or default_rounds):
            for level in ("full", "raw", "off"):
                if level == "raw":
                    raw.append(raw_pingpong(agents, 1_000_000))
                    continue
                out = folder / f"out-{level}-{k}"
                figures[level].append(run_once(scenario, level, out))
                shutil.rmtree(out)
    rows, passed = [], True
    for level, target in TARGETS.items():
        runs = figures[level]
        ratios = [r["hops"] / r["cpu"] / s for r, s in zip(runs, raw, strict=True)]
        ratio = median(ratios)
        ok = ratio >= target
        passed &= ok
        rows.append(
            [
                level,
                f"{int(runs[0]['hops']):,}",
                f"{int(runs[0]['lines']):,}",
                f"{median([r['cpu'] for r in runs]):.2f} ({median([r['wall'] for r in runs]):.2f})",
                f"{median([r['hops'] / r['cpu'] for r in runs]):,.0f}",
                f"{median(raw):,.0f}",
                f"**{ratio:.2f}** ({min(ratios):.2f}–{max(ratios):.2f})",
                f"≥ {target}: {'yes' if ok else 'no'}",
            ]
        )
    return rows, passed


def run(quick: bool, rounds: int | None = None) -> Any:
    """The BENCHMARKS.md section."""
    before = os.getloadavg()
    rows, passed = measure(quick, rounds)
    after = os.getloadavg()
    agents, instances, default_rounds = SIZES[quick]
    notes = [
        f"Scenario: `benchmarks.engine_mesh.scale_yaml({agents}, gateways=25, callers=100, "
        f"tools=100, instances={instances}, duration=200)` written to a file; "
        "`python -m sim run FILE --replications 1 --trace LEVEL --quiet` in a fresh process "
        "(CPU of the child and its children), "
        f"{rounds or default_rounds} rounds of run full, raw SimPy (1,000 processes, "
        "1,000,000 messages, in this process) and run off, back to back; medians, a ratio "
        "the median of each round's own ratio, the rounds' lowest and highest in brackets.",
        load_note(before, after),
    ]
    return Section(
        title="run end to end: hops per CPU-second against raw SimPy",
        command="python -m benchmarks.run --only run" + (" --quick" if quick else ""),
        table=table(HEADER, rows),
        notes=notes,
        passed=passed,
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    count = int(args[args.index("--rounds") + 1]) if "--rounds" in args else None
    print(run("--quick" in args, count).render())
