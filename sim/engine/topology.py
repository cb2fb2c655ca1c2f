"""The run-time topology: which agents and links are up, and the hops each link carried.

Inputs: the protocol graph's agents and links (static). State: each :class:`Node` and
:class:`LinkState` counts the outages covering it now (``down`` > 0 means down; outages
may overlap); a node's ``epoch`` is bumped each time it goes down, so work started
before (an execution, a translation) can tell it was lost. Outputs: ``hops_by_link``
for the metrics. Timing: none of its own; :mod:`sim.engine.failures` changes the
state at outage times, the transport reads it at every hop.
"""

from __future__ import annotations

from typing import Any

from sim.engine.trace import js
from sim.mesh.graph import ProtocolGraph


class Node:
    """Run-time state of an agent: ``down`` counts the outages covering it now."""

    __slots__ = ("down", "epoch", "id", "j", "server", "speaks", "translation_delay", "type")

    def __init__(self, agent_id: str, type_: str, speaks: frozenset[str], delay: float | None):
        self.id = agent_id
        self.j = js(agent_id)
        self.type = type_
        self.speaks = speaks
        self.translation_delay = delay
        self.down = 0
        self.epoch = 0  # bumped when the node goes down: work started before is lost
        self.server: Any = None  # the tool server at this node, if any


class LinkState:
    """Run-time state of a link: ``down`` counts the outages covering it now; ``hops``
    counts the messages that crossed it (either way, every protocol)."""

    __slots__ = ("a", "b", "down", "hops", "j", "jitter", "latency")

    def __init__(self, a: str, b: str, latency: dict[str, float], jitter: float) -> None:
        self.a = a
        self.b = b
        self.latency = latency
        self.jitter = jitter
        self.down = 0
        self.hops = 0
        self.j = js([a, b])


class Topology:
    """The nodes and links of one replication, and the tools each agent hosts."""

    __slots__ = ("graph", "hosted", "links", "nodes")

    def __init__(self, graph: ProtocolGraph) -> None:
        self.graph = graph
        self.nodes: dict[str, Node] = {
            a.id: Node(a.id, a.type, a.speaks, a.translation_delay) for a in graph.agents
        }
        self.links: dict[frozenset[str], LinkState] = {
            link.ends: LinkState(link.a, link.b, dict(link.latency), link.jitter)
            for link in graph.links
        }
        self.hosted: dict[str, tuple[str, ...]] = {
            a.id: tuple(a.tools) for a in graph.agents if a.tools
        }

    def link(self, a: str, b: str) -> LinkState:
        """The link between ``a`` and ``b``."""
        return self.links[frozenset((a, b))]

    def hops_by_link(self) -> dict[str, int]:
        """Hops per link as ``{"a|b": n}`` (a < b, links crossed at least once, sorted)."""
        used = {"|".join(sorted((ls.a, ls.b))): ls.hops for ls in self.links.values() if ls.hops}
        return dict(sorted(used.items()))
