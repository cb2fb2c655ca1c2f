"""The one streaming pass: each line decoded once, dispatched by label to its consumers.

:func:`run_pass` reads the lines, decodes each once, checks SPEC §5 order, keeps each
open invocation's protocol events (bounded, for counterexamples) in the
:class:`~sim.conformance.checks.base.Context`, and calls only the handlers registered
for the line's label. Any :class:`~sim.conformance.checks.base.Consumer` can be fed: the
seven checks, and whatever else must see the same events in the same pass (a property
monitor: pass it to :func:`check_trace` as ``consumers``).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sim.conformance.checks.base import (
    HISTORY_CAP,
    OPENING,
    TERMINAL,
    Check,
    Consumer,
    Context,
    Handler,
)
from sim.conformance.checks.families import ALL_CHECKS, CHECK_NAMES
from sim.conformance.checks.verdict import NOT_CHECKED_NOTE, Report
from sim.conformance.events import (
    LABELS,
    PROTOCOL_LABELS,
    TraceError,
    decode_line,
    decoder,
    read_blocks,
)
from sim.conformance.truth import Truth, from_scenario
from sim.scenario.model import Scenario

Source = str | Path | Iterable[bytes | str | dict[str, Any]]


def check_trace(
    source: Source,
    truth: Scenario | Truth,
    checks: Iterable[str] | None = None,
    ordered: bool | None = None,
    consumers: Sequence[Consumer] = (),
) -> Report:
    """Run the checks (default: all seven) over a trace file or an iterable of lines /
    event dicts, parsing each line once. Raises :class:`TraceError` on a malformed line,
    an unknown label, and, when ``ordered``, on a line out of order (SPEC §5: ``t`` never
    decreases, ``seq`` increases). ``ordered`` defaults to True for a trace file and False
    for an iterable (SGD dialogues converted to events restart ``t`` at each dialogue).
    ``consumers`` are fed in the same pass, after the checks (they read their own results
    afterwards)."""
    if ordered is None:
        ordered = isinstance(source, (str, Path))
    if isinstance(truth, Scenario):
        truth = from_scenario(truth)
    names = tuple(checks) if checks is not None else CHECK_NAMES
    unknown = [n for n in names if n not in ALL_CHECKS]
    if unknown:
        raise ValueError(f"unknown check(s): {', '.join(unknown)}; known: {', '.join(CHECK_NAMES)}")
    ctx = Context()
    active = [ALL_CHECKS[n](truth, ctx) for n in names]
    name, blocks = read_blocks(source)
    started = time.perf_counter()
    counts = run_pass(name, blocks, [*active, *consumers], ctx, ordered)
    seconds = time.perf_counter() - started
    verdicts = [c.finish(sum(counts.get(lab, 0) for lab in c.labels)) for c in active]
    return Report(
        name, sum(counts.values()), verdicts, seconds, truth.source, counts.get("wf_start", 0)
    )


def _fanout(handlers: list[Handler]) -> Handler:
    if len(handlers) == 1:
        return handlers[0]
    hs = tuple(handlers)

    def call_all(ev: Any, raw: bytes) -> None:
        for h in hs:
            h(ev, raw)

    return call_all


def _noop(ev: Any, raw: bytes) -> None:
    return None


def _disorder(key: str, value: Any, previous: Any) -> str:
    how = "smaller than" if key == "t" else "not larger than"
    return (
        f"not in time order: `{key}` {value!r} is {how} the previous event's {previous!r} "
        "(SPEC §5: a trace is in time order, with increasing seq)"
    )


def _unknown_label(lab: Any) -> str:
    return f"unknown label {lab!r} (not a SPEC §5 label: {', '.join(sorted(LABELS))})"


def _ends_instances(c: Consumer) -> bool:
    """Whether ``c`` does anything at ``wf_end`` (a check with the default does not)."""
    return not (isinstance(c, Check) and type(c).end_instance is Check.end_instance)


def run_pass(
    name: str,
    blocks: Iterable[list[bytes]],
    consumers: Sequence[Consumer],
    ctx: Context,
    ordered: bool = False,
) -> dict[str, int]:
    """Feed every line of ``blocks`` to ``consumers`` (see the module docstring); the
    number of events per label. ``ctx.hist`` holds each open invocation's events."""
    table: dict[str, list[Handler]] = {}
    for c in consumers:
        for lab, h in c.handlers().items():
            table.setdefault(lab, []).append(h)
    enders = [c.end_instance for c in consumers if _ends_instances(c)]
    counts = _stream(name, blocks, table, enders, ctx, ordered)
    for c in consumers:
        c.end_trace()
    return counts


def _stream(
    name: str,
    blocks: Iterable[list[bytes]],
    table: dict[str, list[Handler]],
    enders: list[Any],
    ctx: Context,
    ordered: bool,
) -> dict[str, int]:
    fast = decoder()
    hist = ctx.hist
    by_inst: dict[tuple[Any, Any], list[Any]] = {}
    counts: dict[str, int] = {}
    handler = {lab: _fanout(hs) for lab, hs in table.items() if hs}
    # 1: a protocol label (invocation history), 2: wf_end (end of instance), else 0
    kind = dict.fromkeys(PROTOCOL_LABELS, 1)
    kind["wf_end"] = 2
    kind_of = kind.get
    handler_of = handler.get
    opening = OPENING
    terminal = TERMINAL
    noop = _noop
    lineno = 0
    last_seq = -(1 << 63)
    last_t = -float("inf")
    was_enabled = gc.isenabled()
    gc.disable()  # the checks build no reference cycles; collections would only cost
    try:
        for block in blocks:
            for raw in block:
                lineno += 1
                try:
                    ev = fast(raw)
                except Exception:
                    if not raw.strip():
                        continue
                    ev = decode_line(raw, name, lineno, fast)
                # SPEC §5 order: two comparisons per event (t may be None: TypeError)
                seq = ev.seq
                if seq <= last_seq and ordered:
                    raise TraceError(name, lineno, _disorder("seq", seq, last_seq))
                last_seq = seq
                t = ev.t
                try:
                    if t < last_t and ordered:
                        raise TraceError(name, lineno, _disorder("t", t, last_t))
                    last_t = t
                except TypeError:
                    pass
                lab = ev.label
                try:
                    counts[lab] += 1
                except KeyError:
                    if lab not in LABELS:
                        raise TraceError(name, lineno, _unknown_label(lab)) from None
                    counts[lab] = 1
                k = kind_of(lab)
                if k is None:
                    handler_of(lab, noop)(ev, raw)
                elif k == 1:
                    inv = ev.inv
                    h = hist.get(inv)
                    if h is None or lab in opening:
                        hist[inv] = [raw]
                        key = (ev.wf, ev.inst)
                        opened = by_inst.get(key)
                        if opened is None:
                            by_inst[key] = [inv]
                        else:
                            opened.append(inv)
                    elif len(h) < HISTORY_CAP:
                        h.append(raw)
                    else:
                        del h[1 : HISTORY_CAP // 2]
                        h.append(raw)
                    handler_of(lab, noop)(ev, raw)
                    if lab in terminal:
                        hist.pop(inv, None)
                else:
                    handler_of(lab, noop)(ev, raw)
                    key = (ev.wf, ev.inst)
                    invs = by_inst.pop(key, [])
                    for end in enders:
                        end(key, invs)
                    for inv in invs:
                        hist.pop(inv, None)
    finally:
        if was_enabled:
            gc.enable()
    return counts


def check_run_dir(rep_dir: str | Path, scenario: Scenario | Truth) -> dict[str, Any]:
    """The verdicts of ``rep_dir/trace.jsonl``, as keys to merge into its ``metrics.json``:
    ``violations`` (check → count), ``violations_per_1000_instances`` and ``conformance``
    (ok, events, instances, per check examined / violations / first counterexample's seqs
    and message). Raises :class:`TraceError` if the trace cannot be read.

    Nothing checked is never reported as "all hold": an empty trace (trace level ``off``)
    gives ``conformance.ok`` None, ``checked`` False and empty ``violations`` /
    ``violations_per_1000_instances``; a check that was not applicable (``conservation``
    with no ``send`` events, trace level ``protocol``) has None as its count and rate, and
    every rate is None when the trace holds no workflow instance."""
    report = check_trace(Path(rep_dir) / "trace.jsonl", scenario)
    if report.events == 0:
        return {
            "violations": {},
            "violations_per_1000_instances": {},
            "conformance": {
                "ok": None,
                "checked": False,
                "note": NOT_CHECKED_NOTE,
                "events": 0,
                "instances": 0,
                "checks": {},
            },
        }
    per = report.instances / 1000.0
    return {
        "violations": {v.name: (v.violations if v.applicable else None) for v in report.verdicts},
        "violations_per_1000_instances": {
            v.name: (round(v.violations / per, 6) if v.applicable and per else None)
            for v in report.verdicts
        },
        "conformance": {
            "ok": report.ok,
            "checked": True,
            "events": report.events,
            "instances": report.instances,
            "checks": {
                v.name: {
                    "examined": v.examined,
                    "violations": v.violations if v.applicable else None,
                    **({"applicable": False} if not v.applicable else {}),
                    **({"note": v.note} if v.note else {}),
                    **(
                        {
                            "first": {
                                "message": v.message,
                                "seqs": [e.get("seq") for e in v.counterexample],
                            }
                        }
                        if v.violations
                        else {}
                    ),
                }
                for v in report.verdicts
            },
        },
    }
