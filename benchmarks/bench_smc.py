"""Statistical model checking (SPEC §10): ``smc`` replications per second on the shipped
one-instance scenario, as a ratio to ``run --trace off`` replications per second on the
same scenario, measured side by side in one run.

``python -m benchmarks.run --only smc`` (``--quick``: fewer replications).

Two measures, both on ``scenarios/smc_approval.yaml`` (router dijkstra, one worker):

- the commands, as a user runs them (process start included):
  ``python -m sim smc FILE --property paid --width 0.0001 --max-runs N`` against
  ``python -m sim run FILE --trace off --replications M``; replications / wall second;
- in process: :func:`sim.experiments.smc_runner.replicate` (monitored, no file) against
  :func:`sim.experiments.runner.execute_task` at trace level off (what ``run`` does per
  replication: run directory, metrics, checks, series, atomic publish); ms per
  replication, best of three.

Targets: an smc replication costs milliseconds (≤ 10 ms in process) and the ``smc``
command does at least as many replications per second as ``run --trace off``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.run import Section, table

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "smc_approval.yaml"
#: ms per in-process smc replication
MAX_MS = 10.0


def _wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sim", *argv], check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def _in_process(reps: int) -> tuple[float, float]:
    """Best-of-three ms per replication: (smc replicate, run's execute_task at off)."""
    from sim.experiments.runner import Task, execute_task, fingerprint
    from sim.experiments.smc_runner import SmcJob, compiled, replicate
    from sim.scenario import load_scenario
    from sim.scenario.properties import compile_properties

    scenario = load_scenario(SCENARIO)
    props = tuple(p for p in compile_properties(scenario.properties, scenario))
    c = compiled(SmcJob(scenario, props, "protocol", "bench"))
    fp = fingerprint(scenario)
    best_smc = best_run = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(3):
            started = time.perf_counter()
            for k in range(reps):
                replicate(c, "dijkstra", k)
            best_smc = min(best_smc, (time.perf_counter() - started) / reps)
            started = time.perf_counter()
            for k in range(reps):
                out = Path(tmp) / f"a{attempt}" / f"rep-{k}"
                execute_task(Task(scenario, "dijkstra", k, str(out), None, "off", fp))
            best_run = min(best_run, (time.perf_counter() - started) / reps)
    return best_smc * 1e3, best_run * 1e3


def run(quick: bool) -> Section:
    n_smc, n_run, n_in = (400, 100, 100) if quick else (2000, 400, 300)
    file = str(SCENARIO.relative_to(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        smc_s = _wall(
            ["smc", file, "--property", "paid", "--width", "0.0001", "--max-runs", str(n_smc)]
        )
        run_s = _wall(["run", file, "--trace", "off", "--replications", str(n_run), "--out", tmp])
    smc_rate, run_rate = n_smc / smc_s, n_run / run_s
    smc_ms, run_ms = _in_process(n_in)
    ratio = smc_rate / run_rate
    passed = smc_ms <= MAX_MS and ratio >= 1.0
    rows = [
        ["`smc --max-runs N`", n_smc, f"{smc_s:.2f}", f"{smc_rate:,.0f}", f"{ratio:.1f}×"],
        ["`run --trace off --replications N`", n_run, f"{run_s:.2f}", f"{run_rate:,.0f}", "1×"],
    ]
    inproc = table(
        ["In process (best of 3)", "ms / replication", "ratio"],
        [
            ["smc replicate (monitored, no file)", f"{smc_ms:.2f}", f"{run_ms / smc_ms:.1f}×"],
            ["run's execute_task, trace off", f"{run_ms:.2f}", "1×"],
        ],
    )
    return Section(
        title="Statistical model checking: smc replications per second vs run --trace off",
        command="python -m benchmarks.run --only smc" + (" --quick" if quick else ""),
        table=table(["Command", "Replications", "Wall (s)", "Replications/s", "vs run"], rows)
        + "\n\n"
        + inproc
        + f"\n\nTargets: smc ≤ {MAX_MS:g} ms per replication in process "
        f"({'PASS' if smc_ms <= MAX_MS else 'FAIL'}, {smc_ms:.2f}); smc command ≥ run --trace "
        f"off in replications/s ({'PASS' if ratio >= 1 else 'FAIL'}, {ratio:.1f}×)",
        notes=[
            "scenarios/smc_approval.yaml: one instance, one approval-gated write; router "
            "dijkstra; one worker; wall times include the process start",
            "the machine is shared: the ratios, measured side by side, are the figures",
        ],
        passed=passed,
    )
