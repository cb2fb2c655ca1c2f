"""``compare FILE --against DIR``: the simulated summary beside the live mesh's runs.

``DIR`` is what ``python -m sim live FILE --out DIR`` writes: ``<router>/live-<k>/
metrics.json``, a run's ``metrics.json`` (read with :func:`~sim.experiments.summary.flatten`)
plus a ``live`` header (``duration`` in scenario seconds, ``speed``, ...).

Per router and summary metric: the simulated mean and 95 % interval (from the summary),
the live value (the mean over the live runs that have it; each run's value in
``live_runs``), the relative error ``|simulated − live| / |live|`` (relative to the
measurement, as validation tables give it; null when live is 0, the signed
``difference`` simulated − live then says how far), and whether the live value lies
inside the simulated interval. Numbers are rounded as ``summary.json`` rounds them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.experiments.rundir import METRICS_FILE
from sim.experiments.summary import CONFIDENCE, Stat, Summary, _r, flatten, unit_of

#: The comparison's file beside ``summary.json`` (the object ``--json`` prints; the page
#: reads it by :data:`sim.view.against.AGAINST_FILE`, the same name).
AGAINST_FILE = "against.json"

_RUN = re.compile(r"live-(\d+)")


class LiveError(ValueError):
    """A live results folder that cannot be compared: one line naming the file."""


@dataclass(frozen=True)
class LiveRun:
    """One live run: its router, its folder's name (``live-<k>``), its metrics; ``died``:
    the real servers that died during it (``live.server_exits``: the agent, how it
    ended), kept (the run measured its whole duration) and said."""

    router: str
    name: str
    path: Path
    duration: float
    speed: Any
    metrics: Mapping[str, float | None]
    died: tuple[str, ...] = ()


@dataclass(frozen=True)
class Live:
    """The live runs under a folder, by router then ``k``; the folders without metrics."""

    directory: Path
    runs: tuple[LiveRun, ...]
    unfinished: tuple[Path, ...] = ()
    interrupted: tuple[tuple[Path, str], ...] = ()
    """The runs stopped before their end (their folder, ``live.interrupted``): left out."""

    @property
    def duration(self) -> float:
        """The scenario seconds every live run lasted (one value: :func:`read_live`)."""
        return self.runs[0].duration

    @property
    def routers(self) -> list[str]:
        """The routers with a live run, sorted."""
        return sorted({r.router for r in self.runs})

    def of(self, router: str) -> list[LiveRun]:
        """The live runs of ``router``, by ``k``."""
        return [r for r in self.runs if r.router == router]


def _positive(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _read_run(path: Path, router: str, name: str, scenario: str) -> LiveRun | str:
    """One ``live-<k>/metrics.json``, checked to be a live run of ``scenario``; for a run
    that was stopped before its end (a signal, a failure once started: ``live`` keeps
    what it merged), the header's ``interrupted`` text instead."""
    from sim.json_input import JsonInputError, read_json

    try:
        data = read_json(path)
    except JsonInputError as exc:
        raise LiveError(exc.reported) from None
    except OSError as exc:
        raise LiveError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise LiveError(f"{path}: not a metrics.json: a JSON object is expected")
    if not isinstance(data.get("workflows"), dict):
        raise LiveError(f"{path}: not a metrics.json: no 'workflows' counts")
    if data.get("scenario") != scenario:
        raise LiveError(
            f"{path}: a live run of scenario {data.get('scenario')!r}, not of {scenario!r} "
            "(the scenario file's name)"
        )
    if "router" in data and data["router"] != router:
        raise LiveError(
            f"{path}: a live run of router {data['router']!r} in the folder of {router!r}"
        )
    header = data.get("live")
    if not isinstance(header, dict):
        raise LiveError(f"{path}: no 'live' header: not the metrics of a live run")
    stopped = header.get("interrupted")
    if stopped:
        return str(stopped)
    duration: Any = header.get("duration")
    if not _positive(duration):
        raise LiveError(
            f"{path}: live.duration: expected a positive number of scenario seconds, "
            f"got {duration!r}"
        )
    died = tuple(_died(e) for e in header.get("server_exits") or () if isinstance(e, dict))
    speed = header.get("speed")
    return LiveRun(router, name, path, float(duration), speed, flatten(data), died)


def _died(record: Mapping[str, Any]) -> str:
    """A ``live.server_exits`` entry in words: ``agent 'A': its real server exited with
    status N at t=T s``."""
    code, t = record.get("returncode"), record.get("t")
    if not isinstance(code, int):
        how = "died"
    else:
        how = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
    at = f" at t={t:g} s" if isinstance(t, int | float) else ""
    return f"agent '{record.get('agent')}': its real server {how}{at}"


def read_live(directory: Path, scenario: str) -> Live:
    """The live runs of ``scenario`` under ``directory``; :class:`LiveError` when there is
    none, when a ``metrics.json`` is malformed or of another scenario, or when the runs
    lasted different durations (the simulation can last only one)."""
    if not directory.exists():
        raise LiveError(f"{directory}: no such directory (--against)")
    if not directory.is_dir():
        raise LiveError(f"{directory}: not a directory (--against)")
    found: list[tuple[str, int, Path]] = []
    for folder in directory.glob("*/live-*"):
        match = _RUN.fullmatch(folder.name)
        if match and folder.is_dir() and folder.parent.is_dir():
            found.append((folder.parent.name, int(match.group(1)), folder))
    found.sort()
    runs: list[LiveRun] = []
    interrupted: list[tuple[Path, str]] = []
    for router, _k, f in found:
        if (f / METRICS_FILE).is_file():
            run = _read_run(f / METRICS_FILE, router, f.name, scenario)
            if isinstance(run, str):
                interrupted.append((f, run))
            else:
                runs.append(run)
    if not runs and interrupted:
        stopped = "; ".join(f"{f}: {why}" for f, why in interrupted)
        raise LiveError(f"{directory}: no finished live run under it ({stopped})")
    if not runs:
        raise LiveError(
            f"{directory}: no <router>/live-<k>/{METRICS_FILE} under it "
            "(the folder python -m sim live FILE --out DIR writes)"
        )
    first = runs[0]
    for run in runs[1:]:
        if _r(run.duration) != _r(first.duration):
            raise LiveError(
                f"{run.path}: live.duration {run.duration:g} s differs from "
                f"{first.duration:g} s in {first.path}: compare live runs of one duration"
            )
    unfinished = tuple(f for _router, _k, f in found if not (f / METRICS_FILE).is_file())
    return Live(directory, tuple(runs), unfinished, tuple(interrupted))


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return _r(math.fsum(xs) / len(xs)) if xs else None


def entry(stat: Stat | None, values: Sequence[float | None]) -> dict[str, Any]:
    """One metric's row: the simulated ``stat`` (summary.json's) beside the live
    ``values`` (one per live run, None where a run lacks the metric)."""
    mean = None if stat is None else stat.mean
    low, high = (None, None) if stat is None else (stat.ci_low, stat.ci_high)
    interval = [low, high] if low is not None and high is not None else None
    live = _mean(values)
    difference = relative = within = None
    if mean is not None and live is not None:
        difference = _r(mean - live)
        relative = _r(abs(mean - live) / abs(live)) if live != 0 else None
    if low is not None and high is not None and live is not None:
        within = low <= live <= high
    return {
        "simulated": {"mean": mean, "interval": interval, "n": 0 if stat is None else stat.n},
        "live": live,
        "live_runs": list(values),
        "difference": difference,
        "relative_error": relative,
        "within_interval": within,
    }


def compared(
    summary: Summary, live: Live, routers: Sequence[str], file_duration: float
) -> dict[str, Any]:
    """The comparison (``against.json``, what ``--json`` prints) of the summary's
    ``routers`` that have live runs (no sweep: the summary's one point)."""
    common = [r for r in routers if r in live.routers]
    out: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for router in common:
        runs = live.of(router)
        row = summary.result(None, router)
        assert row is not None  # no sweep: every router has its one point's result
        names = list(row.metrics)
        names += sorted({m for run in runs for m in run.metrics} - set(names))
        order += [m for m in names if m not in order]
        out[router] = {
            name: {
                **entry(row.stat(name), [r.metrics.get(name) for r in runs]),
                "unit": unit_of(name),
            }
            for name in names
        }
    return {
        "scenario": None if summary.about is None else summary.about.scenario,
        "confidence": CONFIDENCE,
        "replications": summary.replications,
        "duration": {
            "file": _r(file_duration),
            "live": _r(live.duration),
            "simulated": _r(live.duration),
        },
        "live_runs": {r: [{"run": x.name, "speed": x.speed} for x in live.of(r)] for r in common},
        "left_out": {
            "live_only": [r for r in live.routers if r not in routers],
            "simulated_only": [r for r in routers if r not in live.routers],
        },
        "metrics": order,
        "routers": out,
    }


def section(table: dict[str, Any], directory: Path) -> list[str]:
    """The report's section (Markdown lines) of the comparison ``table``; its sentences
    and cells are the page's (:mod:`sim.view.against`)."""
    from sim.view.against import HEADER, LEFT_OUT, TITLE, cells, duration_sentence, ordered

    runs = "; ".join(
        f"{router} ({', '.join(r['run'] for r in rs)})" for router, rs in table["live_runs"].items()
    )
    lines = [
        f"## {TITLE}",
        "",
        f"Live runs in `{directory}`: {runs}. {duration_sentence(table)}",
        "",
        f"Simulated: the mean over {table['replications']} replication(s) with its 95 % "
        "interval in brackets. Live: the live run's value, or the mean of the live runs' "
        "(each in parentheses). Relative error: |simulated − live| / |live| (with live 0 "
        "it is undefined and the difference simulated − live is given). **outside**: the "
        "live value lies outside the simulated interval, an interval of the simulated mean "
        "(one live run may fall outside it by its own spread).",
        "",
    ]
    for key, what in LEFT_OUT.items():
        if table["left_out"][key]:
            lines += [f"{what}: {', '.join(table['left_out'][key])}.", ""]
    for router in sorted(table["routers"]):
        lines += [f"### {router}", "", "| " + " | ".join(HEADER) + " |", "|---" * len(HEADER) + "|"]
        for name in ordered(table, router):
            row = table["routers"][router][name]
            *shown, flag = cells(row)
            lines.append(
                "| " + " | ".join([name, row["unit"], *shown, f"**{flag}**" if flag else ""]) + " |"
            )
        lines.append("")
    return lines
