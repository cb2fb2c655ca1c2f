"""Why a router's tasks failed: the reasons of ``metrics.json``'s ``tasks_failed_by_reason``
(``no_route``, ``timeout``, ``denied``, a tool's error...), summed over a router's finished
runs, most frequent first. The summary holds them per (point, router) as
``failure_reasons``; ``report.md`` and ``report.html`` name the leading ones."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the summary imports this module to count the reasons
    from sim.experiments.summary import Summary

#: how many reasons the reports name per router
LEADING = 3


def failure_reasons(per_run: Iterable[Any]) -> list[dict[str, Any]]:
    """``[{"reason", "tasks", "share"}]``: each reason's failed tasks over the runs (a run's
    ``tasks_failed_by_reason``; anything else is skipped) and its share of them all, by
    count (descending), then name. The shares sum to 1 when any task failed."""
    total: Counter[str] = Counter()
    for counts in per_run:
        if isinstance(counts, dict):
            for reason, n in counts.items():
                if isinstance(n, int) and n > 0:
                    total[str(reason)] += n
    every = sum(total.values())
    ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return [{"reason": r, "tasks": n, "share": n / every} for r, n in ranked]


def leading_text(reasons: Sequence[dict[str, Any]], limit: int = LEADING) -> str:
    """``no_route 3650 (100 %)``, the first ``limit`` reasons, comma-separated; ``none``."""
    if not reasons:
        return "none"
    shown = [f"{r['reason']} {r['tasks']} ({r['share'] * 100:.0f} %)" for r in reasons[:limit]]
    more = len(reasons) - limit
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def reasons_of(summary: Summary, point: str | None, router: str) -> list[dict[str, Any]]:
    """The summary's ``failure_reasons`` of (point, router); empty when absent."""
    row = summary.result(point, router)
    return [] if row is None else row.failure_reasons


def reason_lines(summary: Summary, point: str | None, routers: Sequence[str]) -> list[str]:
    """``report.md``'s lines: each router's leading reasons for failed tasks."""
    lines = ["Why tasks failed (failed tasks by reason, summed over the replications):", ""]
    for router in routers:
        lines.append(f"- **{router}**: {leading_text(reasons_of(summary, point, router))}")
    return [*lines, ""]
