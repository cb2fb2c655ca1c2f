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
from collections.abc import Callable, Iterable, Iterator, Sequence
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
    InstanceKey,
)
from sim.conformance.checks.families import ALL_CHECKS, CHECK_NAMES
from sim.conformance.checks.verdict import NOT_CHECKED_NOTE, Report
from sim.conformance.events import (
    LABEL_IDS,
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
    number of events per label. ``ctx.hist`` holds each open invocation's events while a
    consumer reads it (``history = True``), and instances' invocations are tracked while
    one acts at ``wf_end``."""
    table: dict[str, list[Handler]] = {}
    for c in consumers:
        for lab, h in c.handlers().items():
            table.setdefault(lab, []).append(h)
    enders = [c.end_instance for c in consumers if _ends_instances(c)]
    history = any(getattr(c, "history", False) for c in consumers)
    plan = _plan(table, history, track=bool(enders))
    counts = _stream(name, blocks, plan, enders, ctx, ordered)
    for c in consumers:
        c.end_trace()
    return {lab: n for lab, n in zip(LABEL_IDS, counts, strict=True) if n}


#: What the pass does with an event of a label: count it only, call its handler, keep it
#: in its invocation's history then call the handler, note only which instance opened
#: its invocation then call the handler, or end its workflow instance.
COUNT, HANDLE, INVOCATION, OPENS, END = 0, 1, 2, 3, 4
#: label → (label id, what to do, its handlers in consumer order)
Plan = dict[str, tuple[int, int, tuple[Handler, ...]]]


def _plan(table: dict[str, list[Handler]], history: bool, track: bool) -> Plan:
    """The per-label dispatch of the pass (every SPEC §5 label has an entry):
    ``history`` keeps invocation histories, ``track`` only which instance opened each
    invocation (for ``end_instance``)."""
    plan: Plan = {}
    for lab, i in LABEL_IDS.items():
        hs = tuple(table.get(lab, ()))
        if lab == "wf_end" and (history or track):
            what = END
        elif lab in PROTOCOL_LABELS and history:
            what = INVOCATION
        elif lab in PROTOCOL_LABELS and track:
            what = OPENS
        else:
            what = HANDLE if hs else COUNT
        plan[lab] = (i, what, hs)
    return plan


def _decoded(
    name: str, blocks: Iterable[list[bytes]], fast: Callable[[bytes], Any]
) -> Iterator[tuple[list[Any], list[bytes], int, list[int] | None]]:
    """Per block: its events (one C-level ``map`` of the decoder), their raw lines, the
    number of the line before the block and, when the block has a blank or malformed
    line (then decoded line by line, blank lines dropped), each event's line number
    (else event ``j`` is on line ``base + j + 1``). A malformed line raises
    :class:`TraceError` after the lines before it were yielded."""
    base = 0
    for block in blocks:
        try:
            yield list(map(fast, block)), block, base, None
        except Exception:
            evs: list[Any] = []
            raws: list[bytes] = []
            linenos: list[int] = []
            for lineno, raw in enumerate(block, base + 1):
                try:
                    ev = fast(raw)
                except Exception:
                    if not raw.strip():
                        continue
                    try:
                        ev = decode_line(raw, name, lineno, fast)
                    except TraceError:
                        yield evs, raws, base, linenos  # the lines before it come first
                        raise
                evs.append(ev)
                raws.append(raw)
                linenos.append(lineno)
            yield evs, raws, base, linenos
        base += len(block)


def _lineno(raws: list[bytes], raw: bytes, base: int, linenos: list[int] | None) -> int:
    """The line number of ``raw`` (an item of ``raws``, found by identity)."""
    j = next(j for j, r in enumerate(raws) if r is raw)
    return linenos[j] if linenos is not None else base + j + 1


def _stream(
    name: str,
    blocks: Iterable[list[bytes]],
    plan: Plan,
    enders: list[Any],
    ctx: Context,
    ordered: bool,
) -> list[int]:
    """The loop: per block one ``map`` of the decoder; per line two order comparisons, one
    dispatch lookup and a call of each handler registered for its label."""
    hist = ctx.hist
    by_inst: dict[InstanceKey, list[Any]] = {}
    live: set[Any] = set()  # open invocations, when no history is kept
    counts = [0] * len(LABEL_IDS)
    opening = OPENING
    terminal = TERMINAL
    last_seq = -(1 << 63)
    last_t = -float("inf")
    was_enabled = gc.isenabled()
    gc.disable()  # the checks build no reference cycles; collections would only cost
    try:
        for evs, raws, base, linenos in _decoded(name, blocks, decoder()):
            for ev, raw in zip(evs, raws, strict=True):
                # SPEC §5 order: two comparisons per event (t may be None: TypeError)
                seq = ev.seq
                if seq <= last_seq and ordered:
                    where = _lineno(raws, raw, base, linenos)
                    raise TraceError(name, where, _disorder("seq", seq, last_seq))
                last_seq = seq
                t = ev.t
                try:
                    if t < last_t and ordered:
                        where = _lineno(raws, raw, base, linenos)
                        raise TraceError(name, where, _disorder("t", t, last_t))
                    last_t = t
                except TypeError:
                    pass
                lab = ev.label
                try:
                    i, what, hs = plan[lab]
                except KeyError:
                    where = _lineno(raws, raw, base, linenos)
                    raise TraceError(name, where, _unknown_label(lab)) from None
                counts[i] += 1
                if what == HANDLE:
                    for h in hs:
                        h(ev, raw)
                elif what == INVOCATION:
                    inv = ev.inv
                    past = hist.get(inv)
                    if past is None or lab in opening:
                        hist[inv] = [raw]
                        key = (ev.wf, ev.inst)
                        opened = by_inst.get(key)
                        if opened is None:
                            by_inst[key] = [inv]
                        else:
                            opened.append(inv)
                    elif len(past) < HISTORY_CAP:
                        past.append(raw)
                    else:
                        del past[1 : HISTORY_CAP // 2]
                        past.append(raw)
                    for h in hs:
                        h(ev, raw)
                    if lab in terminal:
                        del hist[inv]
                elif what == OPENS:
                    inv = ev.inv
                    if inv not in live or lab in opening:
                        live.add(inv)
                        key = (ev.wf, ev.inst)
                        opened = by_inst.get(key)
                        if opened is None:
                            by_inst[key] = [inv]
                        else:
                            opened.append(inv)
                    for h in hs:
                        h(ev, raw)
                    if lab in terminal:
                        live.discard(inv)
                elif what == END:
                    for h in hs:
                        h(ev, raw)
                    key = (ev.wf, ev.inst)
                    invs = by_inst.pop(key, [])
                    for end in enders:
                        end(key, invs)
                    for inv in invs:
                        hist.pop(inv, None)
                        live.discard(inv)
    finally:
        if was_enabled:
            gc.enable()
    return counts


def check_run_dir(
    rep_dir: str | Path, scenario: Scenario | Truth, consumers: Sequence[Consumer] = ()
) -> dict[str, Any]:
    """The verdicts of ``rep_dir/trace.jsonl``, as keys to merge into its ``metrics.json``:
    ``violations`` (check → count), ``violations_per_1000_instances`` and ``conformance``
    (ok, events, instances, per check examined / violations / first counterexample's seqs
    and message). Raises :class:`TraceError` if the trace cannot be read.

    Nothing checked is never reported as "all hold": an empty trace (trace level ``off``)
    gives ``conformance.ok`` None, ``checked`` False and empty ``violations`` /
    ``violations_per_1000_instances``; a check that was not applicable (``conservation``
    with no ``send`` events, trace level ``protocol``) has None as its count and rate, and
    every rate is None when the trace holds no workflow instance. ``consumers`` (a property
    monitor) join the pass, as in :func:`check_trace`."""
    return run_dir_verdicts(
        check_trace(Path(rep_dir) / "trace.jsonl", scenario, consumers=consumers)
    )


def run_dir_verdicts(report: Report) -> dict[str, Any]:
    """The keys :func:`check_run_dir` merges into ``metrics.json``, from a run's report."""
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
