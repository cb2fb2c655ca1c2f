"""Read what the runs wrote (traces, metrics.json, summary.json, the scenario) into the
compact, JSON-ready index the explorer page embeds.

Reads files only: never imports ``sim.engine`` or ``sim.experiments``. Deterministic:
the same files give the same index (sorted keys, seeded sampling, rounded floats).
Times are simulated seconds. Events kept in the page are those of the sampled
instances; every instance that holds a kept counterexample's event is always kept (at
most ``KEEP_COUNTEREXAMPLES`` per violated check and property per run, see
:mod:`sim.view.violations`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from sim.view.mesh import mesh_from_scenario, mesh_from_trace
from sim.view.replay import FRAMES, Replay, compact, rounded
from sim.view.violations import (
    VERIFY_DIR,
    from_metrics,
    from_trace,
    from_verify,
    reported_violation,
)
from sim.vocabulary.counterexamples import KEEP_COUNTEREXAMPLES

if TYPE_CHECKING:
    from sim.scenario import Scenario

#: Points kept per latency CDF.
CDF_POINTS = 200


@dataclass(frozen=True)
class Budget:
    """How many events the page may hold (besides every violating instance's), and the
    seed of the instance sample."""

    max_events: int = 100_000
    seed: int = 0


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Run:
    """One replication's files: ``label`` is its path under the results folder."""

    label: str
    router: str
    trace: Path
    metrics: Path | None


class ViewError(Exception):
    """The target holds no trace the explorer can show (message names the path)."""


def discover_runs(target: Path) -> list[Run]:
    """The runs under ``target``: a trace file, a rep folder, or a results folder."""
    if target.is_file():
        metrics = target.with_name("metrics.json")
        return [Run(target.parent.name, "", target, metrics if metrics.exists() else None)]
    if not target.is_dir():
        raise ViewError(f"{target}: no such file or folder")
    traces = sorted(
        t for t in target.glob("**/trace.jsonl") if VERIFY_DIR not in t.relative_to(target).parts
    )
    if not traces:
        raise ViewError(f"{target}: no trace.jsonl under it")
    runs = []
    for trace in traces:
        rel = trace.parent.relative_to(target)
        label = rel.as_posix() if rel.parts else trace.parent.name
        router = rel.parts[-2] if len(rel.parts) >= 2 else ""
        metrics = trace.with_name("metrics.json")
        runs.append(Run(label, router, trace, metrics if metrics.exists() else None))
    return runs


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ViewError(f"{path}: {exc}") from exc


_decode = msgspec.json.Decoder().decode


def _cdf(values: list[float]) -> list[list[float]]:
    """At most :data:`CDF_POINTS` points ``[latency s, fraction ≤]`` of ``values``."""
    values = sorted(values)
    n = len(values)
    if n == 0:
        return []
    step = max(1, n // CDF_POINTS)
    idx = [*range(step - 1, n, step)]
    if idx[-1] != n - 1:
        idx.append(n - 1)
    return [[rounded(values[i]), rounded((i + 1) / n)] for i in idx]


def build_index(
    target: Path, scenario: Path | Scenario | None, budget: Budget = DEFAULT_BUDGET
) -> dict[str, Any]:
    """The page's data: mesh, runs (instance index, replay, violated checks and properties
    with their counterexamples, timeline), the events of the sampled instances, summary
    tables, latency CDFs, what was sampled. ``scenario`` (a file or a loaded one) gives
    agent types and lets each violating run be checked again for every counterexample up
    to the cap; without it the mesh is the one the traces' hops name and the Violations tab
    has the first counterexample each ``metrics.json`` keeps."""
    runs = discover_runs(target)
    summary_file = target / "summary.json" if target.is_dir() else None
    summary = _read_json(summary_file) if summary_file and summary_file.exists() else None
    metrics = [_read_json(r.metrics) if r.metrics else {} for r in runs]
    if isinstance(scenario, Path):
        from sim.scenario import load_scenario

        scenario = load_scenario(scenario)
    mesh = (
        mesh_from_scenario(scenario)
        if scenario is not None
        else mesh_from_trace([r.trace for r in runs])
    )
    passes: list[Replay] = []
    found: list[list[dict[str, Any]]] = []
    for run, m in zip(runs, metrics, strict=True):
        violated = _violated(run, m, scenario)
        wanted = {s for g in violated for ex in g["examples"] for s in _all_seqs(ex)}
        p = Replay(mesh, float(m.get("duration") or 0.0) or _last_t(run.trace), wanted)
        with run.trace.open("rb") as stream:
            for line in stream:
                if line.strip():
                    p.feed(_decode(line))
        p.finish()
        for g in violated:
            for ex in g["examples"]:
                keys = sorted({p.seq_inst[s] for s in _all_seqs(ex) if s in p.seq_inst})
                ex["instances"] = [f"{wf}#{inst}" for wf, inst in keys]
        passes.append(p)
        found.append(violated)
    keep = _sample(passes, found, budget)
    events = _collect(runs, keep)
    out_runs = []
    latencies: dict[str, list[float]] = {}
    for i, (run, p, violated) in enumerate(zip(runs, passes, found, strict=True)):
        by_inst: dict[str, set[str]] = {}
        for g in violated:
            for ex in g["examples"]:
                for k in ex["instances"]:
                    by_inst.setdefault(k, set()).add(g["name"])
        rows = []
        for (wf, inst), rec in sorted(p.instances.items()):
            key = f"{wf}#{inst}"
            names = sorted(by_inst.get(key, ()))
            rows.append([wf, inst, rec["status"], rec["n"], rec["hops"], names, key in keep[i]])
            if rec["end"] is not None and rec["status"] == "succeeded":
                latencies.setdefault(run.router or run.label, []).append(rec["end"] - rec["start"])
        out_runs.append(
            {
                "label": run.label,
                "router": run.router,
                "duration": rounded(p.duration),
                "instances": rows,
                "violating": sorted(by_inst),
                "violated": violated,
                **p.to_json(),
                "events": events[i],
            }
        )
    total = sum(len(p.instances) for p in passes)
    kept = sum(len(k) for k in keep)
    return {
        "mesh": mesh.to_json(),
        "runs": out_runs,
        "verify": from_verify(target) if target.is_dir() else [],
        "summary": summary,
        "cdf": {name: _cdf(v) for name, v in sorted(latencies.items())},
        "frames": FRAMES,
        "keep_counterexamples": KEEP_COUNTEREXAMPLES,
        "sampling": {
            "instances": total,
            "kept": kept,
            "events_total": sum(sum(r["n"] for r in p.instances.values()) for p in passes),
            "events_kept": sum(len(evs) for ev in events for evs in ev.values()),
            "max_events": budget.max_events,
            "seed": budget.seed,
        },
    }


def _violated(run: Run, metrics: dict[str, Any], scenario: Scenario | None) -> list[dict[str, Any]]:
    """The run's violated checks and properties: checked again with the scenario (every
    counterexample up to the cap) when its metrics report a violation, else as the
    metrics give them."""
    if scenario is None:
        return from_metrics(metrics)
    if run.metrics is not None and not reported_violation(metrics):
        return []
    from sim.conformance.checks import TraceError

    try:
        return from_trace(run.trace, scenario)
    except TraceError as exc:
        raise ViewError(str(exc)) from exc


def _all_seqs(example: dict[str, Any]) -> list[int]:
    return [*example["seqs"], *example["context"]]


def _last_t(trace: Path) -> float:
    last = 0.0
    with trace.open("rb") as stream:
        for line in stream:
            if line.strip():
                last = float(_decode(line)["t"])
    return last


def _sample(
    passes: list[Replay], found: list[list[dict[str, Any]]], budget: Budget
) -> list[set[str]]:
    """Per run, the instance keys whose events the page holds: every one a kept
    counterexample touches, then a seeded shuffle of the others while the budget lasts."""
    keep: list[set[str]] = [
        {k for g in violated for ex in g["examples"] for k in ex["instances"]} for violated in found
    ]
    used = 0
    for p, k in zip(passes, keep, strict=True):
        used += sum(p.instances[_key(s)]["n"] for s in k if _key(s) in p.instances)
    pool = [
        (i, f"{wf}#{inst}", rec["n"])
        for i, p in enumerate(passes)
        for (wf, inst), rec in sorted(p.instances.items())
        if f"{wf}#{inst}" not in keep[i]
    ]
    random.Random(budget.seed).shuffle(pool)
    for i, key, n in pool:
        if used + n > budget.max_events:
            continue
        keep[i].add(key)
        used += n
    return keep


def _key(s: str) -> tuple[str, int]:
    wf, _, inst = s.rpartition("#")
    return wf, int(inst)


def _collect(runs: list[Run], keep: list[set[str]]) -> list[dict[str, list[list[Any]]]]:
    """The second pass: the compact events of the kept instances, per run and instance."""
    out: list[dict[str, list[list[Any]]]] = []
    for run, k in zip(runs, keep, strict=True):
        wanted = {_key(s) for s in k}
        found: dict[str, list[list[Any]]] = {}
        with run.trace.open("rb") as stream:
            for line in stream:
                if not line.strip():
                    continue
                e = _decode(line)
                wf, inst = e.get("wf"), e.get("inst")
                if wf is None or inst is None or (wf, inst) not in wanted:
                    continue
                found.setdefault(f"{wf}#{inst}", []).append(compact(e))
        out.append(dict(sorted(found.items())))
    return out


__all__ = ["Budget", "Run", "ViewError", "build_index"]
