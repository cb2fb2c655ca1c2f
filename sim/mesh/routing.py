"""The exact router and its cost hooks: the base of every router (SPEC §3, §12).

The exact routers search the *state space* (node, protocol) of
:mod:`sim.mesh.statespace`: a link edge (u, p) → (v, p) costs w_e(p) and a translation
edge (v, p) → (v, q) the cheapest chain τ at v, unless the router's cost hooks
(``edge_cost``, ``translation_cost``) reprice or hide them. Costs are non-negative,
so Dijkstra on this graph is exact, and a route may pass an agent twice (e.g. to
translate at a cheaper gateway next door). The state graph is compiled once per
topology version and router (its hooks are part of it) into a CSR matrix and searched
with SciPy's C implementation. A route is walked on the reverse tree of its target
set (:mod:`sim.mesh.reverse`: one search per target agent or tool-host set, shared by
every caller), and taken from the forward tree of its source only on a tie, so the
answer is the forward search's bit for bit. Reverse trees are cached per (targets,
down-set), forward trees per (sources, down-set) and routes per (source, target,
protocols, down-set). Any topology change (the graph's ``version``) clears them all.

A router also owns its run-time policy, which the engine asks and never infers from
its name: ``static`` (ignore failures, or suspect and reroute), :meth:`Router.suspects`
(what a timeout makes it suspect) and :meth:`Router.serve` (how a tool or capability
resolves to a routed target).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

from scipy.sparse.csgraph import dijkstra as csgraph_dijkstra

from sim.mesh.atlas import Atlas, atlas_of
from sim.mesh.discovery import cheapest_service
from sim.mesh.errors import NoRoute
from sim.mesh.graph import ProtocolGraph
from sim.mesh.reverse import Sink, Walker
from sim.mesh.route import NO_DOWN, DownSet, Route, Translation, route_cost
from sim.mesh.statespace import LRU, StateSpace, Tree

__all__ = [
    "NO_DOWN",
    "DijkstraRouter",
    "DownSet",
    "ResilientRouter",
    "Route",
    "Router",
    "Translation",
    "route_cost",
]


class Router:
    """Base of every router: one graph, cached state space, trees and routes.

    ``route(source, target, source_protocol=, target_protocol=, down=)`` returns a
    :class:`Route` or raises :class:`NoRoute` with a sentence saying why. A subclass
    may take keyword options (a scenario's ``options:``) and must pass ``graph`` on.
    """

    #: The name routes carry; the registry sets it to the scenario's name of the router.
    name: str = "router"
    #: The plug-in's ``module:Class`` when it is one (the registry sets it), for messages.
    plugin: str | None = None
    #: Static routers compute on the full topology and ignore ``down``; their callers
    #: retry the same route. Dynamic ones suspect after a timeout and reroute.
    static: bool = True

    def __init__(self, graph: ProtocolGraph) -> None:
        self.graph = graph
        self._space: StateSpace | None = None
        self._trees: LRU[tuple[tuple[int, ...], DownSet], Tree] = LRU(8)
        self._sinks: LRU[tuple[tuple[int, ...], DownSet], Sink] = LRU(8)
        self._routes: LRU[tuple[str, str, str | None, str | None, DownSet], Route] = LRU(4096)
        self._asked_from: dict[tuple[int, ...], int] = {}
        self._asked_to: dict[tuple[int, ...], int] = {}

    # -- cost hooks (SPEC §12) --

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None:
        """Cost of the hop u → v over ``protocol`` (default: its latency, seconds);
        None hides the hop. Called once per hop and topology version."""
        return latency

    def translation_cost(
        self, node: str, from_protocol: str, to_protocol: str, tau: float
    ) -> float | None:
        """Cost of translating at ``node`` (default: τ, seconds-equivalent); None forbids
        it. Called once per (node, pair) the table allows, per topology version."""
        return tau

    def _hooked(self) -> bool:
        """Whether this router reprices the state space (a hook is overridden)."""
        cls = type(self)
        return cls.edge_cost is not Router.edge_cost or (
            cls.translation_cost is not Router.translation_cost
        )

    # -- run-time policy --

    def suspects(self, path: Sequence[str]) -> tuple[list[str], list[frozenset[str]]]:
        """What a timeout on a call routed along ``path`` makes a dynamic router suspect.

        The caller cannot tell which element failed: every node strictly between itself
        and the target, or, on a direct link, that link. Returns (nodes, links).
        """
        nodes = list(path[1:-1])
        links = [] if nodes else [frozenset(path[:2])]
        return nodes, links

    def serve(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> Route:
        """The route from ``source`` to an agent that serves ``need`` (a tool name or a
        capability): the cheapest of its hosts by this router's routes, ties in graph
        order; a capability goes to the best-matching agent. :class:`NoRoute` if none."""
        return cheapest_service(self, source, need, source_protocol=source_protocol, down=down)

    # -- caches --

    def space(self) -> StateSpace:
        """The state space of the current topology (rebuilt after a change); without
        cost hooks, the graph's shared :class:`~sim.mesh.atlas.Atlas`."""
        if self._space is None or self._space.version != self.graph.version:
            atlas = atlas_of(self.graph) if not self._hooked() else None
            if atlas is None:  # a repriced space is this router's own
                atlas = Atlas(StateSpace(self.graph, self))
            self._space, self._trees, self._sinks = atlas.space, atlas.trees, atlas.sinks
            self._asked_from, self._asked_to = atlas.asked_from, atlas.asked_to
            self._routes.clear()
        return self._space

    def _tree(self, sources: tuple[int, ...], down: DownSet) -> Tree:
        space = self.space()
        key = (sources, down)
        hit = self._trees.get_or(key)
        if hit is not None:
            return hit
        dist, pred, _ = csgraph_dijkstra(
            space.matrix(down),
            directed=True,
            indices=list(sources),
            return_predecessors=True,
            min_only=True,
        )
        tree = Tree(dist, pred)
        self._trees.put(key, tree)
        return tree

    def _sink(self, targets: tuple[int, ...], down: DownSet) -> Sink:
        """The reverse tree towards ``targets`` (states) around ``down`` (cached)."""
        space = self.space()
        key = (targets, down)
        hit = self._sinks.get_or(key)
        if hit is None:
            hit = Sink(space.reverse(down), targets)
            self._sinks.put(key, hit)
        return hit

    def _by_sink(self, sources: tuple[int, ...], targets: tuple[int, ...], down: DownSet) -> bool:
        """Whether to route by the target's reverse tree rather than the source's
        forward tree: a tree already built wins; otherwise the side asked for more
        often so far (targets shared by many callers: reverse; callers asking for many
        targets: forward). Either answer gives the same route, bit for bit."""
        if (targets, down) in self._sinks:
            return True
        if (sources, down) in self._trees:
            return False
        to = self._asked_to[targets] = self._asked_to.get(targets, 0) + 1
        by = self._asked_from[sources] = self._asked_from.get(sources, 0) + 1
        return to > by

    def _walk(
        self, sources: tuple[int, ...], targets: tuple[int, ...], down: DownSet
    ) -> tuple[list[int], float] | None:
        """The forward search's states and cost from ``sources`` to ``targets``, by a
        walk on the reverse tree (None: a tie or no path; ask the forward search)."""
        space = self.space()
        return Walker(space.matrix(down)).route(self._sink(targets, down), sources)

    def _serve_walk(
        self, source: str, hosts: Sequence[str], source_protocol: str | None, down: DownSet
    ) -> Route | None:
        """The route :func:`~sim.mesh.discovery.cheapest_service` would pick among
        ``hosts`` (the cheapest, ties in graph order), by one walk on the reverse tree of
        all their states; None when that walk cannot tell (a tie, no path, a router with
        routes of its own): the caller then asks host by host."""
        if not self._exact():
            return None
        if self.static:
            down = NO_DOWN
        space = self.space()
        agent = self.graph.agent(source)
        if source_protocol is not None:
            self.graph.check_protocol(source_protocol)
        live = [h for h in hosts if h not in down.nodes]
        if source in down.nodes or not live:
            return None
        k, s = space.k, space.index[source]
        if source_protocol is None:
            sources = tuple(s * k + j for j in space.speaks[s])
        elif source_protocol in agent.protocols:
            sources = (s * k + space.pindex[source_protocol],)
        else:
            return None
        targets = tuple(
            sorted(space.index[h] * k + j for h in live for j in space.speaks[space.index[h]])
        )
        if not self._by_sink(sources, targets, down):
            return None
        walked = self._walk(sources, targets, down)
        if walked is None:
            return None
        states, cost = walked
        key = (source, space.ids[states[-1] // k], source_protocol, None, down)
        hit = self._routes.get_or(key)
        if hit is None:
            hit = self._route_of(states, cost, source_protocol)
            self._routes.put(key, hit)
        return hit

    def _host_costs(
        self, source: str, hosts: Sequence[str], source_protocol: str | None, down: DownSet
    ) -> list[float] | None:
        """The cost of the route from ``source`` to each of ``hosts`` (inf: none), read
        off the source's forward tree when it is built: the distances :meth:`_shortest`
        takes a route's cost from (a walk on a reverse tree sums the same float). None
        when the tree is not built or the router has routes of its own (ask
        :meth:`route` host by host). One search answers every host of a need."""
        if not self._exact():
            return None
        if self.static:
            down = NO_DOWN
        space = self.space()
        k, s = space.k, space.index.get(source)
        if s is None or source in down.nodes:
            return None
        if source_protocol is None:
            sources = tuple(s * k + j for j in space.speaks[s])
        elif source_protocol in self.graph.agent(source).protocols:
            sources = (s * k + space.pindex[source_protocol],)
        else:
            return None
        tree = self._trees.get_or((sources, down))
        if tree is None:
            return None
        at = tree.dist.item  # a Python float per state (no NumPy scalar)
        index, speaks, gone = space.index, space.speaks, down.nodes
        return [
            math.inf
            if h in gone
            else min((at(index[h] * k + j) for j in speaks[index[h]]), default=math.inf)
            for h in hosts
        ]

    def _exact(self) -> bool:
        """Whether this router's routes are :meth:`_shortest`'s (no override of its own)."""
        cls = type(self)
        return (
            cls.route is Router.route
            and cls._compute is Router._compute
            and cls._shortest is Router._shortest
        )

    # -- checks and explanations --

    def _check(self, source: str, target: str, *protocols: str | None) -> None:
        self.graph.agent(source)
        self.graph.agent(target)
        for protocol in protocols:
            if protocol is not None:
                self.graph.check_protocol(protocol)

    def _no_route(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> NoRoute:
        """The :class:`NoRoute` to raise, explained (by :meth:`_explain`) when read."""
        return NoRoute(
            lambda: self._explain(source, target, source_protocol, target_protocol, down)
        )

    def _explain(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
        protocol_only: str | None = None,
    ) -> str:
        """A sentence saying why no route exists."""
        if source in down.nodes:
            return f"the source '{source}' is down"
        if target in down.nodes:
            return f"the target '{target}' is down"
        around = f" around the down nodes and links ({down.describe()})" if down else ""
        for end, protocol in ((source, source_protocol), (target, target_protocol)):
            if protocol is not None and protocol not in self.graph.agent(end).protocols:
                speaks = ", ".join(self.graph.agent(end).protocols)
                return f"'{end}' does not speak {protocol} (it speaks {speaks})"
        if not self._connected(source, target, down, None):
            return f"no chain of links joins '{source}' to '{target}'{around}"
        if protocol_only is not None and not self._connected(source, target, down, protocol_only):
            return (
                f"no chain of {protocol_only} links joins '{source}' to '{target}'{around} "
                "(bfs does not translate; try --router dijkstra)"
            )
        if self._hooked():  # the cost hooks' doing? (they overflow, or hide every route)
            from sim.mesh.unreachable import priced_away

            priced = priced_away(self, source, target, source_protocol, target_protocol, down)
            if priced is not None:
                return priced
        wanted = ""
        if source_protocol is not None:
            wanted += f" starting in {source_protocol}"
        if target_protocol is not None:
            wanted += f" arriving in {target_protocol}"
        return (
            f"'{source}' and '{target}' are linked{around}, but no sequence of protocols "
            f"and allowed translations joins them{wanted}: no protocol path"
        )

    def _connected(self, source: str, target: str, down: DownSet, protocol: str | None) -> bool:
        seen = {source}
        queue = deque([source])
        while queue:
            node = queue.popleft()
            if node == target:
                return True
            for link in self.graph.incident(node):
                other = link.other(node)
                if other in seen or other in down.nodes or link.ends in down.links:
                    continue
                if protocol is not None and protocol not in link.latency:
                    continue
                seen.add(other)
                queue.append(other)
        return False

    # -- the exact search --

    def _shortest(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
        towards: bool = True,
    ) -> Route:
        """The exact route; by the reverse tree of the target (``towards``: many callers
        per target) unless it ties, else by the forward tree of the source (many
        targets per caller: a semantic ranking over every agent)."""
        space = self.space()
        k = space.k
        s, d = space.index[source], space.index[target]
        if source in down.nodes or target in down.nodes:
            raise self._no_route(source, target, source_protocol, target_protocol, down)
        if source_protocol is not None:
            if source_protocol not in self.graph.agent(source).protocols:
                raise self._no_route(source, target, source_protocol, None, down)
            sources: tuple[int, ...] = (s * k + space.pindex[source_protocol],)
        else:
            sources = tuple(s * k + j for j in space.speaks[s])
        if target_protocol is not None:
            targets: tuple[int, ...] = (d * k + space.pindex[target_protocol],)
        else:
            targets = tuple(d * k + j for j in space.speaks[d])
        if towards and self._by_sink(sources, targets, down):
            walked = self._walk(sources, targets, down)
            if walked is not None:
                return self._route_of(walked[0], walked[1], source_protocol)
            dist = self._sink(targets, down).dist
            if not any(math.isfinite(dist[state]) for state in sources):
                raise self._no_route(source, target, source_protocol, target_protocol, down)
        tree = self._tree(sources, down)
        best = min(targets, key=lambda state: (tree.dist[state], state))
        if not math.isfinite(tree.dist[best]):
            raise self._no_route(source, target, source_protocol, target_protocol, down)
        states = [best]
        while states[-1] not in sources:
            previous = int(tree.pred[states[-1]])
            if previous < 0:
                break
            states.append(previous)
        states.reverse()
        if target_protocol is None:
            # With no protocol required at the target, a zero-cost translation there ties
            # with arriving as is; never end on such a pointless translation.
            while len(states) > 1 and states[-2] // k == d and states[-2] in targets:
                states.pop()
        return self._route_of(states, float(tree.dist[states[-1]]), source_protocol)

    def _route_of(self, states: Sequence[int], cost: float, source_protocol: str | None) -> Route:
        space = self.space()
        k = space.k
        path = [space.ids[states[0] // k]]
        protocols: list[str] = []
        translations: list[Translation] = []
        current = space.protocols[states[0] % k]
        if source_protocol is not None and source_protocol != current:
            translations.append(Translation(path[0], source_protocol, current, 0))
        for state in states[1:]:
            node, protocol = space.ids[state // k], space.protocols[state % k]
            if node == path[-1]:
                translations.append(Translation(node, current, protocol, len(path) - 1))
            else:
                path.append(node)
                protocols.append(protocol)
            current = protocol
        return Route(self.name, tuple(path), tuple(protocols), tuple(translations), cost)

    # -- public --

    def route(
        self,
        source: str,
        target: str,
        *,
        source_protocol: str | None = None,
        target_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> Route:
        """The route from ``source`` to ``target``; :class:`NoRoute` if none exists."""
        self._check(source, target, source_protocol, target_protocol)
        self.space()
        if self.static:
            down = NO_DOWN
        key = (source, target, source_protocol, target_protocol, down)
        hit = self._routes.get_or(key)
        if hit is None:
            hit = self._compute(source, target, source_protocol, target_protocol, down)
            self._routes.put(key, hit)
        return hit

    def _compute(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> Route:
        return self._shortest(source, target, source_protocol, target_protocol, down)


class DijkstraRouter(Router):
    """Exact minimum-cost route over (node, protocol) states on the full topology.

    Static: ignores failures; its callers retry the same route.
    """

    name = "dijkstra"


class ResilientRouter(Router):
    """The dijkstra route on the topology known to be up (``down`` nodes and links removed).

    At run time the engine passes its suspected nodes and links as ``down``.
    """

    name = "resilient"
    static = False
