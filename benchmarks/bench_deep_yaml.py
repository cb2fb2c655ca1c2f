"""Deep nesting: a scenario ``x: [[[[…]]]]`` nested past libyaml's 1,000 levels, refused.

libyaml refuses it; the loader composes it again with PyYAML's pure-Python composer for
PyYAML's words (``sim/scenario/compose.py``), through ``sim/scenario/pure_yaml.py``'s
linear scanner. For each depth and round, interleaved:

* **ours** — ``parse_yaml(text)``: libyaml, then the linear retry, the located error;
* **stock retry** — the same with PyYAML's own ``yaml.SafeLoader`` as the retry (what the
  loader ran before: its scanner walks every open level's simple key before each token);
* **libyaml** — libyaml's refusal alone.

CPU time (``time.process_time``), medians. Targets: ours at least 10× faster than the stock
retry from 2,000 levels on, and no growth past libyaml's linear read (ours at the deepest at
most 2× ours at the shallowest: the retry stops where Python's stack does).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable

import yaml

from benchmarks.run import Section, table
from sim.scenario import compose

COMMAND = "python -m benchmarks.run --only deep_yaml"
DEPTHS = (1_000, 2_000, 4_000, 8_000)
QUICK_DEPTHS = (1_000, 2_000)
ROUNDS = 3
QUICK_ROUNDS = 1
TARGET_SPEEDUP = 10.0
TARGET_GROWTH = 2.0


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _ours(text: str) -> None:
    compose.parse_yaml(text, compose.Document("deep.yaml"))


def _stock(text: str) -> None:
    """libyaml's refusal, then PyYAML's own loader's retry (its stack ends it)."""
    with contextlib.suppress(yaml.YAMLError):
        compose._composed(text, compose.FAST_LOADER)
    with contextlib.suppress(yaml.YAMLError, RecursionError):
        compose._composed(text, yaml.SafeLoader)


def _libyaml(text: str) -> None:
    with contextlib.suppress(yaml.YAMLError):
        compose._composed(text, compose.FAST_LOADER)


def measure(quick: bool = False) -> list[tuple[int, float, float, float]]:
    """(depth, ours, stock retry, libyaml) per depth, medians in s."""
    out = []
    for depth in QUICK_DEPTHS if quick else DEPTHS:
        text = "x: " + "[" * depth + "]" * depth + "\n"
        samples: list[list[float]] = [[], [], []]
        for _ in range(QUICK_ROUNDS if quick else ROUNDS):
            for i, fn in enumerate((_ours, _stock, _libyaml)):
                samples[i].append(_cpu(lambda: fn(text)))  # noqa: B023
        ours, stock, base = (statistics.median(s) for s in samples)
        out.append((depth, ours, stock, base))
    return out


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    rows = measure(quick)
    growth = rows[-1][1] / rows[0][1]
    fast = all(stock >= TARGET_SPEEDUP * ours for d, ours, stock, _ in rows if d >= 2_000)
    body = [
        [f"{d:,}", f"{ours:.3f}", f"{stock:.3f}", f"{stock / ours:.1f}", f"{base:.4f}"]
        for d, ours, stock, base in rows
    ]
    notes = [
        f"Targets: ours ≥ {TARGET_SPEEDUP:g}× faster than the stock retry from 2,000 levels "
        f"on; ours at the deepest ≤ {TARGET_GROWTH:g}× ours at the shallowest: measured "
        f"{growth:.2f}×.",
        "Both retries end where Python's stack does (about 500 levels composed), so neither "
        "grows past 2,000 levels; the stock one pays its quadratic scan up to there.",
        "CPU seconds (process_time), medians of interleaved rounds.",
    ]
    if quick:
        notes.append("Quick mode: two depths, one round; targets not checked.")
    return Section(
        title="Deep nesting: a file past libyaml's 1,000 levels, refused",
        command=COMMAND,
        table=table(["depth", "ours s", "stock retry s", "× faster", "libyaml s"], body),
        notes=notes,
        passed=None if quick else fast and growth <= TARGET_GROWTH,
    )


if __name__ == "__main__":  # pragma: no cover
    for row in measure(quick="--quick" in sys.argv):
        print(row)
