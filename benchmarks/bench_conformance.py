"""Conformance checks: trace events checked per second, against ``json.loads`` alone.

``python -m benchmarks.run --only conformance`` (``--quick``: a smaller trace).

A real trace of ``scenarios/train_booking.yaml`` (one replication, router dijkstra, trace
level full) is written once, then concatenated with itself (every instance, invocation
and message of a copy ends within it, so the concatenation is a valid trace) up to about
1,000,000 events (200,000 with ``--quick``). In the same process, alternating three
times, we time (a) ``json.loads`` on every line of the file read in binary (the floor
a pure-stdlib checker could not beat) and (b) ``check_trace`` with all seven checks, from
the file, end to end (reading, decoding, checking, verdicts). Best of three each; the
ratio is (a)'s time over (b)'s. Target: ≥ 500,000 events/s for (b) on one core.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from benchmarks.run import Section, table
from sim.conformance.checks import check_trace
from sim.conformance.events import HAVE_MSGSPEC
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "train_booking.yaml"
TARGET = 500_000


def _json_loads(path: Path) -> float:
    started = time.perf_counter()
    loads = json.loads
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
    return time.perf_counter() - started


def run(quick: bool) -> Section:
    from sim.engine import run_replication

    scenario = load_scenario(SCENARIO)
    want = 200_000 if quick else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rep"
        run_replication(scenario, "dijkstra", 0, out, "full")
        one = (out / "trace.jsonl").read_bytes()
        lines = one.count(b"\n")
        copies = max(1, -(-want // lines))
        big = Path(tmp) / "big.jsonl"
        with open(big, "wb") as fh:
            for _ in range(copies):
                fh.write(one)
        events = lines * copies
        size = big.stat().st_size
        json_t, check_t = [], []
        report = None
        for _ in range(3):
            json_t.append(_json_loads(big))
            started = time.perf_counter()
            report = check_trace(big, scenario)
            check_t.append(time.perf_counter() - started)
        assert report is not None
    tj, tc = min(json_t), min(check_t)
    rate = events / tc
    rows = [
        ["json.loads per line (stdlib, no checks)", f"{tj:.3f}", f"{events / tj:,.0f}", "1.00×"],
        ["check_trace, all seven checks", f"{tc:.3f}", f"{rate:,.0f}", f"{tj / tc:.2f}×"],
    ]
    violations = sum(v.violations for v in report.verdicts)
    notes = [
        f"Trace: {copies} concatenated copies of one train_booking replication, {events:,} "
        f"events, {size / 2**20:.0f} MiB; all checks hold on it ({violations} violations).",
        "Times are the best of three, (a) and (b) alternating in one process on a shared "
        "machine: quote the ratio rather than the absolute rates.",
        "Decoder: "
        + ("msgspec typed structs (one decode per line)" if HAVE_MSGSPEC else "json.loads")
        + "; the garbage collector is paused while the checks stream (no reference cycles).",
    ]
    return Section(
        title="Conformance checks: events per second",
        command="python -m benchmarks.run --only conformance" + (" --quick" if quick else ""),
        table=table(["Reader", "Time (s)", "Events/s", "Speed vs json.loads"], rows)
        + f"\n\nTarget ≥ {TARGET:,} events/s: {'PASS' if rate >= TARGET else 'FAIL'}",
        notes=notes,
        passed=rate >= TARGET,
    )
