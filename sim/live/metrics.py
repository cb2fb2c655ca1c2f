"""The metrics of a live run, counted from its merged trace: ``metrics.json`` with the
keys of a ``run`` replication (docs/reference/results.md), so that ``compare --against``
and the summary read both alike.

The engine counts as it runs; the live mesh has no single place that sees everything,
but its trace does: every count is read off the full trace (the parts are always
written at level ``full``, whatever the level of the trace kept). The one count no
line carries, the reason each failed task failed, comes from the processes
(``counts``). The same counting applied to an engine run's full trace gives the
engine's own metrics (tests/live/test_merge_metrics.py), so the two are the same measure.
Percentiles interpolate linearly between order statistics (numpy's ``linear``), floats
are rounded to nine significant digits.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["live_metrics", "percentile"]


def percentile(ordered: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of sorted data; None if empty."""
    n = len(ordered)
    if n == 0:
        return None
    pos = (n - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def _r(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.9g}")


def _sorted(counts: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items()))


class _Workflow:
    __slots__ = (
        "approvals_asked",
        "cancelled",
        "executions",
        "failed",
        "latency_sum",
        "started",
        "succeeded",
        "writes_executed",
        "writes_without_approval",
    )

    def __init__(self) -> None:
        self.approvals_asked = 0
        self.cancelled = 0
        self.executions = 0
        self.failed = 0
        self.started = 0
        self.succeeded = 0
        self.writes_executed = 0
        self.writes_without_approval = 0
        self.latency_sum = 0.0

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "latency_sum"}
        out["latency_mean"] = _r(self.latency_sum / self.succeeded) if self.succeeded else None
        return out


def live_metrics(
    events: Iterable[Mapping[str, Any]],
    writes: frozenset[str],
    tasks_failed: Mapping[str, int],
    header: Mapping[str, Any],
) -> dict[str, Any]:
    """The metrics of a full trace's ``events``; ``writes``: the tools whose ground-truth
    side effect is write or delete; ``tasks_failed``: failed tasks by reason."""
    wf: dict[str, _Workflow] = {}
    ends: Counter[str] = Counter()
    latencies: list[float] = []
    dropped: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    hops_by_link: Counter[str] = Counter()
    fields_lost = resends = 0
    discoveries: set[Any] = set()
    writes_executed = writes_without = 0
    end_time = 0.0

    def of(name: str | None) -> _Workflow:
        key = str(name)
        hit = wf.get(key)
        if hit is None:
            hit = wf[key] = _Workflow()
        return hit

    for ev in events:
        label = ev["label"]
        labels[label] += 1
        d = ev.get("detail") or {}
        end_time = max(end_time, float(ev["t"]))
        if label == "wf_start":
            of(ev["wf"]).started += 1
        elif label == "wf_end":
            status = d.get("status", "failed")
            ends[status] += 1
            w = of(ev["wf"])
            if status == "succeeded":
                w.succeeded += 1
                latency = float(d.get("latency", 0.0))
                latencies.append(latency)
                w.latency_sum += latency
            elif status == "cancelled":
                w.cancelled += 1
            else:
                w.failed += 1
            if d.get("reason") == "drain_cap":
                ends["unfinished"] += 1
        elif label in ("approve", "deny"):
            of(ev["wf"]).approvals_asked += 1
        elif label == "execute":
            w = of(ev["wf"])
            w.executions += 1
            if ev.get("tool") in writes:
                writes_executed += 1
                w.writes_executed += 1
                if not d.get("approved", False):
                    writes_without += 1
                    w.writes_without_approval += 1
        elif label == "drop":
            if d.get("msg") is None:
                lost[str(d.get("lost"))] += 1
            else:
                dropped[str(d.get("reason"))] += 1
        elif label == "error":
            errors[str(d.get("error"))] += 1
        elif label == "translate":
            fields_lost += len(d.get("dropped") or ())
        elif label == "timeout":
            if d.get("kind") == "list":
                discoveries.add(ev.get("inv"))
            elif d.get("action") == "resend":
                resends += 1
        elif label == "list":
            discoveries.add(ev.get("inv"))
        elif label == "hop":
            ends_ = sorted((str(d.get("from")), str(d.get("to"))))
            hops_by_link["|".join(ends_)] += 1
    ordered = sorted(latencies)
    n = len(ordered)
    out: dict[str, Any] = dict(header)
    out.update(
        {
            "workflows": {
                "started": labels["wf_start"],
                "succeeded": ends["succeeded"],
                "failed": ends["failed"],
                "cancelled": ends["cancelled"],
                "unfinished": ends["unfinished"],
            },
            "latency": {
                "count": n,
                "mean": _r(math.fsum(ordered) / n) if n else None,
                "p50": _r(percentile(ordered, 50)),
                "p95": _r(percentile(ordered, 95)),
                "p99": _r(percentile(ordered, 99)),
                "max": _r(ordered[-1]) if n else None,
            },
            "by_workflow": {k: v.to_json() for k, v in sorted(wf.items())},
            "messages": {
                "sent": labels["send"],
                "delivered": labels["deliver"],
                "dropped": sum(dropped.values()),
                "dropped_by_reason": _sorted(dropped),
                "hops": labels["hop"],
            },
            "hops_by_link": _sorted(hops_by_link),
            "lost_work": _sorted(lost),
            "translations": labels["translate"],
            "fields_lost": fields_lost,
            "reroutes": labels["reroute"],
            "timeouts": labels["timeout"],
            "approvals": {
                "asked": labels["approve"] + labels["deny"],
                "granted": labels["approve"],
                "denied": labels["deny"],
            },
            "calls": labels["call"] + labels["invoke"],
            "executions": labels["execute"],
            "writes_executed": writes_executed,
            "writes_without_approval": writes_without,
            "errors": _sorted(errors),
            "recovery": {
                "retries": labels["retry"],
                "resends": resends,
                "fallbacks": labels["fallback"],
                "prompts": labels["prompt"],
                "aborts": labels["abort"],
            },
            "tasks_failed_by_reason": _sorted(dict(tasks_failed)),
            "skips": labels["skip"],
            "discoveries": len(discoveries),
            "outages": labels["node_down"] + labels["link_down"],
            "end_time": _r(end_time),
            "trace_lines": sum(labels.values()),
            "violations": {},
        }
    )
    return out
