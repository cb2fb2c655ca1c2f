"""Per-run data beyond the aggregates of ``metrics.json``: ``series.json``.

The plots need the distribution of end-to-end latencies, the completions per minute,
the outages and the links the routes used. ``metrics.json`` holds aggregates only, so
the worker that ran a replication writes ``series.json`` beside it, right after the run:

* ``latencies``: the end-to-end latencies (s) of succeeded instances, sorted (at most
  :data:`MAX_LATENCIES` evenly spaced order statistics, so a huge run stays small);
* ``completions_per_minute``: succeeded instances per minute of simulated time, in
  buckets of ``minutes_per_bucket`` minutes (1, unless the run is longer than
  :data:`MAX_BUCKETS` minutes: then as few whole minutes as keep the list that long);
* ``outages``: ``[kind, element, start, end]`` for each node or link outage;
* ``link_use``: hops per link (``"a|b"`` with a < b), all protocols together, taken
  from ``metrics.json`` (``hops_by_link``, counted by the engine at every trace level).

The worker that ran the replication computes them from the engine's own counters
(:func:`series_of_run`, no file read); :func:`extract_series` reads them back from a
trace file (lines filtered by their label with a substring test before any JSON
parsing), and both give the same object. A run with ``trace: off`` has an empty trace:
its series are empty.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.scenario.model import Scenario

if TYPE_CHECKING:
    from sim.engine.metrics import Metrics

MAX_LATENCIES = 5000
#: The most buckets of ``completions_per_minute`` (a week of minutes, about).
MAX_BUCKETS = 10_000

_WANTED = (
    '"label":"wf_end"',
    '"label":"node_down"',
    '"label":"node_up"',
    '"label":"link_down"',
    '"label":"link_up"',
)


def _thin(values: list[float]) -> list[float]:
    n = len(values)
    if n <= MAX_LATENCIES:
        return values
    step = (n - 1) / (MAX_LATENCIES - 1)
    return [values[round(i * step)] for i in range(MAX_LATENCIES)]


def extract_series(trace: Path, scenario: Scenario, rep: int) -> dict[str, Any]:
    """The series of one run from its trace and the ``metrics.json`` beside it (see the
    module docstring)."""
    try:
        metrics = json.loads((trace.parent / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        metrics = {}
    latencies: list[float] = []
    minutes: dict[int, int] = {}
    events: list[tuple[str, str, str, float]] = []
    end = 0.0
    with open(trace, encoding="utf-8") as fh:
        for line in fh:
            if not any(w in line for w in _WANTED):
                continue
            event = json.loads(line)
            label = event["label"]
            t = float(event["t"])
            end = max(end, t)
            detail = event.get("detail") or {}
            if label == "wf_end":
                if detail.get("status") == "succeeded":
                    if detail.get("latency") is not None:
                        latencies.append(float(detail["latency"]))
                    minute = int(t // 60)
                    minutes[minute] = minutes.get(minute, 0) + 1
            else:
                kind, edge = label.split("_")
                element = (
                    "|".join(sorted(map(str, detail.get("link", [])))) or str(event["agent"])
                    if kind == "link"
                    else str(event["agent"])
                )
                events.append((kind, edge, element, t))
    return _series(rep, scenario, latencies, minutes, events, end, metrics.get("hops_by_link", {}))


def series_of_run(
    metrics: Metrics, level: str, scenario: Scenario, rep: int, hops_by_link: dict[str, int]
) -> dict[str, Any]:
    """The series of a run just finished, from its engine counters (``level``: the trace
    level it ran at; ``off`` gives the empty series of an empty trace)."""
    if level == "off":
        return _series(rep, scenario, [], {}, [], 0.0, hops_by_link)
    latencies = [round(x, 6) for x in metrics.latencies]
    return _series(
        rep,
        scenario,
        latencies,
        metrics.completions,
        metrics.outage_events,
        metrics.series_end,
        hops_by_link,
    )


def _series(
    rep: int,
    scenario: Scenario,
    latencies: list[float],
    per_minute: dict[int, int],
    events: list[tuple[str, str, str, float]],
    end: float,
    link_use: dict[str, int],
) -> dict[str, Any]:
    """The series object: ``events`` are (kind, edge, element, t) outage events in order."""
    span = max(1, math.ceil(float(scenario.duration) / 60.0), *(m + 1 for m in per_minute))
    width = math.ceil(span / MAX_BUCKETS)
    minutes = [0] * math.ceil(span / width)
    for minute, n in per_minute.items():
        minutes[minute // width] += n
    open_outages: dict[tuple[str, str], list[float]] = {}
    outages: list[list[Any]] = []
    for kind, edge, element, t in events:
        if edge == "down":
            open_outages.setdefault((kind, element), []).append(t)
        else:
            starts = open_outages.get((kind, element))
            if starts:
                outages.append([kind, element, starts.pop(0), t])
    for (kind, element), starts in sorted(open_outages.items()):
        for start in starts:
            outages.append([kind, element, start, max(end, float(scenario.duration))])
    outages.sort(key=lambda o: (o[2], o[0], o[1]))
    latencies.sort()
    return {
        "replication": rep,
        "latencies": [round(x, 6) for x in _thin(latencies)],
        "latency_count": len(latencies),
        "completions_per_minute": minutes,
        "minutes_per_bucket": width,
        "outages": outages,
        "link_use": dict(link_use),
    }
