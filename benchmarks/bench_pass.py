"""The pass ``run --trace full`` makes in process, by part: where its CPU goes.

``python -m benchmarks.run --only pass`` (``--quick``: a smaller mesh, two rounds). Alone:
``python -m benchmarks.bench_pass [--quick] [--rounds N]``.

The trace of :mod:`benchmarks.bench_run`'s 1,000-agent mesh (one replication, trace
level full, router dijkstra) is written once; its lines are then fed in one process, in
the engine's 4 MiB turns (:data:`~sim.experiments.checked.TAP_BYTES`), to (a) the run's
decoder alone (the scenario's names interned, the page's detail keys), (b) the pass's
loop with no consumer, (c) the seven checks, (d) the consumers of ``run`` (the checks,
the page data, the properties: :class:`~sim.experiments.checked.RunChecks`) and (e) the
same consumers fed the events decoded beforehand, each turn's lines decoded untimed just
before the turn is fed: what the consumers would cost handed the engine's events without
a decode (the engine then building them instead). The parts alternate, the first of a
round swapping every round; CPU time (``time.process_time``), medians. Nothing is
asserted: the figures say what a cut of each part could give (docs/checks/README.md,
"During `run`").
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_run import SIZES, mesh_file
from benchmarks.run import Section, load_note, table

#: Rounds of every part (full size, ``--quick``).
ROUNDS = {False: 5, True: 2}
PARTS = (
    "(a) the decode alone",
    "(b) the loop, no consumer",
    "(c) the seven checks",
    "(d) run's consumers (checks, page, properties)",
    "(e) (d) fed events decoded beforehand",
)
HEADER = ["part", "CPU s", "µs per event", "of (d)"]

Turn = list[list[bytes]]


def turns(trace: bytes) -> list[Turn]:
    """The trace's lines as the engine hands them to ``run``'s pass: blocks of its
    writer's lines, gathered into turns of at least 4 MiB."""
    from sim.engine.trace import BLOCK_LINES
    from sim.experiments.checked import TAP_BYTES

    lines = trace.splitlines(keepends=True)
    step = BLOCK_LINES
    out: list[Turn] = [[]]
    size = 0
    for i in range(0, len(lines), step):
        block = lines[i : i + step]
        out[-1].append(block)
        size += sum(map(len, block))
        if size >= TAP_BYTES:
            out.append([])
            size = 0
    return [t for t in out if t]


def _timed(feed: Callable[[list[bytes]], object], parts: list[Turn], before: Any = None) -> float:
    """CPU seconds of ``feed`` over every block; ``before(turn)`` first, untimed."""
    cpu = 0.0
    for turn in parts:
        if before is not None:
            before(turn)
        started = time.process_time()
        for block in turn:
            feed(block)
        cpu += time.process_time() - started
    return cpu


def measure(quick: bool, rounds: int | None = None) -> tuple[list[float], int, int]:
    """Each part's median CPU seconds, the trace's events and bytes."""
    from sim.conformance.checks.stream import Checker
    from sim.engine import run_replication
    from sim.experiments.checked import RunChecks
    from sim.experiments.worker import built
    from sim.scenario import load_scenario

    agents, instances, _ = SIZES[quick]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenario = load_scenario(mesh_file(folder, agents, instances))
        run_replication(scenario, "dijkstra", 0, folder / "rep", "full")
        trace = (folder / "rep" / "trace.jsonl").read_bytes()
        kept = built(scenario, "bench_pass", checked=True)
        parts, size = turns(trace), len(trace)
        del trace
        events = sum(len(b) for t in parts for b in t)

        def consumers() -> tuple[Checker, RunChecks]:
            (folder / "page").mkdir(exist_ok=True)
            checks = RunChecks(folder / "page", kept)
            return checks._start(), checks

        first, kept_open = consumers()
        kept_open.close()
        decode = first.loop.decode  # run's: the page's detail keys too, for every part

        def decode_alone() -> float:
            return _timed(lambda block: [decode(raw) for raw in block], parts)

        def checker(checks: tuple[str, ...] | None) -> float:
            c = Checker("trace", kept.truth(), checks)
            c.loop.decode = decode
            cpu = _timed(c.feed, parts)
            return cpu + _report(c)

        def run_pass(before: bool) -> float:
            c, checks = consumers()

            def decoded(turn: Turn) -> None:
                c.loop.decode = {raw: decode(raw) for b in turn for raw in b}.__getitem__

            cpu = _timed(c.feed, parts, decoded if before else None) + _report(c)
            checks.close()
            return cpu

        runs: list[Callable[[], float]] = [
            decode_alone,
            lambda: checker(()),
            lambda: checker(None),
            lambda: run_pass(False),
            lambda: run_pass(True),
        ]
        gc.collect()
        gc.freeze()  # the trace's lines and the built scenario: never walked
        figures: list[list[float]] = [[] for _ in runs]
        for r in range(rounds or ROUNDS[quick]):
            order = list(range(len(runs)))
            for k in order if r % 2 == 0 else order[::-1]:
                figures[k].append(runs[k]())
        gc.unfreeze()
    return [statistics.median(f) for f in figures], events, size


def _report(c: Any) -> float:
    started = time.process_time()
    c.report()
    return time.process_time() - started


def run(quick: bool, rounds: int | None = None) -> Section:
    """The BENCHMARKS.md section."""
    before = os.getloadavg()
    medians, events, size = measure(quick, rounds)
    after = os.getloadavg()
    whole = medians[3]
    rows = [
        [name, f"{s:.2f}", f"{s / events * 1e6:.2f}", f"{s / whole:.2f}×"]
        for name, s in zip(PARTS, medians, strict=True)
    ]
    agents, instances, _ = SIZES[quick]
    notes = [
        f"Trace: `benchmarks.bench_run`'s mesh ({agents} agents, {instances} instances), "
        f"one replication at trace full: {events:,} events, {size / 1e6:.0f} MB, fed in "
        f"turns of 4 MiB, {rounds or ROUNDS[quick]} rounds alternating, medians.",
        load_note(before, after),
    ]
    return Section(
        title="run's in-process pass, by part",
        command="python -m benchmarks.run --only pass" + (" --quick" if quick else ""),
        table=table(HEADER, rows),
        notes=notes,
        passed=None,
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    count = int(args[args.index("--rounds") + 1]) if "--rounds" in args else None
    print(run("--quick" in args, count).render())
