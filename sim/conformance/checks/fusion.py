"""Which consumers the pass's loop fuses, which labels take a branch of their own, and
what it does when a workflow instance ends (:mod:`~sim.conformance.checks.loop`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.conformance.checks.base import (
    HISTORY_CAP,
    OPENING,
    TERMINAL,
    Check,
    Consumer,
    Handler,
    InstanceKey,
)
from sim.conformance.checks.conservation import Conservation
from sim.conformance.checks.lts import LtsReplay
from sim.conformance.checks.order import Exclusive, RequiresOrder
from sim.conformance.checks.recovery import Recovery
from sim.conformance.checks.route_validity import RouteValidity
from sim.conformance.checks.write_approval import WriteApproval
from sim.conformance.events import LABEL_IDS, PROTOCOL_LABELS

#: The labels the loop handles for each fused check (its ``handlers()`` must name exactly
#: these, or none: else the check is not fused, its handlers are called).
FUSED: dict[type[Check], frozenset[str]] = {
    WriteApproval: frozenset(("approve", "execute")),
    RequiresOrder: frozenset(("call", "invoke", "result", "execute")),
    Exclusive: frozenset(("execute",)),
    Recovery: PROTOCOL_LABELS,
    LtsReplay: PROTOCOL_LABELS,
    Conservation: frozenset(("send", "deliver", "drop")),
    RouteValidity: frozenset(
        ("hop", "translate", "send", "deliver", "node_down", "node_up", "link_down", "link_up")
    ),
}
#: Labels the loop writes out (the others go to their handlers, fused checks' too).
WRITTEN = frozenset(("hop", "send", "deliver", "drop", "wf_end")) | PROTOCOL_LABELS
OUTAGES = frozenset(("node_down", "node_up", "link_down", "link_up"))
IS_PROTOCOL = [lab in PROTOCOL_LABELS for lab in LABEL_IDS]
IS_TERMINAL = [lab in TERMINAL for lab in LABEL_IDS]
IS_OPENING = [lab in OPENING for lab in LABEL_IDS]
#: the labels whose handlers may bring a node or link down or up, or start or end the
#: wait of an error for its strategy (the labels' own branches are then chosen again)
MAY_FLIP = [lab in PROTOCOL_LABELS or lab in OUTAGES or lab == "wf_end" for lab in LABEL_IDS]
#: the labels of a message's life that ``conservation`` reads
IS_MESSAGE = [lab in FUSED[Conservation] for lab in LABEL_IDS]


#: What a label's own branch compares the label with when the branch is off (no label
#: is this object).
OFF: Any = object()
#: What a missing history is read as in the loop: a full one (not appended to there).
FULL: list[bytes] = [b""] * HISTORY_CAP
#: The labels with a branch of their own, in the loop's order, each with the fused
#: check its branch needs ("": none) and when it is on: ``quiet`` (every node and link
#: up), ``idle`` (no error awaiting its strategy) or always ("").
OWN: tuple[tuple[str, str, str], ...] = (
    ("hop", "route_validity", "quiet"),
    ("send", "conservation", "quiet"),
    ("deliver", "conservation", "quiet"),
    ("call", "lts", "idle"),
    ("validate", "lts", "idle"),
    ("execute", "lts", "idle"),
    ("result", "lts", "idle"),
    ("approve", "lts", "idle"),
    ("wf_start", "", ""),
    ("wf_end", "lts", "idle"),
)


class Branches:
    """Which labels take their own branch of the loop (:data:`OWN`): a label no consumer
    but the fused checks reads, whose branch's check is fused (the other checks of the
    label fused too, or absent), while its condition holds."""

    __slots__ = ("own", "when")

    def __init__(self, calls: Sequence[Sequence[Handler]], fused: dict[type, Any]) -> None:
        names = {c.name for c in fused.values()}
        self.own = tuple(
            lab if (not need or need in names) and not calls[LABEL_IDS[lab]] else OFF
            for lab, need, _ in OWN
        )
        self.when = tuple(when for _, _, when in OWN)

    def labels(self, quiet: bool, idle: bool) -> tuple[Any, ...]:
        """The label each branch takes (:data:`OFF` for none), in the loop's order."""
        on = {"quiet": quiet, "idle": idle, "": True}
        return tuple(
            lab if on[when] else OFF for lab, when in zip(self.own, self.when, strict=True)
        )


def _fusable(c: Consumer, seen: set[type]) -> bool:
    kind = type(c)
    if kind not in FUSED or kind in seen or not isinstance(c, Check):
        return False
    names = set(c.handlers())
    if names and names != FUSED[kind]:
        return False
    seen.add(kind)
    return True


def split(consumers: Sequence[Consumer], fuse: bool) -> tuple[dict[type, Any], list[Consumer]]:
    """The fused checks by class (when ``fuse``) and the other consumers, in order."""
    seen: set[type] = set()
    fused: dict[type, Any] = {}
    rest: list[Consumer] = []
    for c in consumers:
        if fuse and _fusable(c, seen):
            fused[type(c)] = c
        else:
            rest.append(c)
    return fused, rest


def ends_instances(c: Consumer) -> bool:
    """Whether ``c`` does anything at ``wf_end`` (a check with the default does not)."""
    return not (isinstance(c, Check) and type(c).end_instance is Check.end_instance)


class InstanceEnd:
    """What the loop does at the ``wf_end`` of an instance it tracks, given the
    invocations the instance opened: each fused check drops the instance's state (those
    that have any), then the other consumers' ``end_instance`` run in their order, then
    the invocations' histories (or their open marks) are dropped."""

    __slots__ = ("enders", "ex", "hist", "history", "live", "lts", "rec", "ro", "wa")

    def __init__(
        self,
        fused: dict[type, Any],
        enders: Sequence[Any],
        hist: dict[Any, list[bytes]],
        live: set[Any],
        history: bool,
    ) -> None:
        self.wa: WriteApproval | None = fused.get(WriteApproval)
        self.ro: RequiresOrder | None = fused.get(RequiresOrder)
        self.ex: Exclusive | None = fused.get(Exclusive)
        self.rec: Recovery | None = fused.get(Recovery)
        self.lts: LtsReplay | None = fused.get(LtsReplay)
        self.enders = tuple(enders)
        self.hist = hist
        self.live = live
        self.history = history

    def end(self, key: InstanceKey, invs: list[Any]) -> None:
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
