"""Which consumers the pass's loop fuses and which labels take a branch of their own
(:mod:`~sim.conformance.checks.loop`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sim.conformance.checks.base import OPENING, TERMINAL, Check, Consumer, Handler
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
    Conservation: frozenset(("send", "hop", "deliver", "drop")),
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


#: The labels counted in their own branches, in the order of the loop's counters (the
#: hops are the events no other count has).
OWN_COUNTED = ("send", "deliver", "call", "validate", "execute", "result", "approve",
               "wf_start", "wf_end")  # fmt: skip
#: What a label's own branch compares the label with when the branch is off (no label
#: is this object).
OFF: Any = object()
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


class State(NamedTuple):
    """The fused checks (``None``: not fused, or nothing to do) and their state the loop
    reads and mutates in place (the checks' handlers never rebind it; an empty stand-in
    for a check not fused), in the order the loop unpacks them."""

    wa: WriteApproval | None
    ro: RequiresOrder | None
    ex: Exclusive | None
    rec: Recovery | None
    lts: LtsReplay | None
    cons: Conservation | None
    rv: RouteValidity | None
    wwrite: frozenset[Any]
    wapproved: set[Any]
    roinst: dict[Any, Any]
    rrequires: dict[Any, Any]
    rtargets: frozenset[Any]
    xpartners: dict[Any, Any]
    xinst: dict[Any, Any]
    rpending: dict[Any, Any]
    rretries: dict[Any, Any]
    rfallbacks: dict[Any, Any]
    lstate: dict[Any, Any]
    lcall: dict[Any, Any]
    linvoke: dict[Any, Any]
    copen: dict[Any, bytes]
    #: message in flight → the agent it is at (``copen``'s keys)
    cat: dict[Any, Any]
    rvalid: frozenset[tuple[Any, Any, Any]]
    #: node → far node → the protocols of their link (``rvalid`` by its first two items)
    rlinked: dict[Any, dict[Any, frozenset[str]]]
    rdown: set[Any]
    rlinks: set[Any]
    #: the send paths ``route_validity`` found valid
    rpaths: set[tuple[str, ...]]

    @classmethod
    def of(cls, fused: dict[type, Any]) -> State:
        wa: WriteApproval | None = fused.get(WriteApproval)
        ro: RequiresOrder | None = fused.get(RequiresOrder)
        ex: Exclusive | None = fused.get(Exclusive)
        rec: Recovery | None = fused.get(Recovery)
        lts: LtsReplay | None = fused.get(LtsReplay)
        rv: RouteValidity | None = fused.get(RouteValidity)
        if ro is not None and not ro.requires:
            ro = None  # nothing is required: the check has nothing to do
        if ex is not None and not ex.partners:
            ex = None
        linked: dict[Any, dict[Any, frozenset[str]]] = {}
        for (a, b), protos in rv.links.items() if rv else ():
            linked.setdefault(a, {})[b] = protos
        cons: Conservation | None = fused.get(Conservation)
        return cls(
            wa, ro, ex, rec, lts, cons, rv,
            wa.write if wa else frozenset(), wa.approved if wa else set(),
            ro.inst if ro else {}, ro.requires if ro else {}, ro.targets if ro else frozenset(),
            ex.partners if ex else {}, ex.inst if ex else {},
            rec.pending if rec else {}, rec.retries if rec else {},
            rec.fallbacks if rec else {},
            lts.state if lts else {}, lts.opened["call"] if lts else {},
            lts.opened["invoke"] if lts else {},
            cons.open if cons else {}, cons.at if cons else {},
            rv.valid if rv else frozenset(), linked,
            rv.down if rv else set(), rv.down_links if rv else set(),
            rv.paths if rv else set(),
        )  # fmt: skip
