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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.experiments.failing import FailedEveryInstance, failed_every_instance
from sim.experiments.point_verdict import PointVerdict
from sim.experiments.reasons import FailureReason, failure_reasons
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
RATE_PREFIXES = (VIOLATION_PREFIX, PROPERTY_PREFIX)


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


@dataclass(frozen=True, slots=True)
class Stat:
    """Mean and confidence interval of one metric over replications (in the metric's
    unit, :func:`unit_of`); ``n`` the replications that produced it."""

    n: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None

    def rounded(self) -> Stat:
        """The values as ``summary.json`` holds them (9 significant digits)."""
        return Stat(self.n, _r(self.mean), _r(self.std), _r(self.ci_low), _r(self.ci_high))

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": _r(self.mean),
            "std": _r(self.std),
            "ci_low": _r(self.ci_low),
            "ci_high": _r(self.ci_high),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Stat:
        return Stat(data["n"], data["mean"], data["std"], data["ci_low"], data["ci_high"])


def metric_order(name: str) -> tuple[int, int, str]:
    """Where a metric comes in a result: the base metrics in :data:`BASE_METRICS`'s order,
    then the checks' rates, then the properties', each by name (a sort key)."""
    if name in UNITS:
        return 0, list(UNITS).index(name), ""
    if name.startswith(VIOLATION_PREFIX):
        return 1, 0, name
    return (2 if name.startswith(PROPERTY_PREFIX) else 3), 0, name


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

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "params": self.params}


@dataclass(frozen=True)
class RunError:
    """A run that crashed (its ``error.json``): where, when in simulated seconds, what."""

    run: str
    point: str | None
    router: str
    replication: int
    sim_time: float | None
    error: str | None
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "point": self.point,
            "router": self.router,
            "replication": self.replication,
            "sim_time": self.sim_time,
            "error": self.error,
            "message": self.message,
        }


@dataclass(frozen=True)
class Result:
    """One router at one sweep point: its statistics by metric (in the summary's order),
    its failed tasks by reason (most first, :mod:`.reasons`) and, only when it failed
    every instance, how many and why (:mod:`.failing`)."""

    point: str | None
    router: str
    replications_ok: int
    metrics: dict[str, Stat]
    failure_reasons: tuple[FailureReason, ...]
    failed_every_instance: FailedEveryInstance | None = None

    def stat(self, metric: str) -> Stat | None:
        """The statistics of ``metric``, or None when no run had it."""
        return self.metrics.get(metric)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "point": self.point,
            "router": self.router,
            "replications_ok": self.replications_ok,
            "metrics": {name: stat.to_json() for name, stat in self.metrics.items()},
            "failure_reasons": [reason.to_json() for reason in self.failure_reasons],
        }
        if self.failed_every_instance is not None:  # only then: other summaries keep their bytes
            out["failed_every_instance"] = self.failed_every_instance.to_json()
        return out


@dataclass(frozen=True)
class About:
    """The scenario a comparison ran (its name, description and seed)."""

    scenario: str
    description: str | None
    seed: int


@dataclass(frozen=True)
class Summary:
    """Every (point, router)'s statistics over the replications, the runs that crashed
    or are missing; ``compare`` adds the scenario (``about``) and the verdict
    (:mod:`.verdict`). :meth:`to_json` is ``summary.json`` (:func:`summary_json`), and
    :meth:`from_json` reads it back to the same object."""

    confidence: float
    replications: int
    routers: tuple[str, ...]
    points: tuple[Point, ...]
    results: tuple[Result, ...]
    errors: tuple[RunError, ...]
    missing: tuple[str, ...]
    about: About | None = None
    verdict: tuple[PointVerdict, ...] | None = None

    def result(self, point: str | None, router: str) -> Result | None:
        """The result of ``router`` at ``point``, or None."""
        for row in self.results:
            if row.point == point and row.router == router:
                return row
        return None

    def stat(self, point: str | None, router: str, metric: str) -> Stat | None:
        """The statistics of ``metric`` for (point, router), or None."""
        row = self.result(point, router)
        return None if row is None else row.stat(metric)

    def at(self, point: str | None) -> tuple[Result, ...]:
        """The results of ``point``, in the summary's order (the routers as given)."""
        return tuple(row for row in self.results if row.point == point)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.about is not None:
            out["scenario"] = self.about.scenario
            out["description"] = self.about.description
            out["seed"] = self.about.seed
        out |= {
            "confidence": self.confidence,
            "replications": self.replications,
            "routers": list(self.routers),
            "points": [p.to_json() for p in self.points],
            "results": [r.to_json() for r in self.results],
            "errors": [e.to_json() for e in self.errors],
            "missing": list(self.missing),
        }
        if self.verdict is not None:
            out["verdict"] = [point.to_json() for point in self.verdict]
        return out

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Summary:
        """The summary of a ``summary.json`` object (as :meth:`to_json` wrote it; each
        result's metrics in :func:`metric_order`, as :func:`collect` makes them)."""
        about = (
            About(data["scenario"], data["description"], data["seed"])
            if "scenario" in data
            else None
        )
        results = tuple(
            Result(
                r["point"],
                r["router"],
                r["replications_ok"],
                {
                    name: Stat.from_json(r["metrics"][name])
                    for name in sorted(r["metrics"], key=metric_order)  # the file sorts keys
                },
                tuple(FailureReason.from_json(reason) for reason in r["failure_reasons"]),
                _failed_of(r.get("failed_every_instance")),
            )
            for r in data["results"]
        )
        return Summary(
            data["confidence"],
            data["replications"],
            tuple(data["routers"]),
            tuple(Point(p["id"], p["params"]) for p in data["points"]),
            results,
            tuple(RunError(**e) for e in data["errors"]),
            tuple(data["missing"]),
            about,
            tuple(PointVerdict.from_json(p) for p in data["verdict"])
            if "verdict" in data
            else None,
        )


def _failed_of(data: Mapping[str, Any] | None) -> FailedEveryInstance | None:
    return None if data is None else FailedEveryInstance.from_json(data)


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
) -> Summary:
    """Read every run under ``base`` and build the summary (see docs)."""
    results: list[Result] = []
    errors: list[RunError] = []
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
                        RunError(
                            key,
                            point.id,
                            router,
                            rep,
                            error.get("sim_time"),
                            error.get("error"),
                            error.get("message"),
                        )
                    )
                    continue
                if not isinstance(metrics, dict):
                    missing.append(key)
                    continue
                ok += 1
                per_run.append(flatten(metrics))
                finished.append(metrics)
            found = {k for run in per_run for k in run if k.startswith(RATE_PREFIXES)}
            names = sorted({*UNITS, *found}, key=metric_order)
            stats = {
                name: describe([run.get(name) for run in per_run], *metric_range(name)).rounded()
                for name in names
            }
            reasons = failure_reasons(m.get("tasks_failed_by_reason") for m in finished)
            failed = failed_every_instance(finished)
            results.append(Result(point.id, router, ok, stats, reasons, failed))
    return Summary(
        CONFIDENCE,
        replications,
        tuple(routers),
        tuple(points),
        tuple(results),
        tuple(errors),
        tuple(missing),
    )


def series_of(base: Path, point: Point, router: str, replications: int) -> list[dict[str, Any]]:
    """The ``series.json`` of each finished run of (point, router), in replication order."""
    out: list[dict[str, Any]] = []
    for rep in range(replications):
        data = _read_json(run_dir(base, point.id, router, rep) / SERIES_FILE)
        if isinstance(data, dict):
            out.append(data)
    return out


def summary_json(summary: Summary) -> str:
    """``summary.json``: :meth:`Summary.to_json` with sorted keys, two-space indent, a
    final newline."""
    from sim.engine.metrics import dumps  # the engine, imported by whoever makes a summary

    return dumps(summary.to_json())


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


def summary_csv(summary: Summary) -> str:
    """``summary.csv``: one row per (point, router, metric)."""
    params = {p.id: p.params for p in summary.points}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in summary.results:
        point = row.point
        shown = json.dumps(params.get(point) or {}, sort_keys=True, separators=(",", ":"))
        for metric, stat in row.metrics.items():
            writer.writerow(
                [
                    point or "",
                    shown if point else "",
                    row.router,
                    metric,
                    unit_of(metric),
                    stat.n,
                    *(
                        "" if value is None else repr(value)
                        for value in (stat.mean, stat.std, stat.ci_low, stat.ci_high)
                    ),
                ]
            )
    return buffer.getvalue()
