"""Read what the runs wrote (traces, metrics.json, summary.json, the scenario) into the
compact, JSON-ready index the explorer page embeds.

Reads files only: never imports ``sim.engine`` or ``sim.experiments``. Deterministic:
the same files give the same index (sorted keys, seeded sampling, rounded floats).
Times are simulated seconds. Events kept in the page are those of the sampled
instances; every instance that holds a counterexample event is always kept.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from sim.view.mesh import Mesh, mesh_from_scenario, mesh_from_trace

if TYPE_CHECKING:
    from sim.scenario import Scenario

#: Time bins of the mesh replay (one frame each).
FRAMES = 200
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
    traces = sorted(target.glob("**/trace.jsonl"))
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


def counterexamples(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The counterexamples that metrics.json keeps (the first of each violated check,
    and of each violated property): ``{"check", "message", "seqs", "violations"}``."""
    out: list[dict[str, Any]] = []
    conformance = metrics.get("conformance") or {}
    for group in ("checks", "properties"):
        for name, verdict in sorted((conformance.get(group) or {}).items()):
            first = verdict.get("first") if isinstance(verdict, dict) else None
            if not first:
                continue
            seqs = first.get("seqs") or [e.get("seq") for e in first.get("events", [])]
            out.append(
                {
                    "check": name,
                    "message": str(first.get("message", "")),
                    "seqs": sorted(int(s) for s in seqs if s is not None),
                    "violations": int(verdict.get("violations", 0)),
                }
            )
    return out


def _r(x: float) -> float:
    return round(float(x), 6)


_decode = msgspec.json.Decoder().decode


class _Pass:
    """The first pass over one trace: the instance index, the mesh replay bins."""

    def __init__(self, mesh: Mesh, duration: float, wanted: set[int]) -> None:
        self.mesh = mesh
        self.duration = max(duration, 1e-9)
        self.wanted = wanted
        self.instances: dict[tuple[str, int], dict[str, Any]] = {}
        self.seq_inst: dict[int, tuple[str, int]] = {}
        self.hops: dict[tuple[int, int, int], int] = {}
        self.translations: dict[tuple[int, int], int] = {}
        self.down: list[list[Any]] = []
        self.open_down: dict[tuple[str, str], float] = {}
        self.last_t = 0.0

    def frame(self, t: float) -> int:
        return min(FRAMES - 1, max(0, int(t / self.duration * FRAMES)))

    def feed(self, e: dict[str, Any]) -> None:
        t = float(e["t"])
        self.last_t = t
        label = e["label"]
        wf, inst = e.get("wf"), e.get("inst")
        if wf is not None and inst is not None:
            key = (str(wf), int(inst))
            rec = self.instances.get(key)
            if rec is None:
                rec = {"start": t, "end": None, "status": "open", "n": 0, "hops": 0}
                self.instances[key] = rec
            rec["n"] += 1
            if label == "hop":
                rec["hops"] += 1
            elif label == "wf_end":
                rec["end"] = t
                rec["status"] = str((e.get("detail") or {}).get("status", "ended"))
            if e["seq"] in self.wanted:
                self.seq_inst[int(e["seq"])] = key
        detail = e.get("detail") or {}
        if label == "hop":
            link = self.mesh.link_of(detail.get("from"), detail.get("to"))
            proto = self.mesh.proto_index(detail.get("proto") or e.get("proto"))
            if link is not None:
                k = (self.frame(t), link, proto)
                self.hops[k] = self.hops.get(k, 0) + 1
        elif label == "translate":
            node = self.mesh.node_of(detail.get("at") or e.get("agent"))
            if node is not None:
                k2 = (self.frame(t), node)
                self.translations[k2] = self.translations.get(k2, 0) + 1
        elif label in ("node_down", "link_down"):
            self.open_down[(label[:4], _thing(e))] = t
        elif label in ("node_up", "link_up"):
            start = self.open_down.pop((label[:4], _thing(e)), None)
            if start is not None:
                self.down.append([label[:4], _thing(e), _r(start), _r(t)])

    def finish(self) -> None:
        for (kind, thing), start in sorted(self.open_down.items()):
            self.down.append([kind, thing, _r(start), _r(max(self.last_t, self.duration))])
        self.down.sort()


def _thing(e: dict[str, Any]) -> str:
    """The node or link an outage event names (``a|b`` for a link, ends sorted)."""
    detail = e.get("detail") or {}
    ends = detail.get("link") or detail.get("between")
    if isinstance(ends, list) and len(ends) == 2:
        return "|".join(sorted(str(x) for x in ends))
    if "from" in detail and "to" in detail:
        return "|".join(sorted([str(detail["from"]), str(detail["to"])]))
    return str(e.get("agent"))


def _compact(e: dict[str, Any]) -> list[Any]:
    """An event as ``[t, seq, label, agent, task, inv, tool, proto, detail]``."""
    return [
        e["t"],
        e["seq"],
        e["label"],
        e.get("agent"),
        e.get("task"),
        e.get("inv"),
        e.get("tool"),
        e.get("proto"),
        e.get("detail") or {},
    ]


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
    return [[_r(values[i]), _r((i + 1) / n)] for i in idx]


def build_index(
    target: Path, scenario: Path | Scenario | None, budget: Budget = DEFAULT_BUDGET
) -> dict[str, Any]:
    """The page's data: mesh, runs (instance index, replay bins, counterexamples), the
    events of the sampled instances, summary tables, latency CDFs, what was sampled.
    ``scenario`` (a file or a loaded one) gives agent types; without it the mesh is the
    one the traces' hops name."""
    runs = discover_runs(target)
    summary_file = target / "summary.json" if target.is_dir() else None
    summary = _read_json(summary_file) if summary_file and summary_file.exists() else None
    metrics = [_read_json(r.metrics) if r.metrics else {} for r in runs]
    if isinstance(scenario, Path):
        from sim.scenario import load_scenario

        mesh = mesh_from_scenario(load_scenario(scenario))
    elif scenario is not None:
        mesh = mesh_from_scenario(scenario)
    else:
        mesh = mesh_from_trace([r.trace for r in runs])
    passes: list[_Pass] = []
    cexs: list[list[dict[str, Any]]] = []
    for run, m in zip(runs, metrics, strict=True):
        found = counterexamples(m)
        wanted = {s for c in found for s in c["seqs"]}
        p = _Pass(mesh, float(m.get("duration") or 0.0) or _last_t(run.trace), wanted)
        with run.trace.open("rb") as stream:
            for line in stream:
                if line.strip():
                    p.feed(_decode(line))
        p.finish()
        for c in found:
            keys = sorted({p.seq_inst[s] for s in c["seqs"] if s in p.seq_inst})
            c["instances"] = [f"{wf}#{inst}" for wf, inst in keys]
        passes.append(p)
        cexs.append(found)
    keep = _sample(passes, cexs, budget)
    events = _collect(runs, keep)
    out_runs = []
    latencies: dict[str, list[float]] = {}
    for i, (run, p, found) in enumerate(zip(runs, passes, cexs, strict=True)):
        bad = {k for c in found for k in c["instances"]}
        rows = []
        for (wf, inst), rec in sorted(p.instances.items()):
            key = f"{wf}#{inst}"
            checks = sorted({c["check"] for c in found if key in c["instances"]})
            rows.append([wf, inst, rec["status"], rec["n"], rec["hops"], checks, key in keep[i]])
            if rec["end"] is not None and rec["status"] == "succeeded":
                latencies.setdefault(run.router or run.label, []).append(rec["end"] - rec["start"])
        out_runs.append(
            {
                "label": run.label,
                "router": run.router,
                "duration": _r(p.duration),
                "instances": rows,
                "violating": sorted(bad),
                "counterexamples": found,
                "hops": [[f, li, pi, n] for (f, li, pi), n in sorted(p.hops.items())],
                "translations": [[f, ni, n] for (f, ni), n in sorted(p.translations.items())],
                "down": p.down,
                "events": events[i],
            }
        )
    total = sum(len(p.instances) for p in passes)
    kept = sum(len(k) for k in keep)
    return {
        "mesh": mesh.to_json(),
        "runs": out_runs,
        "summary": summary,
        "cdf": {name: _cdf(v) for name, v in sorted(latencies.items())},
        "frames": FRAMES,
        "sampling": {
            "instances": total,
            "kept": kept,
            "events_total": sum(sum(r["n"] for r in p.instances.values()) for p in passes),
            "events_kept": sum(len(evs) for ev in events for evs in ev.values()),
            "max_events": budget.max_events,
            "seed": budget.seed,
        },
    }


def _last_t(trace: Path) -> float:
    last = 0.0
    with trace.open("rb") as stream:
        for line in stream:
            if line.strip():
                last = float(_decode(line)["t"])
    return last


def _sample(
    passes: list[_Pass], cexs: list[list[dict[str, Any]]], budget: Budget
) -> list[set[str]]:
    """Per run, the instance keys whose events the page holds: every violating one, then
    a seeded shuffle of the others while the event budget lasts."""
    keep: list[set[str]] = [{k for c in found for k in c["instances"]} for found in cexs]
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
                found.setdefault(f"{wf}#{inst}", []).append(_compact(e))
        out.append(dict(sorted(found.items())))
    return out


__all__ = ["Budget", "Run", "ViewError", "build_index", "counterexamples"]
