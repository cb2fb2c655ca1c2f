"""What the pass keeps of the invocations it tracks (:mod:`~sim.conformance.checks.loop`):
each open invocation's events while a consumer reads them (for counterexamples), each
running workflow instance's invocations, and what is dropped when an instance ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sim.conformance.checks.base import HISTORY_CAP, Check, Consumer, InstanceKey

#: A consumer's ``end_instance``.
Ender = Callable[[InstanceKey, Sequence[Any]], None]


def ends_instances(c: Consumer) -> bool:
    """Whether ``c`` does anything at ``wf_end`` (a check with the default does not)."""
    return not (isinstance(c, Check) and type(c).end_instance is Check.end_instance)


class Invocations:
    """The invocations the loop tracks: ``hist`` (invocation → its events, the first and
    the latest :data:`~sim.conformance.checks.base.HISTORY_CAP`, kept while ``history``),
    ``by_inst`` (instance → the invocations it opened) and ``live`` (the open invocations,
    when no history is kept; not kept when ``lazy``: an invocation then counts as its
    instance's at its opening only)."""

    __slots__ = ("by_inst", "enders", "hist", "history", "lazy", "live")

    def __init__(
        self, hist: dict[Any, list[bytes]], enders: Sequence[Ender], history: bool, lazy: bool
    ) -> None:
        self.hist = hist
        self.enders = tuple(enders)
        self.history = history
        self.lazy = lazy
        self.by_inst: dict[InstanceKey, list[Any]] = {}
        self.live: set[Any] = set()

    def seen(self, ev: Any, raw: bytes, opening: bool) -> None:
        """Protocol event ``ev`` (line ``raw``), before its handlers: kept in its
        invocation's history (a new one when ``opening`` or when none is kept; a full one
        keeps its first event and its latest), or, without histories, its invocation
        marked open; a new invocation counted as its instance's."""
        inv = ev.inv
        if self.history:
            past = self.hist.get(inv)
            if past is not None and not opening:
                if len(past) >= HISTORY_CAP:
                    del past[1 : HISTORY_CAP // 2]
                past.append(raw)
                return
            self.hist[inv] = [raw]
        elif not opening and (self.lazy or inv in self.live):
            return
        elif not self.lazy:
            self.live.add(inv)
        key = (ev.wf, ev.inst)
        opened = self.by_inst.get(key)
        if opened is None:
            self.by_inst[key] = [inv]
        else:
            opened.append(inv)

    def end(self, wf: Any, inst: Any) -> None:
        """At the ``wf_end`` of instance ``(wf, inst)``, after its handlers: each
        consumer's ``end_instance`` in their order, with the invocations the instance
        opened, then their histories (or open marks) dropped."""
        key = (wf, inst)
        invs = self.by_inst.pop(key, [])
        for end in self.enders:
            end(key, invs)
        if self.history:
            hist = self.hist
            for inv in invs:
                hist.pop(inv, None)
        else:
            self.live.difference_update(invs)
