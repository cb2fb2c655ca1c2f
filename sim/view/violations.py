"""What the Violations tab lists: per run, each violated check (SPEC §6) and property
(SPEC §9) with its counterexamples, and the counterexample traces ``verify`` writes.

With the scenario, a run whose ``metrics.json`` reports a violation (or that has no
``metrics.json``) is checked again, in one streaming pass with its properties, to get
every counterexample up to the cap (:data:`~sim.vocabulary.counterexamples.KEEP_COUNTEREXAMPLES`
per check and per property, the earliest by ``seq``); without it, the first one each
``metrics.json`` keeps. Each group says how many violations there were and how many are
kept.

An example's ``seqs`` are its offending events, lit in its chart: every event of a
check's counterexample; for a property, the event at which the violation became certain
(the last of the scope's events kept), the others being its ``context``; its
``instances`` the ``wf#inst`` those events belong to.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from sim.view.compact import compact

if TYPE_CHECKING:
    from sim.conformance.checks import Verdict
    from sim.scenario import Scenario
    from sim.vocabulary.counterexamples import Counterexample


def _seqs(events: list[dict[str, Any]]) -> list[int]:
    return sorted({int(e["seq"]) for e in events if isinstance(e.get("seq"), int)})


def _group(kind: str, name: str, violations: int, examples: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "name": name, "violations": violations, "examples": examples}


def _instances(events: list[dict[str, Any]]) -> list[str]:
    """``wf#inst`` of the instances the events (those with a ``seq``) belong to, sorted by
    (workflow, instance)."""
    keys = {
        (str(e["wf"]), int(e["inst"]))
        for e in events
        if isinstance(e.get("seq"), int) and e.get("wf") is not None and e.get("inst") is not None
    }
    return [f"{wf}#{inst}" for wf, inst in sorted(keys)]


def _check_example(c: Counterexample) -> dict[str, Any]:
    return {
        "message": c.message,
        "seqs": _seqs(c.events),
        "context": [],
        "instances": _instances(c.events),
    }


def _property_example(c: Counterexample, scope: str) -> dict[str, Any]:
    seqs = _seqs(c.events)
    last = c.events[-1].get("seq") if c.events else None
    offending = [int(last)] if isinstance(last, int) else []
    ex: dict[str, Any] = {
        "message": c.message,
        "seqs": offending,
        "context": [s for s in seqs if s not in offending],
        "instances": _instances(c.events),
    }
    if c.elided:
        ex["elided"] = c.elided
    if scope == "run":  # the scope spans instances: the chart draws these events
        ex["events"] = [compact(e, owner=True) for e in c.events]
    return ex


def from_metrics(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The groups ``metrics.json`` gives: the first counterexample of each violated check
    (``conformance.checks``) and property (``properties``)."""
    out: list[dict[str, Any]] = []
    sources = (
        ("check", (metrics.get("conformance") or {}).get("checks") or {}),
        ("property", metrics.get("properties") or {}),
    )
    for kind, verdicts in sources:
        for name, verdict in sorted(verdicts.items()):
            first = verdict.get("first") if isinstance(verdict, dict) else None
            if not first:
                continue
            seqs = sorted(int(s) for s in first.get("seqs") or [] if s is not None)
            ex = {"message": str(first.get("message", "")), "seqs": seqs, "context": []}
            if kind == "property" and seqs:
                ex = {**ex, "seqs": [seqs[-1]], "context": seqs[:-1]}
            group = _group(kind, name, int(verdict.get("violations") or 0), [ex])
            if kind == "property":
                group |= {"scope": verdict.get("scope"), "formula": verdict.get("formula")}
            out.append(group)
    return out


def reported_violation(metrics: dict[str, Any]) -> bool:
    """Whether ``metrics.json`` reports any violated check or property (or holds no
    verdict at all: then only a new pass can tell)."""
    conformance = metrics.get("conformance")
    if not isinstance(conformance, dict) or conformance.get("checked") is None:
        return True
    counts = [
        *((v or {}).get("violations") for v in (conformance.get("checks") or {}).values()),
        *((v or {}).get("violations") for v in (metrics.get("properties") or {}).values()),
    ]
    return any(isinstance(n, int) and n > 0 for n in counts)


def from_trace(trace: Path, scenario: Scenario) -> list[dict[str, Any]]:
    """The groups of one trace checked again (the seven checks and the scenario's
    properties in one pass), every counterexample up to the cap."""
    from sim.conformance.checks import check_trace

    monitor = property_monitor(scenario)
    report = check_trace(trace, scenario, consumers=[monitor] if monitor else [])
    return groups(report.verdicts, monitor.finish() if monitor else [])


def groups(checks: list[Verdict], properties: list[Verdict]) -> list[dict[str, Any]]:
    """The groups of verdicts: each violated check or property with its kept examples."""
    out = [
        _group("check", v.name, v.violations, [_check_example(c) for c in v.counterexamples])
        for v in checks
        if v.violations and v.applicable
    ]
    for p in properties:
        if p.violations:
            group = _group(
                "property",
                p.name,
                p.violations,
                [_property_example(c, p.scope) for c in p.counterexamples],
            )
            out.append(group | {"scope": p.scope, "formula": p.formula})
    return sorted(out, key=lambda g: (g["kind"], g["name"]))


def property_monitor(scenario: Scenario) -> Any:
    """A monitor of the scenario's properties (SPEC §9), or None when it has none."""
    if not scenario.properties:
        return None
    from sim.properties import Monitor
    from sim.scenario.properties import compile_properties, tool_attributes

    return Monitor(compile_properties(scenario.properties, scenario), tool_attributes(scenario))


#: Where ``verify`` writes its counterexamples, under a results folder:
#: ``verify/<workflow>/<router>/<property>.jsonl`` (SPEC §11: §5 trace events, ``t`` 0).
VERIFY_DIR = "verify"


def workflow_folder(name: str) -> str:
    """The one path component that holds a workflow's counterexamples: the name itself,
    or, where it could leave or nest the folder (``/``, ``\\``, ``.``, ``..``, a NUL) or
    holds a ``%``, the name percent-encoded (a workflow's name is free text: ``../../x``
    wrote outside the results folder). :func:`workflow_of_folder` reads it back."""
    if name in (".", ".."):  # quote leaves dots as they are
        return name.replace(".", "%2E")
    if any(c in name for c in "/\\\0%"):
        return quote(name, safe="")
    return name


def workflow_of_folder(folder: str) -> str:
    """The workflow name :func:`workflow_folder` wrote as ``folder``."""
    return unquote(folder) if "%" in folder else folder


def from_verify(results: Path) -> list[dict[str, Any]]:
    """One group per counterexample trace ``verify`` wrote under ``results``: the shortest
    path of the untimed model that violates the property, its last event offending (the
    violation is certain there), drawn from its own events. A line that is not a JSON
    object raises :class:`ValueError` naming the file and line."""
    from sim.conformance.events import read_blocks
    from sim.json_input import JsonInputError, parse_json

    base = results / VERIFY_DIR
    out: list[dict[str, Any]] = []
    for path in sorted(base.glob("*/*/*.jsonl")) if base.is_dir() else []:
        workflow, router = workflow_of_folder(path.parent.parent.name), path.parent.name
        events = []
        _, blocks = read_blocks(path)  # bounded lines (MAX_LINE), a located TraceError
        for lineno, line in enumerate((raw for block in blocks for raw in block), 1):
            if not line.strip():
                continue
            try:
                e = parse_json(line.decode("utf-8"), f"{path}:{lineno}")
            except (JsonInputError, UnicodeDecodeError) as exc:
                why = exc.message if isinstance(exc, JsonInputError) else "not UTF-8 text"
                raise ValueError(f"{path}:{lineno}: not JSON ({why})") from None
            if not isinstance(e, dict) or not isinstance(e.get("seq"), int):
                raise ValueError(f"{path}:{lineno}: not a trace event (no integer seq)")
            events.append(e)
        seqs = _seqs(events)
        message = (
            f"shortest counterexample of {path.stem} for workflow {workflow} under {router} "
            f"({len(events)} events, untimed)"
        )
        example = {
            "message": message,
            "seqs": seqs[-1:],
            "context": seqs[:-1],
            "instances": [],
            "events": [compact(e, owner=True) for e in events],
        }
        group = _group("verify", path.stem, 1, [example])
        out.append(group | {"workflow": workflow, "router": router, "path": str(path)})
    return out
