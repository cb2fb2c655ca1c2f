"""Read what the runs wrote (traces, metrics.json, summary.json, the scenario) into the
compact, JSON-ready index the explorer page embeds.

Reads files only: never imports ``sim.engine`` or ``sim.experiments``. Per run it takes
the fragment the worker stored beside the trace (:mod:`sim.view.fragment`), or builds it
from the trace when there is none for the scenario given. Deterministic:
the same files give the same index (sorted keys, seeded sampling, rounded floats).
Times are simulated seconds. Events kept in the page are those of the sampled
instances; every instance that holds a kept counterexample's event is always kept (at
most ``KEEP_COUNTEREXAMPLES`` per violated check and property per run, see
:mod:`sim.view.violations`).
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, overload

from sim.view.against import AGAINST_FILE
from sim.view.fragment import EVENTS_FILE, PagePass, read_segments, scenario_digest, stored
from sim.view.mesh import Mesh, mesh_from_scenario, mesh_from_trace
from sim.view.replay import FRAMES, rounded
from sim.view.violations import (
    VERIFY_DIR,
    from_metrics,
    from_verify,
    groups,
    property_monitor,
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


def discover_runs(target: Path, only: Sequence[Path] | None = None) -> list[Run]:
    """The runs under ``target``: a trace file, a rep folder, or a results folder; with
    ``only`` (run directories under ``target``), those of them that hold a trace, in
    path order (what a ``compare`` ran or kept, not what else the folder holds)."""
    if target.is_file():
        metrics = target.with_name("metrics.json")
        return [Run(target.parent.name, "", target, metrics if metrics.exists() else None)]
    if not target.is_dir():
        raise ViewError(f"{target}: no such file or folder")
    if only is not None:
        traces = sorted(t for d in only if (t := d / "trace.jsonl").is_file())
    else:
        traces = sorted(
            t
            for t in target.glob("**/trace.jsonl")
            if VERIFY_DIR not in t.relative_to(target).parts
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
    from sim.json_input import JsonInputError, read_json

    try:
        return read_json(path)
    except JsonInputError as exc:
        raise ViewError(str(exc)) from None
    except OSError as exc:
        raise ViewError(f"{path}: {exc.strerror or exc}") from None


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


@dataclass
class Ahead:
    """What was built for the page before it is made (by ``compare``, while its runs go
    on): the scenario's ``mesh`` and ``digest`` (as its workers built them), and the
    fragments of the runs it read as each one finished (:meth:`read`), by run directory."""

    mesh: Mesh
    digest: str
    fragments: dict[Path, dict[str, Any]] = field(default_factory=dict)

    def read(self, directory: Path) -> None:
        """Read now the fragment stored in ``directory`` (kept if checked with ``digest``:
        :func:`~sim.view.fragment.stored`)."""
        data = stored(directory, self.digest)
        if data is not None:
            self.fragments[directory] = data


def build_index(
    target: Path,
    scenario: Path | Scenario | None,
    budget: Budget = DEFAULT_BUDGET,
    ahead: Ahead | None = None,
    only: Sequence[Path] | None = None,
) -> dict[str, Any]:
    """The page's data: mesh, runs (instance index, replay, violated checks and properties
    with their counterexamples, timeline), the events of the sampled instances, summary
    tables, the comparison with the live mesh (``against.json``, when ``compare --against``
    wrote one), latency CDFs, what was sampled. ``scenario`` (a file or a loaded one) gives
    agent types and lets each violating run be checked again for every counterexample up
    to the cap (or its fragment stored by the worker that checked it with that scenario be
    used, :mod:`sim.view.fragment`); without it the mesh is the one the traces' hops name
    and the Violations tab has the first counterexample each ``metrics.json`` keeps. The
    sampled instances' events are :class:`Encoded` (their JSON text). ``ahead``: the
    scenario's mesh and digest and runs' fragments already built or read from the same
    scenario and files (:class:`Ahead`), not built or read again. ``only``: the run
    directories to show (:func:`discover_runs`; default every trace under ``target``)."""
    runs = discover_runs(target, only)
    summary_file = target / "summary.json" if target.is_dir() else None
    summary = _read_json(summary_file) if summary_file and summary_file.exists() else None
    against_file = target / AGAINST_FILE if target.is_dir() else None
    against = _read_json(against_file) if against_file and against_file.exists() else None
    metrics = [_read_json(r.metrics) if r.metrics else {} for r in runs]
    if isinstance(scenario, Path):
        from sim.scenario import load_scenario

        scenario = load_scenario(scenario)
    digest: str | None
    if ahead is not None and scenario is not None:
        mesh, digest = ahead.mesh, ahead.digest
    else:
        mesh = (
            mesh_from_scenario(scenario)
            if scenario is not None
            else mesh_from_trace([r.trace for r in runs])
        )
        digest = scenario_digest(scenario) if scenario is not None else None
    with ExitStack() as files:
        parts = [
            _part(run, m, mesh, scenario, digest, files, ahead)
            for run, m in zip(runs, metrics, strict=True)
        ]
        keep = _sample(parts, budget)
        events = [_collect(part, k, files) for part, k in zip(parts, keep, strict=True)]
    out_runs = []
    latencies: dict[str, list[float]] = {}
    for run, m, part, k, evs in zip(runs, metrics, parts, keep, events, strict=True):
        violated = part.data["violated"]
        by_inst: dict[str, set[str]] = {}
        for g in violated:
            for ex in g["examples"]:
                for key in ex["instances"]:
                    by_inst.setdefault(key, set()).add(g["name"])
        rows = []
        for wf, inst, status, n, hops, start, end, _segments in part.data["instances"]:
            key = f"{wf}#{inst}"
            rows.append([wf, inst, status, n, hops, sorted(by_inst.get(key, ())), key in k])
            if end is not None and status == "succeeded":
                latencies.setdefault(run.router or run.label, []).append(end - start)
        out_runs.append(
            {
                "label": run.label,
                "router": run.router,
                "duration": rounded(part.data["duration"]),
                "instances": rows,
                "violating": sorted(by_inst),
                "violated": violated,
                **part.data["replay"],
                # the level the run traced at (metrics.json), not the one its events show:
                # a full trace in which no message moved is still full
                "level": m.get("trace_level") or part.data["replay"]["level"],
                "events": evs,
            }
        )
    return {
        "mesh": mesh.to_json(),
        "runs": out_runs,
        "verify": from_verify(target) if target.is_dir() else [],
        "summary": summary,
        # the scenario's routers in its order: the run shown first is the first's rep-0
        "routers": list(scenario.router_names) if scenario is not None else [],
        "against": against,
        "cdf": {name: _cdf(v) for name, v in sorted(latencies.items())},
        "frames": FRAMES,
        "keep_counterexamples": KEEP_COUNTEREXAMPLES,
        "sampling": {
            "instances": sum(len(p.sizes) for p in parts),
            "kept": sum(len(k) for k in keep),
            "events_total": sum(sum(p.sizes.values()) for p in parts),
            "events_kept": sum(len(v) for ev in events for v in ev.values()),
            "max_events": budget.max_events,
            "seed": budget.seed,
        },
    }


class Encoded(Sequence[Any]):
    """A JSON array kept as its text (an instance's events from an events file): the page
    embeds the text as it is; indexing or iterating decodes it once."""

    __slots__ = ("_items", "size", "text")

    def __init__(self, text: str, size: int) -> None:
        self.text = text
        self.size = size
        self._items: list[Any] | None = None

    def _decoded(self) -> list[Any]:
        if self._items is None:
            self._items = json.loads(self.text)
        return self._items

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        return self._decoded()[i]


@dataclass
class Part:
    """One run's fragment (:mod:`sim.view.fragment`) and where its events file is."""

    data: dict[str, Any]
    events: Path | IO[bytes]
    #: events per instance key ``wf#inst``
    sizes: dict[str, int]
    #: segments per instance key
    segments: dict[str, list[list[int]]]


def _part(
    run: Run,
    metrics: dict[str, Any],
    mesh: Mesh,
    scenario: Scenario | None,
    digest: str | None,
    files: ExitStack,
    ahead: Ahead | None = None,
) -> Part:
    """The run's fragment: the one stored beside its trace when it was checked with this
    scenario (read ahead, or now), else built now from the trace (events in a temporary
    file)."""
    data = None
    if ahead is not None and digest == ahead.digest:
        data = ahead.fragments.get(run.trace.parent)
    if data is None and digest is not None:
        data = stored(run.trace.parent, digest)
    events: Path | IO[bytes] = run.trace.parent / EVENTS_FILE
    if data is None:
        events = files.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
        data = _fragment_now(run, metrics, mesh, scenario, events)
    rows = data["instances"]
    return Part(
        data,
        events,
        {f"{r[0]}#{r[1]}": r[3] for r in rows},
        {f"{r[0]}#{r[1]}": r[7] for r in rows},
    )


def _fragment_now(
    run: Run, metrics: dict[str, Any], mesh: Mesh, scenario: Scenario | None, events: IO[bytes]
) -> dict[str, Any]:
    """Build the run's fragment from its trace: checked again with the scenario (every
    counterexample up to the cap) when its metrics report a violation, else with the
    violated checks and properties as the metrics give them."""
    from sim.conformance.checks import Context, TraceError, check_trace, run_pass
    from sim.conformance.events import read_blocks

    duration = float(metrics.get("duration") or 0.0) or _last_t(run.trace)
    check = scenario is not None and (run.metrics is None or reported_violation(metrics))
    violated = [] if scenario is not None else from_metrics(metrics)
    wanted = frozenset(s for g in violated for ex in g["examples"] for s in _all_seqs(ex))
    page = PagePass(mesh, duration, events, wanted)
    try:
        if check and scenario is not None:
            monitor = property_monitor(scenario)
            consumers = [monitor, page] if monitor is not None else [page]
            report = check_trace(run.trace, scenario, consumers=consumers)
            violated = groups(report.verdicts, monitor.finish() if monitor is not None else [])
        else:
            name, blocks = read_blocks(run.trace)
            run_pass(name, blocks, [page], Context())
    except TraceError as exc:
        raise ViewError(str(exc)) from exc
    return page.fragment(violated, trace=run.trace)


def _all_seqs(example: dict[str, Any]) -> list[int]:
    return [*example["seqs"], *example["context"]]


def _last_t(trace: Path) -> float:
    from sim.conformance.events import trace_events

    last = 0.0
    for e in trace_events(trace):
        last = float(e.t) if e.t is not None else last
    return last


def _sample(parts: list[Part], budget: Budget) -> list[set[str]]:
    """Per run, the instance keys whose events the page holds: every one a kept
    counterexample touches, then a seeded shuffle of the others the run's sample holds
    (:class:`~sim.view.fragment.PagePass`) while the budget lasts."""
    keep: list[set[str]] = [
        {k for g in p.data["violated"] for ex in g["examples"] for k in ex["instances"]}
        for p in parts
    ]
    used = 0
    for p, k in zip(parts, keep, strict=True):
        used += sum(p.sizes[s] for s in k if s in p.sizes)
    pool = [  # the instances whose events the run's sample holds (fragment.PagePass)
        (i, f"{r[0]}#{r[1]}", r[3])
        for i, p in enumerate(parts)
        for r in p.data["instances"]
        if r[7] and f"{r[0]}#{r[1]}" not in keep[i]
    ]
    random.Random(budget.seed).shuffle(pool)
    for i, key, n in pool:
        if used + n > budget.max_events:
            continue
        keep[i].add(key)
        used += n
    return keep


def _collect(part: Part, keep: set[str], files: ExitStack) -> dict[str, Encoded]:
    """The encoded events of the kept instances of one run, by instance key (sorted)."""
    wanted = sorted(k for k in keep if part.segments.get(k))
    if not wanted:
        return {}
    stream = part.events
    if isinstance(stream, Path):
        stream = files.enter_context(stream.open("rb"))
    return {k: Encoded(read_segments(stream, part.segments[k]), part.sizes[k]) for k in wanted}


__all__ = ["Ahead", "Budget", "Encoded", "Run", "ViewError", "build_index"]
