"""The per-run metrics of SPEC §8, counted as the run goes and written as ``metrics.json``.

Counters are plain ints; end-to-end latencies of finished instances are kept in an
``array('d')`` (8 bytes per instance: 0.8 MB for 100,000 instances) and their
percentiles are computed once at the end by linear interpolation between order
statistics (numpy's default ``linear`` method, written out so the bytes do not depend
on numpy's version). Floats are rounded to 9 significant digits in the file; keys are
sorted, so the same run gives the same bytes.
"""

from __future__ import annotations

import json
import math
from array import array
from typing import Any


def percentile(ordered: array[float] | list[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of sorted data, linear interpolation; None if empty."""
    n = len(ordered)
    if n == 0:
        return None
    pos = (n - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)


def _r(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.9g}")


#: The counts of :class:`WorkflowCounters` that ``metrics.json`` writes, in its order.
_COUNTS = (
    "approvals_asked",
    "cancelled",
    "executions",
    "failed",
    "started",
    "succeeded",
    "writes_executed",
    "writes_without_approval",
)


class WorkflowCounters:
    """The per-workflow part of the metrics (to compare workflows within one run)."""

    __slots__ = (*_COUNTS, "latency_sum")

    def __init__(self) -> None:
        self.started = 0
        self.succeeded = 0
        self.failed = 0
        self.cancelled = 0
        self.approvals_asked = 0
        self.executions = 0
        self.writes_executed = 0
        self.writes_without_approval = 0
        self.latency_sum = 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in _COUNTS}
        out["latency_mean"] = _r(self.latency_sum / self.succeeded) if self.succeeded else None
        return out


class Metrics:
    """The counters of one replication: what ``metrics.json`` reports. The recorder
    counts each labelled event here as it writes its line; the counts without a line of
    their own are the methods below, called by the components."""

    def __init__(self) -> None:
        self.by_workflow: dict[str, WorkflowCounters] = {}
        self.wf_started = 0
        self.wf_succeeded = 0
        self.wf_failed = 0
        self.wf_cancelled = 0
        self.wf_unfinished = 0
        self.latencies: array[float] = array("d")
        self.sent = 0
        self.delivered = 0
        self.dropped: dict[str, int] = {}
        self.lost_work: dict[str, int] = {}
        self.hops = 0
        self.translations = 0
        self.fields_lost = 0
        self.reroutes = 0
        self.timeouts = 0
        self.approvals_asked = 0
        self.approvals_granted = 0
        self.approvals_denied = 0
        self.calls = 0
        self.executions = 0
        self.writes_executed = 0
        self.writes_without_approval = 0
        self.errors: dict[str, int] = {}
        self.retries = 0
        self.resends = 0
        self.fallbacks = 0
        self.prompts = 0
        self.aborts = 0
        self.skips = 0
        self.discoveries = 0
        self.outages = 0
        self.tasks_failed: dict[str, int] = {}
        #: for the per-run series (:mod:`sim.experiments.series`), at trace times (rounded
        #: to the trace's 6 decimals): succeeded instances per minute, the outage events
        #: (kind, edge, element, t) in order, and the last time of either
        self.completions: dict[int, int] = {}
        self.outage_events: list[tuple[str, str, str, float]] = []
        self.series_end = 0.0

    def ended(self, t: float, succeeded: bool) -> None:
        """An instance ended at ``t`` (for the series: completions per minute)."""
        t = round(t, 6)
        if t > self.series_end:
            self.series_end = t
        if succeeded:
            minute = int(t // 60)
            self.completions[minute] = self.completions.get(minute, 0) + 1

    def outage_event(self, kind: str, edge: str, element: str, t: float) -> None:
        """A ``node``/``link`` outage ``down``/``up`` at ``t`` (for the series)."""
        t = round(t, 6)
        if t > self.series_end:
            self.series_end = t
        self.outage_events.append((kind, edge, element, t))

    def workflow(self, name: str) -> WorkflowCounters:
        """The counters of workflow ``name`` (created on first use)."""
        counters = self.by_workflow.get(name)
        if counters is None:
            counters = self.by_workflow[name] = WorkflowCounters()
        return counters

    def drop(self, reason: str) -> None:
        """Count one dropped message."""
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    # -- the counts that have no trace line of their own --

    def task_failed(self, reason: str) -> None:
        """A task failed or was cancelled (the invocation's lines say how)."""
        self.tasks_failed[reason] = self.tasks_failed.get(reason, 0) + 1

    def unfinished(self) -> None:
        """An instance was still running at the drain cap (its ``wf_end`` follows)."""
        self.wf_unfinished += 1

    def discovery(self) -> None:
        """A caller starts discovering a tool at a path (its ``send``\\ s follow)."""
        self.discoveries += 1

    def asked(self, c: WorkflowCounters) -> None:
        """An approval is asked (its ``approve`` or ``deny`` follows after the latency);
        ``c``: the workflow's counters."""
        self.approvals_asked += 1
        c.approvals_asked += 1

    def resend(self) -> None:
        """A timed-out request that never executed is sent again (after its backoff)."""
        self.resends += 1

    def counted(self, sent: int, delivered: int, hops: int) -> None:
        """Messages sent and delivered and hops crossed (the transport counts them and
        reports them at the end of the run rather than once per message or hop)."""
        self.sent += sent
        self.delivered += delivered
        self.hops += hops

    def to_json(self, header: dict[str, Any]) -> dict[str, Any]:
        """The metrics object (``header`` holds scenario, router, replication, ...)."""
        ordered = sorted(self.latencies)
        n = len(ordered)
        latency = {
            "count": n,
            "mean": _r(math.fsum(ordered) / n) if n else None,
            "p50": _r(percentile(ordered, 50)),
            "p95": _r(percentile(ordered, 95)),
            "p99": _r(percentile(ordered, 99)),
            "max": _r(ordered[-1]) if n else None,
        }
        out: dict[str, Any] = dict(header)
        out.update(
            {
                "workflows": {
                    "started": self.wf_started,
                    "succeeded": self.wf_succeeded,
                    "failed": self.wf_failed,
                    "cancelled": self.wf_cancelled,
                    "unfinished": self.wf_unfinished,
                },
                "latency": latency,
                "by_workflow": {k: v.to_json() for k, v in sorted(self.by_workflow.items())},
                "messages": {
                    "sent": self.sent,
                    "delivered": self.delivered,
                    "dropped": sum(self.dropped.values()),
                    "dropped_by_reason": dict(sorted(self.dropped.items())),
                    "hops": self.hops,
                },
                "lost_work": dict(sorted(self.lost_work.items())),
                "translations": self.translations,
                "fields_lost": self.fields_lost,
                "reroutes": self.reroutes,
                "timeouts": self.timeouts,
                "approvals": {
                    "asked": self.approvals_asked,
                    "granted": self.approvals_granted,
                    "denied": self.approvals_denied,
                },
                "calls": self.calls,
                "executions": self.executions,
                "writes_executed": self.writes_executed,
                "writes_without_approval": self.writes_without_approval,
                "errors": dict(sorted(self.errors.items())),
                "recovery": {
                    "retries": self.retries,
                    "resends": self.resends,
                    "fallbacks": self.fallbacks,
                    "prompts": self.prompts,
                    "aborts": self.aborts,
                },
                "tasks_failed_by_reason": dict(sorted(self.tasks_failed.items())),
                "skips": self.skips,
                "discoveries": self.discoveries,
                "outages": self.outages,
                "violations": {},
            }
        )
        return out


def dumps(metrics: dict[str, Any]) -> str:
    """The bytes of ``metrics.json``: sorted keys, two-space indent, final newline."""
    return json.dumps(metrics, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
