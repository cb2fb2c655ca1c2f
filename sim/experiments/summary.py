"""Mean and 95 % confidence interval per metric, router and sweep point.

The summary is read from the run directories (never from what the workers returned),
in a fixed order (points, then routers as given, then replications 0..n-1), so it is
byte-identical whatever the executor, the worker count or the order runs finished in.
It holds no wall-clock time and no worker id.

The interval is Student's t: mean ± t(0.975, n−1) · s / √n with s the sample standard
deviation over the n replications that produced the metric (a metric that is null in
a run, e.g. a latency percentile with no succeeded instance, is left out of that
run's n). With n < 2 the interval is null.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.experiments.failing import failed_every_instance
from sim.experiments.reasons import failure_reasons
from sim.experiments.rundir import ERROR_FILE, METRICS_FILE, SERIES_FILE, run_dir

CONFIDENCE = 0.95

#: (name, unit, how to read it from metrics.json), in the summary's order.
BASE_METRICS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("workflows_started", "instances", ("workflows", "started")),
    ("workflows_succeeded", "instances", ("workflows", "succeeded")),
    ("workflows_failed", "instances", ("workflows", "failed")),
    ("workflows_cancelled", "instances", ("workflows", "cancelled")),
    ("success_rate", "fraction", ()),
    ("latency_mean", "s", ("latency", "mean")),
    ("latency_p50", "s", ("latency", "p50")),
    ("latency_p95", "s", ("latency", "p95")),
    ("latency_p99", "s", ("latency", "p99")),
    ("messages_sent", "messages", ("messages", "sent")),
    ("messages_delivered", "messages", ("messages", "delivered")),
    ("messages_dropped", "messages", ("messages", "dropped")),
    ("translations", "translations", ("translations",)),
    ("fields_lost", "fields", ("fields_lost",)),
    ("reroutes", "reroutes", ("reroutes",)),
    ("timeouts", "time-outs", ("timeouts",)),
    ("approvals_asked", "requests", ("approvals", "asked")),
    ("approvals_granted", "requests", ("approvals", "granted")),
    ("writes_without_approval", "executions", ("writes_without_approval",)),
)

UNITS: dict[str, str] = {name: unit for name, unit, _ in BASE_METRICS}
#: summary metrics of the conformance checks: violations per 1,000 workflow instances
VIOLATION_PREFIX = "violations_per_1000."
VIOLATION_UNIT = "per 1,000 instances"
#: summary metrics of the scenario's properties (SPEC §9): violations per 1,000 scopes
PROPERTY_PREFIX = "property_violations_per_1000."
PROPERTY_UNIT = "per 1,000 scopes"


def unit_of(metric: str) -> str:
    """The unit of a summary metric (a base metric, a check's or a property's rate)."""
    if metric.startswith(PROPERTY_PREFIX):
        return PROPERTY_UNIT
    return UNITS.get(metric, VIOLATION_UNIT if metric.startswith(VIOLATION_PREFIX) else "")


def _r(x: float | None) -> float | None:
    """9 significant digits, as metrics.json (and -0.0 as 0.0)."""
    if x is None or math.isnan(x):
        return None
    return float(f"{x:.9g}") + 0.0


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def flatten(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The summary's metrics of one run, with each check's violations per 1,000 workflow
    instances when the run was checked."""
    out: dict[str, float | None] = {}
    for name, _unit, path in BASE_METRICS:
        if name == "success_rate":
            started = _dig(metrics, ("workflows", "started")) or 0
            succeeded = _dig(metrics, ("workflows", "succeeded")) or 0
            out[name] = succeeded / started if started else None
            continue
        value = _dig(metrics, path)
        out[name] = float(value) if isinstance(value, int | float) else None
    rates = metrics.get("violations_per_1000_instances")
    if isinstance(rates, dict):
        for check in sorted(rates):
            rate = rates[check]  # None: the check did not apply to this run's trace
            out[VIOLATION_PREFIX + str(check)] = None if rate is None else float(rate)
    props = metrics.get("properties")
    if isinstance(props, dict):
        for name in sorted(props):
            rate = _dig(props, (name, "violations_per_1000_scopes"))
            out[PROPERTY_PREFIX + str(name)] = (
                float(rate) if isinstance(rate, int | float) else None
            )
    return out


@dataclass(frozen=True)
class Stat:
    """Mean and confidence interval of one metric over replications."""

    n: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": _r(self.mean),
            "std": _r(self.std),
            "ci_low": _r(self.ci_low),
            "ci_high": _r(self.ci_high),
        }


def metric_range(name: str) -> tuple[float, float | None]:
    """The values a summary metric can take: every metric is ≥ 0; a fraction is ≤ 1; a
    property's violations per 1,000 scopes ≤ 1,000 (a scope is violated once at most)."""
    if name.startswith(PROPERTY_PREFIX):
        return 0.0, 1000.0
    return 0.0, 1.0 if UNITS.get(name) == "fraction" else None


def student_t(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom: the value
    ``scipy.stats.t.ppf(p, df)`` gives (it calls the same ``stdtrit``), without importing
    ``scipy.stats`` (about 0.4 s), imported when a summary is made, not with the command."""
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def describe(
    values: Sequence[float | None], low: float | None = None, high: float | None = None
) -> Stat:
    """Mean, sample standard deviation and Student-t 95 % interval of the non-null values.

    The interval is clipped to the metric's range [``low``, ``high``] (a success rate
    cannot exceed 1, a count cannot be negative), which the normal-theory interval
    ignores for few replications near a bound.
    """
    xs = [float(v) for v in values if v is not None]
    n = len(xs)
    if n == 0:
        return Stat(0, None, None, None, None)
    mean = math.fsum(xs) / n
    if n == 1:
        return Stat(1, mean, None, None, None)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = student_t((1 + CONFIDENCE) / 2, n - 1) * std / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if low is not None:
        lo = max(lo, low)
    if high is not None:
        hi = min(hi, high)
    return Stat(n, mean, std, lo, hi)


@dataclass(frozen=True)
class Point:
    """A sweep point: its id (``None`` without a sweep) and parameter values."""

    id: str | None
    params: dict[str, Any]


def _read_json(path: Path) -> Any:
    """A run's JSON file, read within the bounds of :mod:`sim.json_input` (None when it
    cannot be read or used)."""
    from sim.json_input import read_json

    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def collect(
    base: Path, points: Sequence[Point], routers: Sequence[str], replications: int
) -> dict[str, Any]:
    """Read every run under ``base`` and build the summary object (see docs)."""
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    missing: list[str] = []
    for point in points:
        for router in routers:
            per_run: list[dict[str, float | None]] = []
            finished: list[dict[str, Any]] = []
            ok = 0
            for rep in range(replications):
                directory = run_dir(base, point.id, router, rep)
                key = f"{point.id + '/' if point.id else ''}{router}/rep-{rep}"
                error = _read_json(directory / ERROR_FILE)
                metrics = _read_json(directory / METRICS_FILE)
                if isinstance(error, dict):
                    errors.append(
                        {
                            "run": key,
                            "point": point.id,
                            "router": router,
                            "replication": rep,
                            "sim_time": error.get("sim_time"),
                            "error": error.get("error"),
                            "message": error.get("message"),
                        }
                    )
                    continue
                if not isinstance(metrics, dict):
                    missing.append(key)
                    continue
                ok += 1
                per_run.append(flatten(metrics))
                finished.append(metrics)
            names = [name for name, _u, _p in BASE_METRICS]
            names += sorted({k for run in per_run for k in run if k.startswith(VIOLATION_PREFIX)})
            names += sorted({k for run in per_run for k in run if k.startswith(PROPERTY_PREFIX)})
            metrics_out = {
                name: describe([run.get(name) for run in per_run], *metric_range(name)).to_json()
                for name in names
            }
            row: dict[str, Any] = {
                "point": point.id,
                "router": router,
                "replications_ok": ok,
                "metrics": metrics_out,
                "failure_reasons": failure_reasons(
                    m.get("tasks_failed_by_reason") for m in finished
                ),
            }
            failed = failed_every_instance(finished)
            if failed is not None:  # only then: other summaries keep their bytes
                row["failed_every_instance"] = failed
            results.append(row)
    return {
        "confidence": CONFIDENCE,
        "replications": replications,
        "routers": list(routers),
        "points": [{"id": p.id, "params": p.params} for p in points],
        "results": results,
        "errors": errors,
        "missing": missing,
    }


def series_of(base: Path, point: Point, router: str, replications: int) -> list[dict[str, Any]]:
    """The ``series.json`` of each finished run of (point, router), in replication order."""
    out: list[dict[str, Any]] = []
    for rep in range(replications):
        data = _read_json(run_dir(base, point.id, router, rep) / SERIES_FILE)
        if isinstance(data, dict):
            out.append(data)
    return out


def summary_json(summary: dict[str, Any]) -> str:
    """``summary.json``: sorted keys, two-space indent, final newline."""
    from sim.engine.metrics import dumps  # the engine, imported by whoever makes a summary

    return dumps(summary)


CSV_HEADER = (
    "point",
    "params",
    "router",
    "metric",
    "unit",
    "n",
    "mean",
    "std",
    "ci_low",
    "ci_high",
)


def summary_csv(summary: dict[str, Any]) -> str:
    """``summary.csv``: one row per (point, router, metric)."""
    params = {p["id"]: p["params"] for p in summary["points"]}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in summary["results"]:
        point = row["point"]
        shown = json.dumps(params.get(point) or {}, sort_keys=True, separators=(",", ":"))
        for metric, stat in row["metrics"].items():
            unit = unit_of(metric)
            writer.writerow(
                [
                    point or "",
                    shown if point else "",
                    row["router"],
                    metric,
                    unit,
                    stat["n"],
                    *(
                        "" if stat[k] is None else repr(stat[k])
                        for k in ("mean", "std", "ci_low", "ci_high")
                    ),
                ]
            )
    return buffer.getvalue()


def stat_of(
    summary: dict[str, Any], point: str | None, router: str, metric: str
) -> dict[str, Any] | None:
    """The statistics of ``metric`` for (point, router), or None."""
    for row in summary["results"]:
        if row["point"] == point and row["router"] == router:
            stat = row["metrics"].get(metric)
            return stat if isinstance(stat, dict) else None
    return None
