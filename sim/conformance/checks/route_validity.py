"""``route_validity``: hops, translations and outages agree with the mesh."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sized
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler
from sim.conformance.truth import Truth

#: The most valid send paths remembered (a send over one of them is one set lookup; the
#: set starts again when full, so a trace of many distinct routes stays in bounded memory).
PATHS_KEPT = 1 << 16


class RouteValidity(Check):
    """Every hop leaves an up node over an up link in a protocol of that link; every
    translation happens at an up node between protocols it speaks (each step of a chain);
    nothing is sent or delivered at a down node; a send's ``path`` runs from its sender to
    its ``to`` over links of the scenario. Up/down state comes from the trace's
    ``node_down``/``node_up``/``link_down``/``link_up``."""

    name = "route_validity"
    labels: tuple[str, ...] = (
        "hop",
        "translate",
        "send",
        "deliver",
        "node_down",
        "node_up",
        "link_down",
        "link_up",
    )

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.links: dict[tuple[Any, Any], frozenset[str]] = {}
        for ends, protos in truth.links.items():
            a, b = sorted(ends) if len(ends) == 2 else (*ends, *ends)
            self.links[(a, b)] = self.links[(b, a)] = protos
        self.valid = frozenset((a, b, p) for (a, b), ps in self.links.items() for p in ps)
        self.speaks = truth.speaks
        self.down: set[Any] = set()
        self.down_links: set[tuple[Any, Any]] = set()
        #: paths of sends found over links of the scenario (at most PATHS_KEPT)
        self.paths: set[tuple[str, ...]] = set()

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "hop": self.on_hop,
            "translate": self.on_translate,
            "send": self.on_send,
            "deliver": self.on_at,
            "node_down": self.on_node_down,
            "node_up": self.on_node_up,
            "link_down": self.on_link_down,
            "link_up": self.on_link_up,
        }

    def gates(self) -> Mapping[str, Sized]:
        return {"deliver": self.down}  # on_at: nothing is down, nothing to report

    def on_hop(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        a = d.from_ if d.from_ is not None else ev.agent
        b = d.to
        p = d.proto if d.proto is not None else ev.proto
        try:
            if (a, b, p) in self.valid and not self.down and not self.down_links:
                return  # the common case: a valid hop while everything is up
            protos = self.links.get((a, b))
        except TypeError:  # unhashable values
            protos = None
        problem = ""
        if protos is None:
            problem = f"there is no link {a}–{b}"
        elif p not in protos:
            problem = f"link {a}–{b} does not carry {p} (it carries {', '.join(sorted(protos))})"
        elif a in self.down:
            problem = f"node {a} is down"
        elif (a, b) in self.down_links:
            problem = f"link {a}–{b} is down"
        if problem:
            self.violation(
                f"hop (seq {ev.seq}) of message {d.msg} from {a} to {b} in {p}: {problem}",
                [raw],
                ev.seq,
                ev.wf,
            )

    def on_translate(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        at = d.at if d.at is not None else ev.agent
        speaks = self.speaks.get(at) if isinstance(at, str) else None
        chain = d.chain if isinstance(d.chain, list) and d.chain else [d.from_proto, d.to_proto]
        problem = ""
        if speaks is None:
            problem = f"{at} is not an agent of the scenario"
        else:
            bad = [p for p in (d.from_proto, d.to_proto, *chain) if p not in speaks]
            if bad:
                problem = f"{at} does not speak {', '.join(sorted(map(str, set(bad))))}"
            elif self.down and at in self.down:
                problem = f"node {at} is down"
        if problem:
            self.violation(
                f"translate (seq {ev.seq}) {d.from_proto} → {d.to_proto} at {at}: {problem}",
                [raw],
                ev.seq,
                ev.wf,
            )

    def on_send(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        path = d.path
        # a path found valid before, from the sender to the destination: nothing to report
        if path and (tuple(path) not in self.paths or path[0] != ev.agent or path[-1] != d.to):
            self.on_path(ev, raw)
        if self.down:
            self.on_at(ev, raw)

    def on_path(self, ev: Any, raw: bytes) -> None:
        """The send's ``path`` (when it has one) starts at its sender, ends at its ``to``
        and crosses links of the scenario only."""
        d = ev.detail
        path = d.path
        if not path:
            return
        key = tuple(path)
        problem = ""
        if path[0] != ev.agent:
            problem = f"the path starts at {path[0]}, not at the sender {ev.agent}"
        elif d.to is not None and path[-1] != d.to:
            problem = f"the path ends at {path[-1]}, not at the destination {d.to}"
        elif key not in self.paths:
            gap = next((p for p in itertools.pairwise(path) if p not in self.links), None)
            if gap is not None:
                problem = f"there is no link {gap[0]}–{gap[1]}"
            else:
                if len(self.paths) >= PATHS_KEPT:
                    self.paths.clear()
                self.paths.add(key)
        if problem:
            self.violation(
                f"send (seq {ev.seq}) of message {d.msg} over {' → '.join(path)}: {problem}",
                [raw],
                ev.seq,
                ev.wf,
            )

    def on_at(self, ev: Any, raw: bytes) -> None:
        if self.down and ev.agent in self.down:
            self.violation(
                f"{ev.label} (seq {ev.seq}) at {ev.agent}, which is down", [raw], ev.seq, ev.wf
            )

    def on_node_down(self, ev: Any, raw: bytes) -> None:
        self.down.add(ev.agent)

    def on_node_up(self, ev: Any, raw: bytes) -> None:
        self.down.discard(ev.agent)

    def _link(self, ev: Any) -> tuple[Any, Any] | None:
        link = ev.detail.link
        if isinstance(link, list) and len(link) == 2:
            return (link[0], link[1])
        return None

    def on_link_down(self, ev: Any, raw: bytes) -> None:
        link = self._link(ev)
        if link is not None:
            self.down_links.add(link)
            self.down_links.add((link[1], link[0]))

    def on_link_up(self, ev: Any, raw: bytes) -> None:
        link = self._link(ev)
        if link is not None:
            self.down_links.discard(link)
            self.down_links.discard((link[1], link[0]))
