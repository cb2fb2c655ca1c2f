"""The verdict of a comparison, as ``summary.json``'s ``verdict``: per sweep point, which
router is better on which metric with the 95 % intervals (``sentences``), why (``why``:
each router's leading reasons for failed tasks, its translations, time-outs and drops),
and every metric side by side (``table``). ``report.html`` opens on it (sim.view.verdict
draws it as written)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from sim.experiments.point_verdict import PointVerdict, SideBySide
from sim.experiments.reasons import leading_text, reasons_of
from sim.experiments.report import fmt_stat, overlap, table_metrics
from sim.experiments.summary import Summary, unit_of

#: metrics a verdict compares, each with True when higher is better
VERDICT_METRICS: tuple[tuple[str, bool], ...] = (
    ("success_rate", True),
    ("latency_p95", False),
    ("messages_dropped", False),
    ("timeouts", False),
)
#: the figures behind a router's result, named in ``why`` after its failed tasks
WHY_METRICS = ("translations", "fields_lost", "timeouts", "messages_dropped", "reroutes")


def better(
    summary: Summary, point: str | None, a: str, b: str, metric: str, higher: bool
) -> str | None:
    """One sentence: which of routers ``a`` and ``b`` is better on ``metric``, with both
    intervals and whether they overlap; None when either has no value."""
    sa, sb = summary.stat(point, a, metric), summary.stat(point, b, metric)
    if sa is None or sb is None or sa.mean is None or sb.mean is None:
        return None
    ma, mb = sa.mean, sb.mean
    if ma == mb:
        return f"{a} and {b} are level on {metric}: {fmt_stat(sa)}."
    (win, sw), (lose, sl) = ((a, sa), (b, sb)) if (ma > mb) == higher else ((b, sb), (a, sa))
    tail = {
        None: "one replication: no interval",
        True: "the 95 % intervals overlap: not significant",
        False: "the 95 % intervals do not overlap",
    }[overlap(sw, sl)]
    return (
        f"{win} is better than {lose} on {metric}: {fmt_stat(sw)} against {fmt_stat(sl)} ({tail})."
    )


def why(summary: Summary, point: str | None, router: str) -> str:
    """``failed tasks: no_route 186 (100 %); translations 0 [0, 0]; ...``."""
    parts = [f"failed tasks: {leading_text(reasons_of(summary, point, router))}"]
    for metric in WHY_METRICS:
        stat = summary.stat(point, router, metric)
        if stat is not None and stat.mean is not None:
            parts.append(f"{metric} {fmt_stat(stat)}")
    return "; ".join(parts)


def verdict(summary: Summary, routers: Sequence[str]) -> tuple[PointVerdict, ...]:
    """``summary.json``'s ``verdict``: one per point, in the summary's order."""
    out = []
    for point in summary.points:
        pid = point.id
        sentences = tuple(
            s
            for a, b in itertools.combinations(routers, 2)
            for metric, higher in VERDICT_METRICS
            if (s := better(summary, pid, a, b, metric, higher)) is not None
        )
        rows = tuple(
            (m, unit_of(m), *(fmt_stat(summary.stat(pid, r, m)) for r in routers))
            for m in table_metrics(summary, pid)
        )
        out.append(
            PointVerdict(
                pid,
                point.params or {},
                sentences,
                {r: why(summary, pid, r) for r in routers},
                SideBySide(("metric", "unit", *routers), rows),
            )
        )
    return tuple(out)
