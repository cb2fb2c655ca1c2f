"""``python -m sim live``: one live run per router, from deployment to checked results.

For each router: deploy the scenario (:mod:`sim.live.deploy`), run its workload for
``duration`` scenario seconds and its faults, stop, merge the parts into
``DIR/<router>/live-<k>/trace.jsonl`` (:mod:`sim.live.merge`), count the metrics from
the full trace (:mod:`sim.live.metrics`), check the trace like ``run`` does (SPEC §6
and the scenario's properties) and write ``metrics.json``. ``k`` is the first free
number under ``DIR/<router>/``: runs accumulate. The processes' own files (their parts,
specs, logs) are removed once the trace is merged. A run stopped by a signal (or that
failed once it had started) keeps what it wrote: the trace merged so far and its metrics
(``live.interrupted`` says why; no checks), and the processes' own files under
``live-<k>/processes/``. A start that failed (or was interrupted before scenario time 0)
leaves nothing: ``live-<k>`` is removed (and ``<router>/`` when it is left empty), so
``k`` stays free and nothing is taken for an unfinished run; the error, which names the
agent and the last line its process wrote on stderr, is what explains it.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.atomic import StorageError, temp_name, write_atomic
from sim.live import DEFAULT_DRAIN, DEFAULT_MAX_PROCESSES
from sim.live.deploy import Deployment
from sim.live.layout import LiveError, layout
from sim.scenario.model import Scenario

__all__ = ["DEFAULT_DRAIN", "LiveError", "LiveRun", "live_run", "next_run"]

PROCESS_DIR = "processes"


@dataclass(frozen=True)
class LiveRun:
    """What one live run wrote."""

    router: str
    directory: Path
    metrics: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.metrics.get("conformance", {}).get("ok", False))


def next_run(base: Path, router: str) -> int:
    """The first ``k`` with no ``base/<router>/live-<k>``."""
    k = 0
    while (base / router / f"live-{k}").exists():
        k += 1
    return k


def live_run(
    source: Path,
    scenario: Scenario,
    router: str,
    base: Path,
    *,
    speed: float = 1.0,
    trace_level: str = "full",
    max_processes: int = DEFAULT_MAX_PROCESSES,
    processes: int | None = None,
    drain: float = DEFAULT_DRAIN,
    capture: bool = False,
    say: Callable[[str], None] = lambda line: None,
    warn: Callable[[str], None] = lambda line: None,
) -> LiveRun:
    """One live run of ``scenario`` (its duration and seed already chosen) with
    ``router``; raises :class:`LiveError` when it cannot start or go on (what was
    written so far stays). ``say``: the progress; ``warn``: what the user must learn
    even when quiet (a real server that died during the run)."""
    groups = layout(scenario, max_processes, processes)
    k = next_run(base, router)
    directory = base / router / f"live-{k}"
    work = directory / PROCESS_DIR
    fresh = not (base / router).exists()
    work.mkdir(parents=True)
    overrides = {"duration": scenario.duration, "seed": scenario.seed}
    wire = directory / "wire" if capture else None
    if wire is not None:
        wire.mkdir()
    deployment = Deployment(
        source,
        scenario,
        router,
        k,
        scenario.seed,
        speed,
        work,
        groups,
        overrides,
        capture=wire,
        warn=warn,
    )
    started = datetime.now(UTC)
    wall = time.monotonic()
    say(f"{router}: starting {len(groups)} processes for {len(scenario.agents)} agents")
    stopped: BaseException | None = None
    try:
        deployment.start()
        deployment.go()
        say(f"{router}: running {scenario.duration:g} s of scenario time at speed {speed:g}")
        deployment.supervise(scenario.duration, drain)
        deployment.finish()
    except (KeyboardInterrupt, LiveError) as exc:  # Stopped is a KeyboardInterrupt
        stopped = exc
    finally:
        deployment.close()
        ran = (work / "parts" / "controller.jsonl").exists()  # go() made it
        if not ran:  # a start that failed, or was stopped: nothing to keep
            _discard(directory, base / router if fresh else None)
    if not ran:
        assert stopped is not None, "go() makes the controller's part"
        raise stopped
    header = _header(scenario, router, k, trace_level, speed, started, wall, deployment)
    if stopped is not None:  # what ran so far is kept, merged, unchecked
        header["live"]["interrupted"] = str(stopped)
        _results(scenario, directory, work, header, trace_level, deployment.kills, check=False)
        raise stopped
    metrics = _results(scenario, directory, work, header, trace_level, deployment.kills)
    shutil.rmtree(work, ignore_errors=True)
    return LiveRun(router, directory, metrics)


def _discard(directory: Path, made: Path | None) -> None:
    """Remove what a start that failed wrote: ``directory`` and, when it is left empty,
    ``made`` (the router's folder, made for this run)."""
    shutil.rmtree(directory, ignore_errors=True)
    if made is not None:
        with contextlib.suppress(OSError):
            made.rmdir()  # only when empty


def _header(
    scenario: Scenario,
    router: str,
    k: int,
    trace_level: str,
    speed: float,
    started: datetime,
    wall: float,
    deployment: Deployment,
) -> dict[str, Any]:
    elapsed = time.monotonic() - wall
    return {
        "scenario": scenario.name,
        "router": router,
        "replication": k,
        "seed": scenario.seed,
        "duration": float(scenario.duration),
        "trace_level": trace_level,
        "live": {
            "duration": float(scenario.duration),
            "speed": speed,
            "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "wall_seconds": round(elapsed, 3),
            "origin_monotonic": deployment.clock.origin,
            "processes": len(deployment.procs),
            "agents": dict(deployment.book),
            "kills": [[a, round(t, 6)] for a, t in deployment.kills],
            "server_exits": list(deployment.server_exits),
            "machine": _machine(),
        },
    }


def _results(
    scenario: Scenario,
    directory: Path,
    work: Path,
    header: dict[str, Any],
    level: str,
    kills: list[tuple[str, float]],
    check: bool = True,
) -> dict[str, Any]:
    from sim.live.merge import merge
    from sim.live.metrics import live_metrics

    parts = sorted((work / "parts").glob("*.jsonl"))
    failed: dict[str, int] = {}
    for counts in sorted((work / "parts").glob("*.counts.json")):
        try:
            read = json.loads(counts.read_text(encoding="utf-8"))
        except ValueError:  # a host that could not write it whole (a full disk)
            raise LiveError(f"{counts}: not whole (was the disk full?)") from None
        for reason, n in read.items():
            failed[reason] = failed.get(reason, 0) + int(n)
    trace = directory / "trace.jsonl"
    tmp = temp_name(trace)  # whole or not at all: compare --against reads it
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            events = merge(parts, out, level=level, kills=kills)
        os.replace(tmp, trace)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StorageError.of(exc, trace) from None
    writes = frozenset(t.name for t in scenario.tools if t.side_effects.writes)
    metrics = live_metrics(events, writes, failed, header)
    if check:
        metrics.update(_verdicts(scenario, trace))
    text = json.dumps(metrics, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    write_atomic(directory / "metrics.json", text)
    return metrics


def _verdicts(scenario: Scenario, trace: Path) -> dict[str, Any]:
    """The conformance checks and the scenario's properties on the merged trace, as
    ``metrics.json`` holds them (the runner's keys)."""
    from sim.conformance import TraceError, check_trace
    from sim.conformance.checks import run_dir_verdicts
    from sim.experiments.properties import property_metrics, property_monitor

    monitor = property_monitor(scenario) if scenario.properties else None
    try:
        report = check_trace(trace, scenario, consumers=[monitor] if monitor else [])
    except TraceError as exc:
        return {"conformance": {"ok": False, "error": str(exc)}}
    out: dict[str, Any] = dict(run_dir_verdicts(report))
    if monitor is not None:
        out["properties"] = property_metrics(monitor.finish(), out["conformance"]["checked"])
    return out


def _machine() -> dict[str, Any]:
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": load,
    }
