"""``verify`` on the fan-out workflow (issue 35): the largest W decided within 60 s CPU
by the explicit search and by Storm (sparse and symbolic), and W = 8 by Storm.

``python -m benchmarks.run --only storm`` (``--quick``: 20 s budget).

The workflows are :func:`benchmarks.fanout.fanout`'s (a first task, W concurrent
tasks, a last task; three failure modes with recovery each, every third a write behind
approval). Each size is the whole command, ``python -m sim verify FILE --property
write_approval --json`` with the engine's options, in a fresh child process: its CPU
seconds (user + system, Storm's C++ included) from the child's resource usage. Each
child may use the budget's CPU seconds (``RLIMIT_CPU``: past it the kernel stops it, a
``cpu limit`` row) and :data:`MEMORY` bytes of address space (beyond it: out of memory);
an engine stops at the first W it does not decide.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.fanout import fanout
from benchmarks.run import Section, table

BUDGET = 60.0
#: the address space a child may take (a shared machine's share)
MEMORY = 3 << 30
#: the engines measured: label, ``verify`` options
ENGINES = (
    ("explicit", ["--engine", "explicit"]),
    ("storm sparse", ["--engine", "storm"]),
    ("storm symbolic (dd)", ["--symbolic"]),
)
SIZES = (1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 28, 32)
#: ``--quick``'s sizes (each engine stops at its first undecided one anyway)
QUICK_SIZES = (1, 2, 8)


def decide(path: Path, options: list[str], budget: float) -> tuple[str, int, int, float]:
    """(verdict, states, transitions, CPU s) of one ``verify`` command (see the module)."""

    def limits() -> None:
        cpu = int(budget) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = [sys.executable, "-m", "sim", "verify", str(path), "--property", "write_approval"]
    # the CPU limit decides (a wall-clock --max-seconds would stop a loaded machine's search)
    argv += [*options, "--json", "--max-seconds", str(budget * 10)]
    done = subprocess.run(argv, capture_output=True, text=True, preexec_fn=limits, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode < 0:
        stopped = -done.returncode == signal.SIGXCPU or cpu >= budget
        return ("cpu limit" if stopped else f"signal {-done.returncode}"), 0, 0, cpu
    if done.returncode not in (0, 1, 3) or not done.stdout.strip():
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"failed: {last[:60]}", 0, 0, cpu
    [found] = json.loads(done.stdout)["properties"]
    return found["verdict"], found["states"], found["transitions"], cpu


def run(quick: bool) -> Section:
    budget = 20.0 if quick else BUDGET
    rows: list[list[object]] = []
    largest: dict[str, int] = {}
    at_8: dict[str, tuple[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, options in ENGINES:
            for w in QUICK_SIZES if quick else SIZES:
                path = Path(tmp) / f"fanout-{w}.yaml"
                path.write_text(fanout(w), encoding="utf-8")
                verdict, states, transitions, cpu = decide(path, options, budget)
                rows.append([label, w, w + 2, verdict, f"{states:,}", f"{transitions:,}"])
                rows[-1].append(f"{cpu:.1f}")
                print(f"[bench] storm: {label} W={w}: {verdict} {cpu:.1f} s CPU", file=sys.stderr)
                if w == 8:
                    at_8[label] = (verdict, cpu)
                if verdict not in ("holds", "violated") or cpu > budget:
                    break
                largest[label] = w
    storm_8 = at_8.get("storm symbolic (dd)", ("not run", 0.0))
    passed = storm_8[0] == "holds" and storm_8[1] <= budget
    summary = [
        f"largest W decided within {budget:.0f} s CPU: {label} W = {largest.get(label, 0)}"
        for label, _ in ENGINES
    ]
    summary.append(f"W = 8 by storm symbolic: {storm_8[0]} in {storm_8[1]:.1f} s CPU")
    return Section(
        title="verify on Storm: the fan-out workflow, largest W decided in 60 s CPU",
        command="python -m benchmarks.run --only storm" + (" --quick" if quick else ""),
        table=table(
            ["Engine", "W", "Tasks", "Verdict", "States", "Transitions", "CPU s"],
            rows,
            align="lrrlrrr",
        )
        + "\n\n"
        + "\n".join(f"- {line}" for line in summary)
        + f"\n\nTarget: W = 8 (10 tasks) decided by storm within {budget:.0f} s CPU: "
        + ("PASS" if passed else "FAIL"),
        notes=[
            "write_approval (holds) on benchmarks/fanout.py's workflow; each row the whole "
            "`python -m sim verify FILE --property write_approval --json` in a fresh "
            "child (interpreter start and PRISM generation included), CPU s from its "
            "resource usage; an engine stops at its first W not decided in the budget",
            "explicit: the breadth-first search (its partial-order reduction does not "
            "apply: every task is ordered by ≺), undecided at 1,000,000 states "
            "(its --max-seconds set ten times the budget, so that the CPU limit decides); "
            "storm sparse: Storm's explicit matrices; storm symbolic: Storm's "
            "decision-diagram engine (Sylvan, one thread, 1 GiB of tables); every child "
            f"limited to the budget's CPU seconds and {MEMORY >> 30} GiB of address space",
            "states and transitions: the JSON's `states`/`transitions`, for explicit its "
            "`searched_states` (the product states its search stored), for Storm its "
            "`model_states` (the MDP Storm built from the composed program, each pending "
            "emission a state of its own; 0 where Storm's 64-bit count overflows)",
        ],
        passed=passed,
    )
