"""Trace lines (SPEC §5) as calibration reads them: the fields and detail keys the
measurements use, every line checked, every problem located.

A file is read with the conformance reader (:func:`sim.conformance.events.read_blocks`:
plain or gzip, blank lines skipped, line numbers kept). A line must be a trace event
(the conformance decoder's message names the field otherwise: ``seq`` and ``label`` are
required, as ``check`` requires them), of a known label, with a time ``t``; times never
go back (a trace is time-ordered). Detail keys other than
those of :class:`Detail` are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from sim.conformance.events import TraceError, decode_line, decoder, read_blocks
from sim.vocabulary import LABEL_NAMES

__all__ = ["Detail", "Event", "TraceError", "read_events"]

_LABELS = frozenset(LABEL_NAMES)


class Detail(msgspec.Struct, frozen=True, gc=False):
    """The detail keys calibration reads (``None`` when absent)."""

    msg: int | None = None
    from_: str | None = msgspec.field(default=None, name="from")
    to: str | None = None
    proto: str | None = None
    kind: str | None = None
    attempt: int | None = None
    error: str | None = None
    cause: str | None = None
    backoff: float | None = None
    at: str | None = None
    chain: list[str] | None = None


_EMPTY = Detail()


class Event(msgspec.Struct, gc=False):
    """One event: time (seconds), label, where, whose, and the :class:`Detail`."""

    seq: int
    label: str
    t: float | None = None
    rep: int | None = None
    agent: str | None = None
    wf: str | None = None
    inv: int | None = None
    tool: str | None = None
    detail: Detail = _EMPTY


_decode = msgspec.json.Decoder(Event).decode


def read_events(path: str | Path) -> Iterator[tuple[int, Event]]:
    """``(line number, event)`` of every non-blank line of the trace at ``path``;
    :class:`TraceError` (file and line) at the first line that cannot be read."""
    source, blocks = read_blocks(path)
    lineno = 0
    last = float("-inf")
    fast = decoder()
    for block in blocks:
        for raw in block:
            lineno += 1
            if not raw.strip():
                continue
            try:
                event = _decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                decode_line(raw, source, lineno, fast)  # raises, naming the field, if it can
                raise TraceError(source, lineno, f"not a trace event: {exc}") from None
            if event.label not in _LABELS:
                raise TraceError(
                    source, lineno, f"not a trace event: unknown label {event.label!r}"
                )
            t = event.t
            if t is None:
                raise TraceError(source, lineno, "`t` is missing: calibration needs every time")
            if t < last:
                raise TraceError(
                    source,
                    lineno,
                    f"time goes back (t={t:g} after t={last:g}): a trace is in time order",
                )
            last = t
            yield lineno, event
