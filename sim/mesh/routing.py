"""Routes and the four routers of SPEC §3: dijkstra, bfs, resilient, semantic.

A route from s to d is a path π = (v0..vk) with protocols σ = (p0..pk-1), p_i ∈ Φ(v_i,
v_i+1), and translations where the protocol changes. Its cost (seconds-equivalent) is
Definition 12 of the Protocol Graph Model: Σ w_e(p_i) + Σ τ(p_i, p_i+1, v_i), plus
τ(p_s, p0, s) with a source protocol and τ(p_k-1, p_t, d) with a target protocol.

The exact routers search the *state space* (node, protocol): a link edge
(u, p) → (v, p) costs w_e(p); a translation edge (v, p) → (v, q) costs the cheapest
chain τ at v. Costs are non-negative, so Dijkstra on this graph is exact, and a
route may pass an agent twice (e.g. to translate at a cheaper gateway next door).
The state graph is compiled once per topology version into a CSR matrix and searched
with SciPy's C implementation; shortest-path trees are cached per (sources, down-set)
and routes per (source, target, protocols, down-set). Any topology change (the
graph's ``version``) clears both caches.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra as csgraph_dijkstra

from sim.mesh.errors import NoRoute
from sim.mesh.graph import ProtocolGraph
from sim.scenario.capabilities import similarity

K = TypeVar("K")
V = TypeVar("V")
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class Translation:
    """A protocol change at node ``at``, from ``source`` to ``target``."""

    at: str
    source: str
    target: str
    #: index in the route's path of the visit of ``at`` where it happens (-1: unknown)
    position: int = field(default=-1, compare=False)

    def to_json(self) -> dict[str, str]:
        """``{"at", "from", "to"}`` as SPEC §7 prints it."""
        return {"at": self.at, "from": self.source, "to": self.target}


@dataclass(frozen=True, slots=True)
class Route:
    """A route π with protocols σ, its translations and cost (seconds-equivalent)."""

    router: str
    path: tuple[str, ...]
    protocols: tuple[str, ...]
    translations: tuple[Translation, ...]
    cost: float

    @property
    def hops(self) -> int:
        """Number of links crossed."""
        return len(self.path) - 1

    @property
    def source(self) -> str:
        """v0."""
        return self.path[0]

    @property
    def target(self) -> str:
        """vk."""
        return self.path[-1]

    def describe(self) -> str:
        """``planner -MCP+-> gw2 [MCP+→MCP] -MCP-> tickets``."""
        out = ""
        for i, node in enumerate(self.path):
            if i:
                out += f" -{self.protocols[i - 1]}-> "
            out += node
            for t in self.translations:
                if t.position == i or (t.position < 0 and t.at == node):
                    out += f" [{t.source}→{t.target}]"
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``route --json`` object of SPEC §7."""
        return {
            "router": self.router,
            "from": self.source,
            "to": self.target,
            "path": list(self.path),
            "protocols": list(self.protocols),
            "translations": [t.to_json() for t in self.translations],
            "cost": self.cost,
            "hops": self.hops,
        }


@dataclass(frozen=True, slots=True)
class DownSet:
    """Nodes and links known to be down; links are unordered pairs of agent ids."""

    nodes: frozenset[str] = frozenset()
    links: frozenset[frozenset[str]] = frozenset()

    @classmethod
    def of(cls, nodes: Iterable[str] = (), links: Iterable[Iterable[str]] = ()) -> DownSet:
        """Build from any iterables."""
        return cls(frozenset(nodes), frozenset(frozenset(link) for link in links))

    def __bool__(self) -> bool:
        return bool(self.nodes or self.links)

    def describe(self) -> str:
        """``gw1, link a–b`` for messages."""
        parts = sorted(self.nodes) + sorted("–".join(sorted(link)) for link in self.links)
        return ", ".join(parts)


NO_DOWN = DownSet()


def route_cost(
    graph: ProtocolGraph,
    path: Sequence[str],
    protocols: Sequence[str],
    source_protocol: str | None = None,
    target_protocol: str | None = None,
) -> float:
    """Definition 12's cost of (π, σ): link latencies plus τ at each protocol change.

    Raises ``ValueError`` when the route is not valid (a protocol not on its link, a
    translation the node cannot make).
    """
    if len(protocols) != len(path) - 1:
        raise ValueError("a route has one protocol per hop")
    cost = 0.0
    previous = source_protocol
    for i, protocol in enumerate(protocols):
        link = graph.link(path[i], path[i + 1])
        if link is None or protocol not in link.latency:
            raise ValueError(f"no {protocol} link between '{path[i]}' and '{path[i + 1]}'")
        cost += _tau_at(graph, path[i], previous, protocol)
        cost += link.latency[protocol]
        previous = protocol
    if target_protocol is not None:
        cost += _tau_at(graph, path[-1], previous, target_protocol)
    return cost


def _tau_at(graph: ProtocolGraph, at: str, source: str | None, target: str) -> float:
    if source is None or source == target:
        return 0.0
    agent = graph.agent(at)
    tau = graph.table.tau(source, target, agent.speaks, agent.translation_delay)
    if tau is None:
        raise ValueError(f"'{at}' cannot translate {source} to {target}")
    return tau


# --- the compiled state space --------------------------------------------------------


class _LRU(OrderedDict[K, V]):
    """A dictionary that keeps its ``size`` most recently used entries."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get_or(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Store ``value``; drop the least recently used entries beyond ``size``."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class StateSpace:
    """The (node, protocol) state graph of one topology version, as CSR arrays.

    State ``i * k + j`` is "at agent i, in protocol j" (k = |P|). Edge arrays keep, for
    each edge, the node(s) and link it depends on, so a down-set masks edges without
    rebuilding the Python-side structures.
    """

    def __init__(self, graph: ProtocolGraph) -> None:
        self.version = graph.version
        self.ids: list[str] = [a.id for a in graph.agents]
        self.index: dict[str, int] = {a: i for i, a in enumerate(self.ids)}
        self.protocols: tuple[str, ...] = graph.protocols
        self.pindex: dict[str, int] = {p: j for j, p in enumerate(self.protocols)}
        k = self.k = len(self.protocols)
        self.size = len(self.ids) * k
        self.link_ends: list[tuple[int, int]] = []
        self.link_index: dict[frozenset[str], int] = {}
        rows: list[int] = []
        cols: list[int] = []
        weights: list[float] = []
        node_a: list[int] = []
        node_b: list[int] = []
        link_of: list[int] = []
        for e, link in enumerate(graph.links):
            a, b = self.index[link.a], self.index[link.b]
            self.link_ends.append((a, b))
            self.link_index[link.ends] = e
            for protocol, latency in link.latency.items():
                j = self.pindex[protocol]
                rows += (a * k + j, b * k + j)
                cols += (b * k + j, a * k + j)
                weights += (latency, latency)
                node_a += (a, b)
                node_b += (b, a)
                link_of += (e, e)
        for i, agent in enumerate(graph.agents):
            chains = graph.table.chains_at(agent.speaks, agent.translation_delay)
            for (p, q), (tau, _) in chains.items():
                rows.append(i * k + self.pindex[p])
                cols.append(i * k + self.pindex[q])
                weights.append(tau)
                node_a.append(i)
                node_b.append(i)
                link_of.append(-1)
        self.rows = np.asarray(rows, dtype=np.int32)
        self.cols = np.asarray(cols, dtype=np.int32)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.node_a = np.asarray(node_a, dtype=np.int32)
        self.node_b = np.asarray(node_b, dtype=np.int32)
        self.link_of = np.asarray(link_of, dtype=np.int32)
        self.speaks: list[tuple[int, ...]] = [
            tuple(self.pindex[p] for p in self.protocols if p in agent.protocols)
            for agent in graph.agents
        ]
        self._matrices: _LRU[DownSet, csr_matrix] = _LRU(8)

    def matrix(self, down: DownSet) -> csr_matrix:
        """The CSR matrix of the states reachable around ``down``."""
        hit = self._matrices.get_or(down)
        if hit is not None:
            return hit
        if down:
            keep = np.ones(len(self.rows), dtype=bool)
            nodes = np.asarray([self.index[n] for n in down.nodes if n in self.index], np.int32)
            if len(nodes):
                keep &= ~np.isin(self.node_a, nodes) & ~np.isin(self.node_b, nodes)
            links = [self.link_index[pair] for pair in down.links if pair in self.link_index]
            if links:
                keep &= ~np.isin(self.link_of, np.asarray(links, np.int32))
            rows, cols, weights = self.rows[keep], self.cols[keep], self.weights[keep]
        else:
            rows, cols, weights = self.rows, self.cols, self.weights
        matrix = csr_matrix((weights, (rows, cols)), shape=(self.size, self.size))
        self._matrices.put(down, matrix)
        return matrix


class _Tree:
    """A shortest-path tree from a set of source states: distances and predecessors."""

    __slots__ = ("dist", "pred")

    def __init__(self, dist: FloatArray, pred: IntArray) -> None:
        self.dist = dist
        self.pred = pred


# --- routers ---------------------------------------------------------------------------


class Router:
    """Base of the four routers: one graph, cached state space, trees and routes.

    ``route(source, target, source_protocol=, target_protocol=, down=)`` returns a
    :class:`Route` or raises :class:`NoRoute` with a sentence saying why.
    """

    name: ClassVar[str] = "router"
    #: Static routers compute on the full topology and ignore ``down``.
    static: ClassVar[bool] = True

    def __init__(self, graph: ProtocolGraph) -> None:
        self.graph = graph
        self._space: StateSpace | None = None
        self._trees: _LRU[tuple[tuple[int, ...], DownSet], _Tree] = _LRU(8)
        self._routes: _LRU[tuple[str, str, str | None, str | None, DownSet], Route] = _LRU(4096)

    # -- caches --

    def space(self) -> StateSpace:
        """The state space of the current topology (rebuilt after a change)."""
        if self._space is None or self._space.version != self.graph.version:
            self._space = StateSpace(self.graph)
            budget = max(2, int(64e6 // max(1, 12 * self._space.size)))
            self._trees = _LRU(budget)
            self._routes.clear()
        return self._space

    def _tree(self, sources: tuple[int, ...], down: DownSet) -> _Tree:
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
        tree = _Tree(dist, pred)
        self._trees.put(key, tree)
        return tree

    # -- checks and explanations --

    def _check(self, source: str, target: str, *protocols: str | None) -> None:
        self.graph.agent(source)
        self.graph.agent(target)
        for protocol in protocols:
            if protocol is not None:
                self.graph.check_protocol(protocol)

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
    ) -> Route:
        space = self.space()
        k = space.k
        s, d = space.index[source], space.index[target]
        if source in down.nodes or target in down.nodes:
            raise NoRoute(self._explain(source, target, source_protocol, target_protocol, down))
        if source_protocol is not None:
            if source_protocol not in self.graph.agent(source).protocols:
                raise NoRoute(self._explain(source, target, source_protocol, None, down))
            sources: tuple[int, ...] = (s * k + space.pindex[source_protocol],)
        else:
            sources = tuple(s * k + j for j in space.speaks[s])
        if target_protocol is not None:
            targets: tuple[int, ...] = (d * k + space.pindex[target_protocol],)
        else:
            targets = tuple(d * k + j for j in space.speaks[d])
        tree = self._tree(sources, down)
        best = min(targets, key=lambda state: (tree.dist[state], state))
        if not math.isfinite(tree.dist[best]):
            raise NoRoute(self._explain(source, target, source_protocol, target_protocol, down))
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


class BfsRouter(Router):
    """Minimum-hop route on one protocol (no translation); ties by cost, then node ids.

    ``source_protocol`` is the one protocol; without it, every protocol that both ends
    speak is tried and the fewest hops (then lowest cost, then P's order) wins.
    Static: ignores failures.
    """

    name = "bfs"

    def _compute(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> Route:
        if target_protocol is not None and source_protocol not in (None, target_protocol):
            raise NoRoute(f"bfs uses one protocol; {source_protocol} and {target_protocol} differ")
        wanted = source_protocol or target_protocol
        candidates = (
            [wanted]
            if wanted is not None
            else [
                p
                for p in self.graph.protocols
                if p in self.graph.agent(source).protocols
                and p in self.graph.agent(target).protocols
            ]
        )
        best: tuple[int, float, int, Route] | None = None
        for rank, protocol in enumerate(candidates):
            found = self._on_protocol(source, target, protocol, down)
            if found is not None:
                key = (found.hops, found.cost, rank)
                if best is None or key < best[:3]:
                    best = (*key, found)
        if best is None:
            if wanted is None and not candidates:
                raise NoRoute(f"'{source}' and '{target}' speak no protocol in common")
            if (
                wanted is None
                and len(candidates) > 1
                and self._connected(source, target, down, None)
            ):
                raise NoRoute(
                    f"no chain of links in one protocol ({', '.join(candidates)}) joins "
                    f"'{source}' to '{target}' (bfs does not translate; try --router dijkstra)"
                )
            raise NoRoute(
                self._explain(
                    source, target, wanted, wanted, down, protocol_only=wanted or candidates[0]
                )
            )
        return best[3]

    def _on_protocol(self, source: str, target: str, protocol: str, down: DownSet) -> Route | None:
        """Lexicographic Dijkstra on (hops, cost, path of node ids) over one protocol."""
        graph = self.graph
        if protocol not in graph.agent(source).protocols or source in down.nodes:
            return None
        heap: list[tuple[int, float, tuple[str, ...]]] = [(0, 0.0, (source,))]
        settled: set[str] = set()
        while heap:
            hops, cost, path = heapq.heappop(heap)
            node = path[-1]
            if node in settled:
                continue
            settled.add(node)
            if node == target:
                return Route(self.name, path, (protocol,) * hops, (), cost)
            for link in graph.incident(node):
                latency = link.latency.get(protocol)
                other = link.other(node)
                if (
                    latency is None
                    or other in settled
                    or other in down.nodes
                    or link.ends in down.links
                ):
                    continue
                heapq.heappush(heap, (hops + 1, cost + latency, (*path, other)))
        return None


# --- semantic ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """A semantic router's candidate: score = sim × Γ(a, p) / (1 + cost(π*))."""

    agent: str
    score: float
    similarity: float
    affinity: float
    route: Route = field(compare=False)


class SemanticRouter(Router):
    """Capability matching: rank candidates, route to the best live one (SPEC §3).

    ``need`` is a capability (matched by token cosine against caps(a)) or a tool name
    (its hosts are the candidates, with similarity 1). Γ is taken for the protocol in
    which the route arrives. Failover: ``down`` removes candidates and states.
    """

    name = "semantic"
    static = False

    def similarity(self, need: str, agent_id: str) -> float:
        """sim(need, caps(a)): 1 for a host of tool ``need``, else the token cosine."""
        agent = self.graph.agent(agent_id)
        if need in agent.tools:
            return 1.0
        return similarity(need, agent.capabilities)

    def rank(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        target_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> list[Candidate]:
        """Live, reachable candidates for ``need``, best first (ties: graph order)."""
        self._check(source, source, source_protocol, target_protocol)
        hosts = self.graph.hosts(need)
        pool = hosts or [a.id for a in self.graph.agents if a.id != source]
        ranked: list[tuple[float, int, Candidate]] = []
        for order, agent_id in enumerate(pool):
            sim = self.similarity(need, agent_id)
            if sim <= 0 or agent_id in down.nodes:
                continue
            try:
                route = self._shortest(source, agent_id, source_protocol, target_protocol, down)
            except NoRoute:
                continue
            arrival = target_protocol or (
                route.protocols[-1] if route.protocols else source_protocol
            )
            affinity = (
                self.graph.affinity(agent_id, arrival)
                if arrival
                else max(self.graph.agent(agent_id).protocols.values())
            )
            score = sim * affinity / (1.0 + route.cost)
            semantic = Route(self.name, route.path, route.protocols, route.translations, route.cost)
            ranked.append((-score, order, Candidate(agent_id, score, sim, affinity, semantic)))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [item[2] for item in ranked]

    def resolve(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        target_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> Route:
        """The route to the best live candidate for ``need``; :class:`NoRoute` if none."""
        ranked = self.rank(
            source,
            need,
            source_protocol=source_protocol,
            target_protocol=target_protocol,
            down=down,
        )
        if ranked:
            return ranked[0].route
        if source in down.nodes:
            raise NoRoute(f"the source '{source}' is down")
        pool = self.graph.hosts(need) or [
            a.id for a in self.graph.agents if a.id != source and self.similarity(need, a.id) > 0
        ]
        if not pool:
            raise NoRoute(f"no agent's capabilities match '{need}'")
        if all(a in down.nodes for a in pool):
            raise NoRoute(f"all candidates for '{need}' are down ({', '.join(pool)})")
        around = f" around the down nodes and links ({down.describe()})" if down else ""
        raise NoRoute(
            f"no candidate for '{need}' ({', '.join(pool)}) is reachable from '{source}'{around}"
        )

    def _compute(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> Route:
        route = self._shortest(source, target, source_protocol, target_protocol, down)
        return Route(self.name, route.path, route.protocols, route.translations, route.cost)


ROUTERS: dict[str, type[Router]] = {
    cls.name: cls for cls in (DijkstraRouter, BfsRouter, ResilientRouter, SemanticRouter)
}


def make_router(name: str, graph: ProtocolGraph) -> Router:
    """The router called ``name`` (dijkstra | bfs | resilient | semantic) on ``graph``."""
    try:
        return ROUTERS[name](graph)
    except KeyError:
        raise ValueError(f"unknown router '{name}' (known: {', '.join(ROUTERS)})") from None
