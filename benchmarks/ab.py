"""Is a change to the engine faster? Paired CPU time of two checkouts, side by side.

``python -m benchmarks.ab OTHER [--rounds N] [--level full|protocol|off] [--agents N]
[--instances N]`` runs :func:`benchmarks.bench_engine.engine_hops` (hops per CPU-second
of the engine's run loop on the generated hop mesh) from this checkout and from
``OTHER``, another checkout of the project (``git worktree add /tmp/base HEAD~1``). Each
run is a fresh process of this interpreter started in its checkout (so it imports that
checkout's ``sim``); the two alternate, the first of a round swapping every round. It
prints each side's median rate and the median, lowest and highest of the rounds' own
ratios (this checkout over ``OTHER``): a ratio is paired, so a slow spell of a shared
machine weighs on both of its sides.

Why CPU time and not instruction counts: on 2026-12-06, on an Intel Xeon with 2 cores,
a change that cut callgrind's instructions per hop at level ``full`` by 4.8 % measured
0.98× and 0.98× here over 10 and 20 rounds; the same tree against a copy of itself
measured 1.00× (rounds 0.93–1.07). The engine's instructions per hop are about 0.6× raw
SimPy's per message, yet it runs at about 0.9× raw SimPy's rate there: what a change
does to the cycles per instruction decides (docs/engine.md, "Stretches"). A difference
under about 2 % needs more rounds than 20.

Each checkout runs the engine it has built (``make native`` in it; the first line printed
names both): a compiled checkout against an unbuilt one measures the compiler, not the
change. ``python -m sim native clean`` in each makes both interpreted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What each run executes, in its checkout (agents, instances, level).
RUN = (
    "from benchmarks.bench_engine import engine_hops; "
    "print(engine_hops({agents}, {instances}, {level!r})[0])"
)


#: Which engine a checkout runs (checkouts before the compiled engine run the source).
ENGINE = """
import pathlib, sim
import sim.engine as e
if (pathlib.Path(sim.__file__).parent / "native").is_dir():
    from sim.native import status
    print(status())
else:  # checkouts before sim.native: a state of sim.engine.compiled, or none
    print(getattr(getattr(e, 'compiled', None), 'state', 'pure (no compiled engine)'))
"""


def engine(checkout: Path) -> str:
    """Which engine ``checkout`` runs in a fresh process of this interpreter (``compiled
    (...)`` or ``pure (why)``: :func:`sim.native.status`)."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", ENGINE], cwd=checkout, capture_output=True, text=True
        )
    except OSError as exc:
        return f"unknown ({exc.strerror})"
    return out.stdout.strip() if out.returncode == 0 else f"unknown (exit {out.returncode})"


def rate(checkout: Path, agents: int, instances: int, level: str) -> float:
    """Hops per CPU-second of one run of ``checkout``'s engine, in a fresh process."""
    code = RUN.format(agents=agents, instances=instances, level=level)
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"{checkout}: the engine's run failed (exit {out.returncode}): {last}")
    return float(out.stdout.split()[-1])


def compare(
    other: Path, rounds: int, agents: int, instances: int, level: str
) -> tuple[list[float], list[float]]:
    """The rates of this checkout and of ``other`` over ``rounds`` alternating rounds."""
    ours: list[float] = []
    theirs: list[float] = []
    for k in range(rounds):
        sides = [(ROOT, ours), (other, theirs)]
        for checkout, rates in sides if k % 2 == 0 else reversed(sides):
            rates.append(rate(checkout, agents, instances, level))
    return ours, theirs


def summary(ours: list[float], theirs: list[float]) -> str:
    """The medians and the rounds' own ratios (this checkout over the other)."""
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    return (
        f"this: {statistics.median(ours):,.0f} hops/CPU-s, other: "
        f"{statistics.median(theirs):,.0f}; ratio (this/other) median "
        f"{statistics.median(ratios):.3f}, rounds {min(ratios):.3f}-{max(ratios):.3f} "
        f"({len(ratios)} rounds)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__)
    parser.add_argument("other", type=Path, help="another checkout of the project")
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--level", choices=("full", "protocol", "off"), default="full")
    parser.add_argument("--agents", type=int, default=1_000)
    parser.add_argument("--instances", type=int, default=10_000)
    args = parser.parse_args(argv)
    if not (args.other / "sim" / "engine").is_dir():
        parser.error(f"{args.other} is not a checkout of the project (no sim/engine)")
    for name in ("rounds", "agents", "instances"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    print(f"engines: this: {engine(ROOT)}; other: {engine(args.other)}")
    ours, theirs = compare(args.other, args.rounds, args.agents, args.instances, args.level)
    print(summary(ours, theirs))


if __name__ == "__main__":
    main()
