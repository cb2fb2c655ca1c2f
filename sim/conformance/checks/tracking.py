"""What the pass keeps of the invocations it tracks (:mod:`~sim.conformance.checks.loop`):
each open invocation's events while a consumer reads them (for counterexamples), each
running workflow instance's invocations, and what is dropped when an instance ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.conformance.checks.base import HISTORY_CAP, InstanceKey
from sim.conformance.checks.lts import LtsReplay
from sim.conformance.checks.order import Exclusive, RequiresOrder
from sim.conformance.checks.recovery import Recovery
from sim.conformance.checks.write_approval import WriteApproval


class Invocations:
    """The invocations the loop tracks: ``hist`` (invocation → its events, the first and
    the latest :data:`~sim.conformance.checks.base.HISTORY_CAP`, kept while ``history``),
    ``by_inst`` (instance → the invocations it opened) and ``live`` (the open invocations,
    when no history is kept)."""

    __slots__ = ("by_inst", "enders", "ex", "hist", "history", "live", "lts", "rec", "ro", "wa")

    def __init__(
        self,
        fused: dict[type, Any],
        enders: Sequence[Any],
        hist: dict[Any, list[bytes]],
        history: bool,
    ) -> None:
        self.wa: WriteApproval | None = fused.get(WriteApproval)
        self.ro: RequiresOrder | None = fused.get(RequiresOrder)
        self.ex: Exclusive | None = fused.get(Exclusive)
        self.rec: Recovery | None = fused.get(Recovery)
        self.lts: LtsReplay | None = fused.get(LtsReplay)
        self.enders = tuple(enders)
        self.hist = hist
        self.by_inst: dict[InstanceKey, list[Any]] = {}
        self.live: set[Any] = set()
        self.history = history

    def remember(self, ev: Any, raw: bytes, opening: bool) -> None:
        """Keep protocol event ``ev`` (line ``raw``) in its invocation's history: a new
        one, the invocation counted as its instance's, when ``opening`` or when none is
        kept; else appended (a full history keeps its first event and its latest)."""
        inv = ev.inv
        past = self.hist.get(inv)
        if past is None or opening:
            self.hist[inv] = [raw]
            key = (ev.wf, ev.inst)
            opened = self.by_inst.get(key)
            if opened is None:
                self.by_inst[key] = [inv]
            else:
                opened.append(inv)
        else:
            if len(past) >= HISTORY_CAP:
                del past[1 : HISTORY_CAP // 2]
            past.append(raw)

    def end(self, key: InstanceKey, invs: list[Any]) -> None:
        """What the loop does at the ``wf_end`` of an instance it tracks, given the
        invocations the instance opened: each fused check drops the instance's state
        (those that have any), then the other consumers' ``end_instance`` run in their
        order, then the invocations' histories (or their open marks) are dropped."""
        wa, ro, ex, rec, lts = self.wa, self.ro, self.ex, self.rec, self.lts
        if wa is not None and wa.approved:
            wa.end_instance(key, invs)
        if ro is not None and ro.inst:
            ro.inst.pop(key, None)
        if ex is not None and ex.inst:
            ex.inst.pop(key, None)
        if rec is not None and (rec.pending or rec.retries or rec.fallbacks):
            rec.end_instance(key, invs)
        if lts is not None and lts.state:
            lts.end_instance(key, invs)
        for end in self.enders:
            end(key, invs)
        if self.history:
            hist = self.hist
            for inv in invs:
                hist.pop(inv, None)
        else:
            self.live.difference_update(invs)
