"""The loop of the pass, derived from its consumers: a dispatch table built once from the
handlers each consumer declares, then each line decoded, ordered and handed to the
handlers of its label.

The table maps each label to the tuple of handlers that read it (the consumers' bound
methods, in the consumers' order); a label no consumer reads costs its decode, its order
check and its count. There is no second copy of any check here: a check's cheap common
case is written in its own handler (e.g. ``lts``'s step through a configuration it has
already seen, ``route_validity``'s valid hop while everything is up). Between the
handlers the loop keeps what they share (:mod:`~sim.conformance.checks.tracking`): each
open invocation's events while a consumer reads them (:class:`~.base.Context`), and each
running instance's invocations while a consumer acts at ``wf_end``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence, Sized
from typing import Any

from sim.conformance.checks.base import OPENING, TERMINAL, Check, Consumer, Context, Handler
from sim.conformance.checks.blocks import disorder, line_number, reread
from sim.conformance.checks.tracking import Invocations, ends_instances
from sim.conformance.events import LABEL_IDS, PROTOCOL_LABELS, TraceError, decoder, unknown_label

#: The gate of a handler that has none (never empty).
ALWAYS = (True,)
#: A label's entry in the table: its handlers, or (when one has a gate) its
#: ``(handler, gate)`` pairs.
Entry = tuple[Any, ...]


def dispatch(consumers: Sequence[Consumer]) -> dict[str, tuple[bool, Entry]]:
    """Label → ``(gated, entry)``: the handlers that read it, in the consumers' order
    (every SPEC §5 label is a key; the consumers' ``handlers()`` and ``gates()`` are read
    here, once). A label with a gated handler has ``(handler, gate)`` pairs, the handler
    called only while its gate is not empty."""
    table: dict[str, list[tuple[Handler, Sized]]] = {lab: [] for lab in LABEL_IDS}
    for c in consumers:
        gates = c.gates() if isinstance(c, Check) else {}
        for lab, h in c.handlers().items():
            table[lab].append((h, gates.get(lab, ALWAYS)))
    out: dict[str, tuple[bool, Entry]] = {}
    for lab, pairs in table.items():
        if any(g is not ALWAYS for _, g in pairs):
            out[lab] = (True, tuple(pairs))
        else:
            out[lab] = (False, tuple(h for h, _ in pairs))
    return out


#: A label's row in the loop (see :func:`rows`): a list, its count mutated per event.
Row = list[Any]


def rows(table: dict[str, tuple[bool, Entry]], track: bool, lazy: bool) -> dict[str, Row]:
    """Label → what the loop does with its event: ``[events so far, plain, entry, kept by
    the tracking before the handlers, opens an invocation, after the handlers (0
    nothing, 1 the invocation ends, 2 the instance ends), gated]``; ``plain``: nothing
    but its handlers (not kept, none gated, nothing after: the loop's short path).
    Lazily only the openings are kept (an event of an invocation not open fails
    ``lts``), and nothing ends."""
    out = {}
    for lab in LABEL_IDS:
        protocol, opening = lab in PROTOCOL_LABELS, lab in OPENING
        kept = track and protocol and (opening or not lazy)
        after = 0
        if track and lab in TERMINAL and not lazy:
            after = 1
        elif track and lab == "wf_end":
            after = 2
        gated, entry = table[lab]
        plain = not (kept or gated or after)
        out[lab] = [0, plain, entry, kept, opening, after, gated]
    return out


class Pass:
    """The pass over one trace, fed block by block (:meth:`feed`): from a file read
    (:func:`stream`) or from the engine as it writes its trace (the lines of each block
    it writes). ``counts`` is the number of events per label id so far. ``ctx.hist``
    holds each open invocation's events while a consumer reads them (``history =
    True``); instances' invocations are tracked while one acts at ``wf_end``.
    ``decode`` replaces :func:`~sim.conformance.events.decoder` (a line it does not read
    is read by that one). ``keep=False``, with checks alone (``lts`` among them): no
    history is kept, an invocation counts as its instance's at its opening only (an
    event of one not open fails ``lts``), and :meth:`feed` returns False after the block
    in which a check that reports histories first fails (run it again, keeping them)."""

    __slots__ = (
        "base", "by_label", "decode", "end", "hist", "history", "last_seq", "last_t",
        "lazy", "live", "name", "ordered", "plain", "seen", "watched",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        consumers: Sequence[Consumer],
        ctx: Context,
        ordered: bool,
        decode: Callable[[bytes], Any] | None = None,
        keep: bool = True,
    ) -> None:
        table = dispatch(consumers)
        enders = [c.end_instance for c in consumers if ends_instances(c)]
        history = any(getattr(c, "history", False) for c in consumers)
        lazy_ok = all(isinstance(c, Check) for c in consumers) and any(
            c.name == "lts" for c in consumers if isinstance(c, Check)
        )
        self.watched = [c for c in consumers if isinstance(c, Check) and c.history]
        self.lazy = lazy = not keep and lazy_ok and bool(self.watched)
        self.history = history = history and not lazy
        track = history or bool(enders)
        tracked = Invocations(ctx.hist, enders, history, lazy)
        self.seen, self.end, self.live = tracked.seen, tracked.end, tracked.live
        self.hist = ctx.hist
        self.by_label = rows(table, track, lazy)
        self.last_seq = -(1 << 63)
        self.last_t = -float("inf")
        self.name = name
        self.ordered = ordered
        self.base = 0  # lines before the next block
        self.plain = decoder()
        self.decode = decode or self.plain

    @property
    def counts(self) -> list[int]:
        """The number of events per label id so far."""
        return [row[0] for row in self.by_label.values()]

    def feed(self, block: list[bytes]) -> bool:
        """Feed the lines of ``block`` (the trace's next ones) to the consumers; False when
        a lazy pass must be run again keeping histories (see the class docstring). Raises
        :class:`~sim.conformance.events.TraceError` (located) on a line it refuses."""
        name, ordered, base, plain, decode = (
            self.name,
            self.ordered,
            self.base,
            self.plain,
            self.decode,
        )
        by_label, seen, end = self.by_label, self.seen, self.end
        history, hist, live = self.history, self.hist, self.live
        last_seq, last_t = self.last_seq, self.last_t
        was_enabled = gc.isenabled()
        gc.disable()  # the checks build no reference cycles; collections would only cost
        try:
            for raw in block:
                try:
                    ev = decode(raw)
                except Exception:
                    ev = reread(name, block, raw, base, plain)
                    if ev is None:  # a blank line
                        continue
                # SPEC §5 order: two comparisons per event (t may be None: TypeError)
                seq = ev.seq
                if seq <= last_seq and ordered:
                    where = line_number(block, raw, base)
                    raise TraceError(name, where, disorder("seq", seq, last_seq))
                last_seq = seq
                t = ev.t
                try:
                    if t < last_t and ordered:
                        where = line_number(block, raw, base)
                        raise TraceError(name, where, disorder("t", t, last_t))
                    last_t = t
                except TypeError:
                    pass
                try:
                    row = by_label[ev.label]
                except KeyError:
                    where = line_number(block, raw, base)
                    raise TraceError(name, where, unknown_label(ev.label)) from None
                row[0] += 1
                if row[1]:  # plain: its handlers alone (most events)
                    for h in row[2]:
                        h(ev, raw)
                    continue
                _, _, entry, kept, opening, after, gated = row
                if kept:
                    seen(ev, raw, opening)
                if gated:
                    for h, gate in entry:
                        if gate:
                            h(ev, raw)
                else:
                    for h in entry:
                        h(ev, raw)
                if after:
                    if after == 2:
                        end(ev.wf, ev.inst)
                    elif history:
                        hist.pop(ev.inv, None)
                    else:
                        live.discard(ev.inv)
        finally:
            self.last_seq, self.last_t = last_seq, last_t
            if was_enabled:
                gc.enable()
        self.base = base + len(block)
        # a lazy pass's failing check needs the histories for its counterexample
        return not (self.lazy and any(c.violations for c in self.watched))


def stream(
    name: str,
    blocks: Iterable[list[bytes]],
    consumers: Sequence[Consumer],
    ctx: Context,
    ordered: bool,
    decode: Callable[[bytes], Any] | None = None,
    keep: bool = True,
) -> list[int] | None:
    """Feed every line of ``blocks`` to ``consumers`` (a :class:`Pass`); the number of
    events per label id, or None when a lazy pass (``keep=False``) must be run again
    keeping histories."""
    loop = Pass(name, consumers, ctx, ordered, decode, keep)
    for block in blocks:
        if not loop.feed(block):
            return None
    return loop.counts
