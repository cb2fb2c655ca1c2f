"""The run-time topology: which agents and links are up, and the hops each link carried.

Inputs: the protocol graph's agents and links (static). State: each :class:`Node` and
:class:`LinkState` counts the outages covering it now (``down`` > 0 means down; outages
may overlap); a node's ``epoch`` is bumped each time it goes down, so work started
before (an execution, a translation) can tell it was lost. Outputs: ``hops_by_link``
for the metrics. Timing: none of its own; :mod:`sim.engine.failures` changes the
state at outage times, the transport reads it where a stretch ends (its ``fallible``
marks: :mod:`sim.engine.paths`).

Building one encodes every agent id and link for the trace (the costly part on a big
mesh); :meth:`Topology.fresh` gives another replication its own state (all up, no hop
counted, no server) sharing those encodings, so a worker builds them once per graph.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from sim.engine.sampling import sampler_of
from sim.engine.trace import js
from sim.mesh.graph import ProtocolGraph
from sim.scenario.model.distribution import Law


class Node:
    """Run-time state of an agent: ``down`` counts the outages covering it now;
    ``fallible`` is True when an outage of the scenario can cover it (else it is never
    down, and messages cross it without an event of their own)."""

    __slots__ = (
        "down",
        "epoch",
        "fallible",
        "id",
        "j",
        "server",
        "speaks",
        "translation_delay",
        "type",
    )

    def __init__(
        self,
        agent_id: str,
        type_: str,
        speaks: frozenset[str],
        delay: float | None,
        j: str | None = None,
    ) -> None:
        self.id = agent_id
        self.j = js(agent_id) if j is None else j  # the id as the trace writes it
        self.type = type_
        self.speaks = speaks
        self.translation_delay = delay
        self.down = 0
        self.fallible = False
        self.epoch = 0  # bumped when the node goes down: work started before is lost
        self.server: Any = None  # the tool server at this node, if any


class LinkState:
    """Run-time state of a link: ``down`` counts the outages covering it now; ``hops``
    counts the messages that crossed it (either way, every protocol); ``fallible`` as
    a node's. ``faults`` are the message faults that strike its crossings (None: none;
    :func:`sim.engine.faults.attach`). ``laws`` are the protocols whose crossings are
    drawn from a distribution; ``draws`` their samplers on this replication's
    ``latency`` stream (:meth:`Topology.draw_latencies`)."""

    __slots__ = (
        "a",
        "b",
        "down",
        "draws",
        "fallible",
        "faults",
        "hops",
        "j",
        "jitter",
        "latency",
        "laws",
    )

    def __init__(
        self,
        a: str,
        b: str,
        latency: dict[str, float],
        jitter: float,
        j: str | None = None,
        laws: Mapping[str, Law] | None = None,
    ) -> None:
        self.a = a
        self.b = b
        self.latency = latency
        self.jitter = jitter
        self.laws: Mapping[str, Law] = laws if laws is not None else {}
        self.draws: dict[str, Callable[[], float]] = {}
        self.down = 0
        self.fallible = False
        self.faults: tuple[Any, ...] | None = None
        self.hops = 0
        self.j = js([a, b]) if j is None else j


def _pair(nodes: dict[str, Node], a: str, b: str) -> str | None:
    """``js([a, b])`` from the nodes' encoded ids (None when an end is not a node)."""
    na, nb = nodes.get(a), nodes.get(b)
    return None if na is None or nb is None else f"[{na.j},{nb.j}]"


class Topology:
    """The nodes and links of one replication, and the tools each agent hosts."""

    __slots__ = ("graph", "hosted", "links", "nodes")

    def __init__(self, graph: ProtocolGraph, like: Topology | None = None) -> None:
        """The topology of ``graph``; ``like``, one of the same graph whose encoded ids
        and static tables it shares (:meth:`fresh`)."""
        self.graph = graph
        if like is not None:
            self.nodes: dict[str, Node] = {
                k: Node(n.id, n.type, n.speaks, n.translation_delay, n.j)
                for k, n in like.nodes.items()
            }
            self.links: dict[frozenset[str], LinkState] = {
                k: LinkState(ls.a, ls.b, ls.latency, ls.jitter, ls.j, ls.laws)
                for k, ls in like.links.items()
            }
            self.hosted: dict[str, tuple[str, ...]] = like.hosted
            return
        self.nodes = {a.id: Node(a.id, a.type, a.speaks, a.translation_delay) for a in graph.agents}
        nodes = self.nodes
        self.links = {  # js([a, b]) from the ends' js
            link.ends: LinkState(
                link.a,
                link.b,
                dict(link.latency),
                link.jitter,
                _pair(nodes, link.a, link.b),
                link.laws,
            )
            for link in graph.links
        }
        self.hosted = {a.id: tuple(a.tools) for a in graph.agents if a.tools}

    def fresh(self) -> Topology:
        """A topology of the same graph in the initial state (every node and link up, no
        hop counted, no server), sharing this one's encoded ids and static tables."""
        return Topology(self.graph, self)

    def draw_latencies(self, rng: random.Random) -> None:
        """Bind every distribution latency to ``rng`` (the replication's ``latency``
        stream), before any path is compiled: each crossing draws from it."""
        for ls in self.links.values():
            if ls.laws:
                ls.draws = {p: sampler_of(law, rng) for p, law in ls.laws.items()}

    def link(self, a: str, b: str) -> LinkState:
        """The link between ``a`` and ``b``."""
        return self.links[frozenset((a, b))]

    def hops_by_link(self) -> dict[str, int]:
        """Hops per link as ``{"a|b": n}`` (a < b, links crossed at least once, sorted)."""
        used = {"|".join(sorted((ls.a, ls.b))): ls.hops for ls in self.links.values() if ls.hops}
        return dict(sorted(used.items()))
