"""Outages (scheduled and random) and the callers' failure detector.

The outages are faults (:mod:`sim.engine.faults`): each schedules its strikes on
:class:`Failures`, which takes a node or link down and up and tells the agents.

Scheduled outages come from ``failures: [{node|link, at, for}]``; random ones from
``{random: {nodes, links, mtbf, mttr}}``: each listed element alternates exponential
up times (mean ``mtbf``) and down times (mean ``mttr``), drawn from the ``failures``
stream, starting up at t = 0. Outages may overlap: an element is down while at least
one outage covers it; ``node_down``/``link_down`` is traced when it goes down and
``node_up``/``link_up`` when the last outage ends.

When a node goes down, its ``epoch`` is bumped: a tool server loses its queue and the
executions in progress (each traced as a ``drop`` with ``detail.lost``), and an
initiator loses its running workflow instances (they end ``failed``).

The failure detector (resilient and semantic routers only) is per caller: a caller
whose attempt times out suspects, for ``routing.suspect_ttl`` seconds, the elements
of the route it used that it cannot rule out (see :meth:`Suspicion.suspect`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import simpy

from sim.engine.clock import Later
from sim.engine.trace import js
from sim.mesh.routing import NO_DOWN, DownSet

if TYPE_CHECKING:
    from sim.engine.faults import Fault
    from sim.engine.recorder import Recorder
    from sim.engine.topology import LinkState, Node, Topology


class Failures:
    """Schedules the scenario's outages and applies them to the topology.

    Inputs: the run's faults (``schedule``: each starts its outages, with ``rng`` the
    ``failures`` stream). Outputs: the topology's
    ``down`` counts and epochs, lines and counts to the recorder, and
    ``on_node_down(node)`` callbacks (the server loses its work, the workflows their
    instances). Timing: a scheduled outage starts at ``at`` and lasts ``for``; a random
    element is up for Exp(mean ``mtbf``) then down for Exp(mean ``mttr``), alternately,
    from t = 0 until the run ends (``active`` False)."""

    def __init__(
        self,
        env: simpy.Environment,
        later: Later,
        recorder: Recorder,
        rng: random.Random,
        topology: Topology,
    ) -> None:
        self.env = env
        self.later = later
        self.rec = recorder
        self.rng = rng
        self.topology = topology
        self.on_node_down: list[Callable[[Node], None]] = []
        self.active = True  # random failure processes stop when the run ends

    def schedule(self, faults: Iterable[Fault]) -> None:
        """Each fault schedules its strikes (outages), in order: see
        :mod:`sim.engine.faults`."""
        for fault in faults:
            fault.start(self)

    def down(self, element: tuple[str, Any]) -> None:
        """One more outage covers ``element`` (which :func:`~sim.engine.faults.attach`
        marked: paths compiled without the mark let messages cross it without a look)."""
        kind, obj = element
        if not obj.fallible:
            name = obj.id if kind == "node" else f"{obj.a}|{obj.b}"
            raise ValueError(f"{kind} {name} goes down but was not marked fallible")
        obj.down += 1
        if obj.down != 1:
            return
        now = self.env.now
        if kind == "node":
            node: Node = obj
            node.epoch += 1
            self.rec.node_down(now, node.j)
            for callback in self.on_node_down:
                callback(node)
        else:
            link: LinkState = obj
            self.rec.link_down(now, js(link.a), link.j)

    def up(self, element: tuple[str, Any]) -> None:
        """One outage of ``element`` ends."""
        kind, obj = element
        obj.down -= 1
        if obj.down != 0:
            return
        now = self.env.now
        if kind == "node":
            self.rec.node_up(now, obj.j)
        else:
            self.rec.link_up(now, js(obj.a), obj.j)


class Suspicion:
    """One caller's failure detector: suspected nodes and links with expiry times."""

    __slots__ = ("_cache", "_cache_at", "links", "nodes", "ttl")

    def __init__(self, ttl: float) -> None:
        self.nodes: dict[str, float] = {}
        self.links: dict[frozenset[str], float] = {}
        self.ttl = ttl
        self._cache: DownSet = NO_DOWN
        self._cache_at = -1.0

    def suspect(self, now: float, nodes: Iterable[str], links: Iterable[frozenset[str]]) -> None:
        """Suspect ``nodes`` and ``links`` until ``now + ttl``."""
        until = now + self.ttl
        for n in nodes:
            self.nodes[n] = until
        for link in links:
            self.links[link] = until
        self._cache_at = -1.0

    def down(self, now: float) -> DownSet:
        """The current suspects as a :class:`DownSet` (expired ones forgotten)."""
        if now == self._cache_at:
            return self._cache
        if self.nodes or self.links:
            self.nodes = {n: u for n, u in self.nodes.items() if u > now}
            self.links = {k: u for k, u in self.links.items() if u > now}
        if not self.nodes and not self.links:
            down = NO_DOWN
        else:
            down = DownSet(frozenset(self.nodes), frozenset(self.links))
        self._cache = down
        self._cache_at = now
        return down
