"""Start-up: the CPU time of a command line, from interpreter start to its answer.

Each command runs in a fresh interpreter; its CPU time (user + system) is the child's
rusage delta (``RUSAGE_CHILDREN``), or, for ``serve mcp``, its own ``/proc/<pid>/stat``
times read the moment its ``initialize`` answer arrives. The baseline is
``python -c "import yaml, pydantic"`` in the same run; commands are interleaved round by
round and the figures are medians. The route scenario (1,000 explicit agents) and the
200,000-``x-``-key file are written to a temporary folder
(``benchmarks.scenario_files``).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.run import ROOT, Section, table
from benchmarks.scenario_files import scenario_text

COMMAND = "python -m benchmarks.run --only startup"
ROUNDS = 7
QUICK_ROUNDS = 2
X_KEYS = 200_000
#: CPU-second targets (issue 10 and 16).
TARGETS = {"--help": 0.4, "validate": 0.4, "serve mcp": 1.0, "validate 200,000 x- keys": 2.0}

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def _cpu(args: list[str]) -> float:
    """CPU seconds of ``python ARGS`` run to its end (it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _serve_cpu(scenario: str) -> float:
    """CPU seconds of ``serve mcp SCENARIO`` until its answer to ``initialize``."""
    child = subprocess.Popen(
        [sys.executable, "-m", "sim", "serve", "mcp", scenario],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        child.stdin.flush()
        answer = json.loads(child.stdout.readline())
        stat = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        if "result" not in answer:
            raise RuntimeError(f"serve mcp answered initialize with {answer}")
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(stat[11]) + int(stat[12])) / ticks  # utime, stime
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def measure(quick: bool = False) -> tuple[list[list[str]], bool]:
    """The rows of the table and whether every target holds."""
    rounds = QUICK_ROUNDS if quick else ROUNDS
    with tempfile.TemporaryDirectory(prefix="protomesh-startup-") as tmp:
        mesh = Path(tmp) / "mesh-1000.yaml"
        mesh.write_text(scenario_text(1000), encoding="utf-8")
        extended = Path(tmp) / "x-keys.yaml"
        base = (ROOT / "scenarios" / "train_booking.yaml").read_text(encoding="utf-8")
        keys = X_KEYS // 10 if quick else X_KEYS
        extended.write_text(base + "".join(f"x-k{i}: {i}\n" for i in range(keys)))
        commands = {
            "import yaml, pydantic": ["-c", "import yaml, pydantic"],
            "--help": ["-m", "sim", "--help"],
            "validate": ["-m", "sim", "validate", "scenarios/train_booking.yaml"],
            "route (1,000 agents)": [
                *("-m", "sim", "route", str(mesh)),
                *("--from", "a000000", "--to", "a000500"),
            ],
            f"validate {keys:,} x- keys": ["-m", "sim", "validate", str(extended)],
        }
        times: dict[str, list[float]] = {name: [] for name in [*commands, "serve mcp"]}
        for _ in range(rounds):
            for name, args in commands.items():
                times[name].append(_cpu(args))
            times["serve mcp"].append(_serve_cpu("scenarios/train_booking.yaml"))
    baseline = statistics.median(times["import yaml, pydantic"])
    rows: list[list[str]] = []
    passed = True
    for name, samples in times.items():
        median = statistics.median(samples)
        target = TARGETS.get(name)
        verdict = "-"
        if target is not None:
            ok = median <= target
            passed = passed and ok
            verdict = f"≤ {target:g} s: {'PASS' if ok else 'FAIL'}"
        shown = "1.00" if name.startswith("import") else f"{median / baseline:.2f}"
        rows.append([f"`{name}`", f"{median:.3f}", f"{max(samples):.3f}", shown, verdict])
    return rows, passed


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    rows, passed = measure(quick)
    notes = [
        "CPU seconds (user + system) of a fresh `python` running the command: `python -m "
        "sim ...` except the baseline; `serve mcp scenarios/train_booking.yaml` until it "
        "answers `initialize` on stdin.",
        "The ratio is to the baseline measured in the same run; rounds interleave the "
        "commands; medians (and the slowest round).",
        "What each command imports is pinned by tests/cli/test_startup_imports.py.",
    ]
    if quick:
        notes.append(
            f"Quick mode: {QUICK_ROUNDS} rounds, {X_KEYS // 10:,} x- keys; targets not checked."
        )
    return Section(
        title="Start-up: CPU time of a command",
        command=COMMAND,
        table=table(
            ["command", "median CPU s", "slowest s", "× import yaml, pydantic", "target"],
            rows,
            "lrrrl",
        ),
        notes=notes,
        passed=None if quick else passed,
    )


if __name__ == "__main__":  # pragma: no cover
    for row in measure(quick="--quick" in sys.argv)[0]:
        print(" | ".join(row))
