"""The fuzzer, long form: thousands of seeded mutants of the shipped scenarios (issue 16).

Each mutant (:mod:`benchmarks.mutation`) is validated through the command line and, when it
validates, run for a short replication whose trace must keep ``conservation`` and
``route_validity``. The table counts the outcomes per mutator; the target is no finding
(no traceback from ``validate``, no crashed replication, no broken invariant, no mutant
over its deadline). ``make test`` runs the quick form (``tests/scenario/test_fuzz.py``).
"""

from __future__ import annotations

import collections
import sys
import tempfile
from pathlib import Path

from benchmarks.mutation import (
    DEADLINE,
    GUARD_EVENTS,
    MUTATORS,
    SCENARIOS,
    SHORT,
    judge,
    mutants,
)
from benchmarks.run import Section, table

COUNT = 2_100
QUICK_COUNT = 210
SEED = 16
OUTCOMES = (
    "rejected",
    "ran",
    "stopped",
    "too long",
    "plugin error",
    "crash",
    "run crash",
    "invariant",
    "hang",
)
#: what the totals line counts as validated (exit 0) and as a replication that ran
VALIDATED = ("ran", "stopped", "too long", "plugin error", "run crash", "invariant")
RAN = ("ran", "stopped", "plugin error", "run crash", "invariant")
FINDINGS = ("crash", "run crash", "invariant", "hang")
COMMAND = "python -m benchmarks.run --only fuzz"


#: worker processes judging mutants (each mutant has its own CPU-time deadline; the
#: counts do not depend on the number of workers)
JOBS = 2
#: mutants per task sent to a worker
CHUNK = 50


def judge_range(start: int, stop: int) -> list[tuple[int, str, str, str]]:
    """(index, mutator, outcome, detail of a finding) of mutants ``start`` .. ``stop``-1."""
    out: list[tuple[int, str, str, str]] = []
    with tempfile.TemporaryDirectory() as work:
        for mutant in mutants(stop, SEED, start):
            place = Path(work) / str(mutant.seed % 8)
            place.mkdir(exist_ok=True)
            verdict = judge(mutant, place)
            detail = f"`{mutant.name}`: {verdict.outcome}: {verdict.detail}"
            out.append((mutant.seed, mutant.mutator, verdict.outcome, detail))
    return out


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    from concurrent.futures import ProcessPoolExecutor

    count = QUICK_COUNT if quick else COUNT
    counts: dict[str, collections.Counter[str]] = {m: collections.Counter() for m in MUTATORS}
    findings: list[tuple[int, str]] = []
    starts = range(0, count, CHUNK)
    with ProcessPoolExecutor(max_workers=JOBS) as pool:
        chunks = pool.map(judge_range, starts, [min(count, s + CHUNK) for s in starts])
        for chunk in chunks:
            for index, mutator, outcome, detail in chunk:
                counts[mutator][outcome] += 1
                if outcome in FINDINGS:
                    findings.append((index, detail))
                    print(f"fuzz: finding: {detail}", file=sys.stderr, flush=True)
            done = collections.Counter(o for c in counts.values() for o in c.elements())
            print(
                f"fuzz: {sum(done.values())} of {count}: {dict(done)}", file=sys.stderr, flush=True
            )
    findings = sorted(findings)
    rows = [[m, *(counts[m][o] for o in OUTCOMES), sum(counts[m].values())] for m in MUTATORS]
    total = {o: sum(c[o] for c in counts.values()) for o in OUTCOMES}
    rows.append(["all", *(total[o] for o in OUTCOMES), count])
    notes = [
        f"Totals: {count:,} mutants; {sum(total[o] for o in VALIDATED):,} validated (exit 0), "
        f"{total['rejected']:,} rejected (exit 2, located); "
        f"{sum(total[o] for o in RAN):,} replications run, {total['stopped']:,} of them stopped "
        f"by the progress guard ({GUARD_EVENTS:,} events) with the located element; "
        f"findings (tracebacks, crashed replications, broken invariants, hangs): "
        f"{sum(total[o] for o in FINDINGS)}.",
        f"{count:,} mutants (seed {SEED}) round-robin over the {len(SCENARIOS)} shipped "
        f"scenarios and the {len(MUTATORS)} mutators; a mutant that validates runs one "
        f"replication of at most {SHORT:g} simulated seconds (trace level full); each mutant "
        f"has {DEADLINE} s of CPU time; {JOBS} worker processes.",
        "Target: no finding (crash, run crash, invariant, hang). `stopped`: validated, and its "
        "replication passed its event budget and stopped naming the element that drives it.",
        *(detail for _, detail in findings[:20]),
    ]
    if len(findings) > 20:
        notes.append(f"... and {len(findings) - 20} more findings")
    return Section(
        title="Fuzzer: mutants of the shipped scenarios",
        command=COMMAND,
        table=table(["mutator", *OUTCOMES, "mutants"], rows),
        notes=notes,
        passed=not findings,
    )
