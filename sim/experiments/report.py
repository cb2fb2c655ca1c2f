"""``report.md``: the experiment in words and numbers, with the plots embedded.

The report is the one output that holds wall-clock facts (run time, date, executor);
``summary.json`` never does, so that it stays byte-identical across executors.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import itertools
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sim import __version__
from sim.experiments.failing import sentence
from sim.experiments.reasons import reason_lines
from sim.experiments.summary import PROPERTY_PREFIX, VIOLATION_PREFIX, Stat, Summary, unit_of
from sim.scenario.model import Scenario

#: Metrics shown in the report's tables, in order.
TABLE_METRICS: tuple[str, ...] = (
    "success_rate",
    "workflows_started",
    "workflows_succeeded",
    "workflows_failed",
    "latency_p50",
    "latency_p95",
    "latency_p99",
    "messages_dropped",
    "reroutes",
    "timeouts",
    "translations",
    "fields_lost",
    "approvals_asked",
    "writes_without_approval",
)

_PACKAGES = ("simpy", "numpy", "scipy", "networkx", "matplotlib", "pydantic")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _num(x: Any) -> str:
    if x is None:
        return "–"
    value = float(x)
    if value == int(value) and abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}"


def fmt_stat(stat: Stat | None) -> str:
    """``mean [low, high]`` (or the mean alone with one replication)."""
    if stat is None or stat.mean is None:
        return "–"
    if stat.ci_low is None:
        return _num(stat.mean)
    return f"{_num(stat.mean)} [{_num(stat.ci_low)}, {_num(stat.ci_high)}]"


def overlap(a: Stat, b: Stat) -> bool | None:
    """Whether two 95 % intervals overlap (None when one is missing)."""
    if a.ci_low is None or b.ci_low is None or a.ci_high is None or b.ci_high is None:
        return None
    return not (a.ci_high < b.ci_low or b.ci_high < a.ci_low)


def compare_sentence(
    summary: Summary, point: str | None, r1: str, r2: str, metric: str = "success_rate"
) -> str | None:
    """A sentence comparing ``metric`` of two routers, stating whether the CIs overlap."""
    s1 = summary.stat(point, r1, metric)
    s2 = summary.stat(point, r2, metric)
    if s1 is None or s2 is None or s1.mean is None or s2.mean is None:
        return None
    hi, lo = (r1, r2) if s1.mean >= s2.mean else (r2, r1)
    shi, slo = (s1, s2) if hi == r1 else (s2, s1)
    verdict = overlap(s1, s2)
    if shi.mean == slo.mean:
        head = f"**{r1}** and **{r2}** have the same {metric} ({fmt_stat(s1)})"
    else:
        head = f"**{hi}**'s {metric} {fmt_stat(shi)} is higher than **{lo}**'s {fmt_stat(slo)}"
    if verdict is None:
        tail = "(too few replications for confidence intervals)"
    elif verdict:
        tail = (
            "; the 95 % confidence intervals overlap: the difference is not significant "
            "at this level"
        )
    else:
        tail = "; the 95 % confidence intervals do not overlap"
    return f"{head}{tail}."


def table_metrics(summary: Summary, point: str | None) -> list[str]:
    """The rows of a point's side-by-side table: :data:`TABLE_METRICS`, then the checks'
    and the properties' violation rates the point's runs have."""
    metrics = list(TABLE_METRICS)
    for row in summary.at(point):
        metrics += sorted(
            m
            for m in row.metrics
            if m.startswith((VIOLATION_PREFIX, PROPERTY_PREFIX)) and m not in metrics
        )
    return metrics


def _table(summary: Summary, point: str | None, routers: Sequence[str]) -> list[str]:
    metrics = table_metrics(summary, point)
    lines = [
        "| metric | unit | " + " | ".join(routers) + " |",
        "|---|---|" + "---|" * len(routers),
    ]
    for metric in metrics:
        unit = unit_of(metric)
        cells = [fmt_stat(summary.stat(point, r, metric)) for r in routers]
        lines.append(f"| {metric} | {unit} | " + " | ".join(cells) + " |")
    return lines


def render_report(
    summary: Summary,
    scenario: Scenario,
    routers: Sequence[str],
    plot_paths: Sequence[Path],
    base: Path,
    *,
    wall: float,
    executor: str,
    ran: int,
    skipped: int,
    sections: Sequence[str] = (),
) -> str:
    """The text of ``report.md``; ``sections``: more lines after the results (the
    comparison with the live mesh)."""
    reps = summary.replications
    lines = [
        f"# Router comparison: {scenario.name}",
        "",
    ]
    if scenario.description:
        lines += [scenario.description.strip(), ""]
    versions = ", ".join(f"{p} {_version(p)}" for p in _PACKAGES)
    lines += [
        "| | |",
        "|---|---|",
        f"| scenario | `{scenario.name}` ({len(scenario.agents)} agents, "
        f"{len(scenario.links)} links, "
        f"{len(scenario.workflows)} workflow(s), {len(scenario.failures)} failure(s)) |",
        f"| seed | {scenario.seed} (replication k of every router uses the streams of (seed, k): "
        "common random numbers) |",
        f"| duration | {scenario.duration:g} s simulated per run |",
        f"| routers | {', '.join(routers)} |",
        f"| replications | {reps} per router"
        + (f" and sweep point ({len(summary.points)} points)" if summary.points[0].id else "")
        + " |",
        f"| runs | {ran} run now, {skipped} reused from earlier runs (resume) |",
        f"| run time | {wall:.1f} s wall clock, executor {executor} |",
        f"| date | {datetime.datetime.now().astimezone().isoformat(timespec='seconds')} |",
        f"| versions | protomesh {__version__}, Python {platform.python_version()}, {versions} |",
        f"| machine | {platform.machine()}, {os.cpu_count()} cores |",
        "",
        "Values are the mean over replications with the 95 % confidence interval (Student t) "
        "in brackets.",
        "",
    ]
    if scenario.properties:  # SPEC §9: named in the tables as property_violations_per_1000.*
        lines += ["Properties checked on every run (violations per 1,000 scopes below):", ""]
        lines += [f"- `{p.name}` ({p.scope}): `{p.formula}`" for p in scenario.properties]
        lines.append("")
    for point in summary.points:
        pid = point.id
        if pid is not None:
            shown = ", ".join(f"`{k}` = {v!r}" for k, v in point.params.items())
            lines += [f"## Point {pid}: {shown}", ""]
        else:
            lines += ["## Results", ""]
        sentences = [
            s
            for r1, r2 in itertools.combinations(routers, 2)
            if (s := compare_sentence(summary, pid, r1, r2)) is not None
        ]
        if sentences:
            lines += ["Workflow success rate (succeeded / started):", ""]
            lines += [f"- {s}" for s in sentences]
            lines.append("")
        lines += _table(summary, pid, routers)
        lines.append("")
        failing = [
            sentence(row.router, row.failed_every_instance, row.failure_reasons)
            for row in summary.at(pid)
            if row.failed_every_instance is not None
        ]
        if failing:
            lines += [f"- **{text}**" for text in failing]
            lines.append("")
        lines += reason_lines(summary, pid, routers)
    lines += sections
    if summary.errors or summary.missing:
        lines += ["## Failed runs", ""]
        for err in summary.errors:
            at = f" at t={err.sim_time} s" if err.sim_time is not None else ""
            lines.append(f"- `{err.run}`{at}: {err.error}")
        for key in summary.missing:
            lines.append(f"- `{key}`: no results (not run or interrupted)")
        lines.append("")
    if plot_paths:
        lines += ["## Plots", ""]
        for path in plot_paths:
            rel = path.relative_to(base).as_posix()
            title = path.stem.replace("_", " ")
            lines += [f"### {title}", "", f"![{title}]({rel})", ""]
    lines += [
        "## Files",
        "",
        "`summary.json` and `summary.csv` hold every metric's mean, standard deviation and "
        "interval; each run's `trace.jsonl`, `metrics.json` and `series.json` are under "
        "`<router>/rep-<k>/` (`p<i>/<router>/rep-<k>/` in a sweep)."
        + (
            " `against.json` holds the comparison with the live runs, as `--json` prints it."
            if sections
            else ""
        ),
        "",
    ]
    return "\n".join(lines)
