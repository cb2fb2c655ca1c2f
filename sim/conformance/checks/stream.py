"""The one streaming pass: each line decoded once, dispatched by label to its consumers.

:func:`run_pass` reads the lines, decodes each once, checks SPEC §5 order, keeps each
open invocation's protocol events (bounded, for counterexamples; a trace file checked
by the seven checks alone is read without them, and again with them only if one that
reports them fails: :func:`check_trace`) in the
:class:`~sim.conformance.checks.base.Context`, and calls only the handlers registered
for the line's label (a dispatch table built once from the consumers' declared
handlers: :mod:`~sim.conformance.checks.loop`). Any :class:`~sim.conformance.checks.base.Consumer`
can be fed: the seven checks, and whatever else must see the same events in the same
pass (a property monitor: pass it to :func:`check_trace` as ``consumers``).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sim.conformance.checks.base import Consumer, Context, extra_keys
from sim.conformance.checks.families import ALL_CHECKS, CHECK_NAMES
from sim.conformance.checks.loop import Pass, stream
from sim.conformance.checks.verdict import NOT_CHECKED_NOTE, Report
from sim.conformance.events import LABEL_IDS, PIECE, interning_decoder, read_blocks
from sim.conformance.truth import Truth, from_scenario, known_values
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
    afterwards). A trace file checked without other consumers is read keeping no
    invocation history, and read again keeping them only if a check that reports them
    fails (the same verdicts and counterexamples)."""
    if ordered is None:
        ordered = isinstance(source, (str, Path))
    keep = not isinstance(source, (str, Path)) or bool(consumers)  # else: lazily
    if isinstance(truth, Scenario):
        truth = from_scenario(truth)
    checks = check_names(checks)  # refused before the source is opened
    started = time.perf_counter()
    while True:
        name, blocks = read_blocks(source)
        checker = Checker(name, truth, checks, ordered, consumers, keep)
        try:
            done = all(checker.feed(block) for block in blocks)
        finally:
            close = getattr(blocks, "close", None)
            if close is not None:
                close()
        if done:
            report = checker.report()
            report.seconds = time.perf_counter() - started  # the reading too
            return report
        keep = True  # a check that reports the histories failed: again, keeping them


def check_names(checks: Iterable[str] | None) -> tuple[str, ...]:
    """The checks named (default: all seven, in report order); a ValueError naming the
    unknown ones."""
    names = tuple(checks) if checks is not None else CHECK_NAMES
    unknown = [n for n in names if n not in ALL_CHECKS]
    if unknown:
        known = ", ".join(CHECK_NAMES)
        raise ValueError(f"unknown check(s): {', '.join(unknown)}; known: {known}")
    return names


class Checker:
    """The checks (default: all seven) and ``consumers`` of one trace, fed its lines block
    by block (:meth:`feed`, in trace order; :meth:`lines` for the text the engine writes
    as it runs), then :meth:`report`. What :func:`check_trace` reads a file with, and
    what ``run`` checks its trace with in process while the engine writes it (the same
    pass, the same verdicts). ``seconds`` is the time spent in the pass so far."""

    def __init__(
        self,
        name: str,
        truth: Scenario | Truth,
        checks: Iterable[str] | None = None,
        ordered: bool = True,
        consumers: Sequence[Consumer] = (),
        keep: bool = True,
    ) -> None:
        if isinstance(truth, Scenario):
            truth = from_scenario(truth)
        names = check_names(checks)
        self.name = name
        self.truth = truth
        self.consumers = consumers
        # the scenario's names interned, the consumers' own detail keys read in the decode
        decode = interning_decoder(known_values(truth), extra_keys(consumers))
        ctx = Context()
        self.active = [ALL_CHECKS[n](truth, ctx) for n in names]
        self.loop = Pass(name, [*self.active, *consumers], ctx, ordered, decode, keep)
        self.seconds = 0.0

    def feed(self, block: list[bytes]) -> bool:
        """Feed the trace's next lines (see :meth:`Pass.feed`: False when a lazy pass must
        be run again keeping histories; :class:`TraceError` on a line it refuses)."""
        started = time.perf_counter()
        try:
            return self.loop.feed(block)
        finally:
            self.seconds += time.perf_counter() - started

    def lines(self, text: bytes) -> None:
        """Feed the lines of ``text`` (UTF-8, whole lines, each ending with ``\\n``: what
        the engine writes to the trace file), in pieces of about ``PIECE`` bytes."""
        whole = io.BytesIO(text)
        while block := whole.readlines(PIECE):
            self.feed(block)

    def report(self) -> Report:
        """The verdicts of the lines fed (each consumer's ``end_trace`` called first)."""
        started = time.perf_counter()
        for c in self.consumers:
            c.end_trace()
        counts = {lab: n for lab, n in zip(LABEL_IDS, self.loop.counts, strict=True) if n}
        verdicts = [c.finish(sum(counts.get(lab, 0) for lab in c.labels)) for c in self.active]
        self.seconds += time.perf_counter() - started
        return Report(
            self.name,
            sum(counts.values()),
            verdicts,
            self.seconds,
            self.truth.source,
            counts.get("wf_start", 0),
        )


def run_pass(
    name: str,
    blocks: Iterable[list[bytes]],
    consumers: Sequence[Consumer],
    ctx: Context,
    ordered: bool = False,
    decode: Callable[[bytes], Any] | None = None,
    keep: bool = True,
) -> dict[str, int] | None:
    """Feed every line of ``blocks`` to ``consumers`` (see the module docstring); the
    number of events per label. ``ctx.hist`` holds each open invocation's events while a
    consumer reads it (``history = True``), and instances' invocations are tracked while
    one acts at ``wf_end``. ``decode``: the line decoder (default
    :func:`~sim.conformance.events.decoder`; a line it does not read is read by that
    one). ``keep=False``, for checks alone (lts among them): no history is kept, and the
    pass stops (None) after the block in which a check that reports one first fails:
    run it again with fresh checks, keeping them."""
    counts = stream(name, blocks, consumers, ctx, ordered, decode, keep)
    if counts is None:
        return None
    for c in consumers:
        c.end_trace()
    return {lab: n for lab, n in zip(LABEL_IDS, counts, strict=True) if n}


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
