"""Why a router's tasks failed: the reasons of ``metrics.json``'s ``tasks_failed_by_reason``
(``no_route``, ``timeout``, ``denied``, a tool's error...), summed over a router's finished
runs, most frequent first. The summary holds them per (point, router) as
``failure_reasons`` (a :class:`FailureReason` each); ``report.md`` and ``report.html``
name the leading ones."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the summary imports this module to count the reasons
    from sim.experiments.summary import Summary

#: how many reasons the reports name per router
LEADING = 3


@dataclass(frozen=True, slots=True)
class FailureReason:
    """One reason tasks failed: its failed ``tasks`` over a router's runs and its
    ``share`` of all of them (0 < share ≤ 1); ``summary.json``'s ``{reason, tasks, share}``."""

    reason: str
    tasks: int
    share: float

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "tasks": self.tasks, "share": self.share}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> FailureReason:
        return FailureReason(data["reason"], data["tasks"], data["share"])


def failure_reasons(per_run: Iterable[Any]) -> tuple[FailureReason, ...]:
    """Each reason's failed tasks over the runs (a run's ``tasks_failed_by_reason``;
    anything else is skipped) and its share of them all, by count (descending), then
    name. The shares sum to 1 when any task failed."""
    total: Counter[str] = Counter()
    for counts in per_run:
        if isinstance(counts, dict):
            for reason, n in counts.items():
                if isinstance(n, int) and n > 0:
                    total[str(reason)] += n
    every = sum(total.values())
    ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return tuple(FailureReason(r, n, n / every) for r, n in ranked)


def leading_text(reasons: Sequence[FailureReason], limit: int = LEADING) -> str:
    """``no_route 3650 (100 %)``, the first ``limit`` reasons, comma-separated; ``none``."""
    if not reasons:
        return "none"
    shown = [f"{r.reason} {r.tasks} ({r.share * 100:.0f} %)" for r in reasons[:limit]]
    more = len(reasons) - limit
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def reasons_of(summary: Summary, point: str | None, router: str) -> tuple[FailureReason, ...]:
    """The summary's ``failure_reasons`` of (point, router); empty when absent."""
    row = summary.result(point, router)
    return () if row is None else row.failure_reasons


def reason_lines(summary: Summary, point: str | None, routers: Sequence[str]) -> list[str]:
    """``report.md``'s lines: each router's leading reasons for failed tasks."""
    lines = ["Why tasks failed (failed tasks by reason, summed over the replications):", ""]
    for router in routers:
        lines.append(f"- **{router}**: {leading_text(reasons_of(summary, point, router))}")
    return [*lines, ""]
