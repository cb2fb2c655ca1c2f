"""Loading: a scenario file of n explicit agents against libyaml reading the same text.

For each size (``benchmarks.scenario_files.scenario_text``: 1,000, 4,000 and 16,000
agents, block style, with links, tools and a workflow) and each round, interleaved:

* **ours** — ``parse_scenario(text)``: YAML composed with marks, validated, salvaged if
  need be, every rule checked;
* **yaml.load** — ``yaml.load(text, Loader=yaml.CSafeLoader)`` of the same text, as it
  runs by default (the cyclic collector on);
* **yaml.load, GC off** — the same with the collector paused, as the loader pauses it.

CPU time (``time.process_time``), medians. Targets: ours ≤ 2× each baseline at every
size, and linear growth (the time per agent at the largest size at most 1.5× that at the
smallest).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable

import yaml

from benchmarks.run import Section, table
from benchmarks.scenario_files import scenario_text
from sim.scenario import parse_scenario

COMMAND = "python -m benchmarks.run --only loading"
SIZES = (1_000, 4_000, 16_000)
QUICK_SIZES = (200, 400, 800)
ROUNDS = 3
QUICK_ROUNDS = 2
TARGET_RATIO = 2.0
TARGET_GROWTH = 1.5


def _cpu(fn: Callable[[], object], collect: bool = True) -> float:
    gc.collect()
    collecting = gc.isenabled()
    if not collect:
        gc.disable()
    start = time.process_time()
    try:
        fn()
    finally:
        if collecting:
            gc.enable()
    return time.process_time() - start


def measure(quick: bool = False) -> list[tuple[int, int, float, float, float]]:
    """(agents, bytes, ours, yaml.load, yaml.load with GC off) per size, medians in s."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = []
    for n in QUICK_SIZES if quick else SIZES:
        text = scenario_text(n)
        parse_scenario(text, "warm-up.yaml")
        samples: list[list[float]] = [[], [], []]
        for _ in range(QUICK_ROUNDS if quick else ROUNDS):
            samples[0].append(_cpu(lambda: parse_scenario(text, "generated.yaml")))  # noqa: B023
            samples[1].append(_cpu(lambda: yaml.load(text, Loader=loader)))  # noqa: B023
            samples[2].append(_cpu(lambda: yaml.load(text, Loader=loader), collect=False))  # noqa: B023
        ours, base, base_nogc = (statistics.median(s) for s in samples)
        out.append((n, len(text.encode()), ours, base, base_nogc))
    return out


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    rows = measure(quick)
    per_agent = [ours / n for n, _, ours, _, _ in rows]
    growth = per_agent[-1] / per_agent[0]
    ratios_ok = all(ours <= TARGET_RATIO * min(b, b0) for _, _, ours, b, b0 in rows)
    passed = ratios_ok and growth <= TARGET_GROWTH
    body = [
        [
            f"{n:,}",
            f"{size / 1e6:.2f} MB",
            f"{ours:.3f}",
            f"{base:.3f}",
            f"{ours / base:.2f}",
            f"{base_nogc:.3f}",
            f"{ours / base_nogc:.2f}",
            f"{ours / n * 1e6:.1f}",
        ]
        for n, size, ours, base, base_nogc in rows
    ]
    notes = [
        f"Targets: ours ≤ {TARGET_RATIO:g}× both baselines at every size; linear growth (µs "
        f"per agent at the largest size ≤ {TARGET_GROWTH:g}× the smallest's): measured "
        f"{growth:.2f}×.",
        "The loader pauses the cyclic garbage collector while it loads (a large file makes "
        "hundreds of thousands of objects that all stay; collecting them repeatedly grows "
        "as n²); yaml.load as it runs by default does not, hence the GC-off column.",
        "CPU seconds (process_time), medians of interleaved rounds.",
    ]
    if quick:
        notes.append("Quick mode: small sizes, two rounds; targets not checked.")
    return Section(
        title="Loading: scenario files against libyaml",
        command=COMMAND,
        table=table(
            [
                "agents",
                "file",
                "ours s",
                "yaml.load s",
                "× yaml.load",
                "yaml.load GC off s",
                "× GC off",
                "ours µs/agent",
            ],
            body,
        ),
        notes=notes,
        passed=None if quick else passed,
    )


if __name__ == "__main__":  # pragma: no cover
    for row in measure(quick="--quick" in sys.argv):
        print(row)
