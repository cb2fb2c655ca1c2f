"""The (node, protocol) state space of one topology version, compiled to CSR arrays.

A link edge (u, p) → (v, p) costs w_e(p); a translation edge (v, p) → (v, q) costs the
cheapest chain τ at v. A router's cost hooks (``edge_cost``, ``translation_cost``) may
reprice or hide each edge when the space is compiled; the costs stay non-negative, so
Dijkstra on this graph is exact. Down-sets mask edges without recompiling.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

from sim.mesh.errors import RouterError
from sim.mesh.graph import ProtocolGraph
from sim.mesh.route import DownSet

K = TypeVar("K")
V = TypeVar("V")
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int32]


class LRU(OrderedDict[K, V]):
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


class Costs(Protocol):
    """A router's cost hooks (SPEC §12); ``None`` hides a hop or forbids a translation."""

    name: str

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None: ...

    def translation_cost(
        self, node: str, from_protocol: str, to_protocol: str, tau: float
    ) -> float | None: ...


def _priced(costs: Costs, hook: str, args: tuple[str, str, str, float]) -> float | None:
    """One hook's answer, checked: None, or a finite number ≥ 0 (a float). Whatever
    escapes the hook (``SystemExit`` too, :func:`sim.plugins.plugin_fault`) is a
    :class:`RouterError` naming the router, its plug-in and the call."""
    plugin = getattr(costs, "plugin", None)
    said = f"plug-in '{plugin}': " if plugin else ""
    try:
        value = getattr(costs, hook)(*args)
    except RouterError:
        raise
    except BaseException as exc:
        from sim.plugins import plugin_fault, raised

        if not plugin_fault(exc):
            raise
        raise RouterError(costs.name, f"{said}{hook}{args!r} {raised(exc)}") from exc
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RouterError(
            costs.name, f"{said}{hook}{args!r} returned {value!r:.80}, not a number or None"
        )
    if not math.isfinite(value) or value < 0:
        raise RouterError(
            costs.name, f"{said}{hook}{args!r} returned {value!r}; costs are finite and ≥ 0"
        )
    return float(value)


class StateSpace:
    """The (node, protocol) state graph of one topology version, as CSR arrays.

    State ``i * k + j`` is "at agent i, in protocol j" (k = |P|). Edge arrays keep, for
    each edge, the node(s) and link it depends on, so a down-set masks edges without
    rebuilding the Python-side structures. With ``costs``, each link edge u→v costs
    ``costs.edge_cost(u, v, p, w_e(p))`` and each translation edge
    ``costs.translation_cost(v, p, q, τ)``, called once per edge at compile time; an
    edge priced None is left out.
    """

    def __init__(self, graph: ProtocolGraph, costs: Costs | None = None) -> None:
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
                if costs is None:
                    rows += (a * k + j, b * k + j)
                    cols += (b * k + j, a * k + j)
                    weights += (latency, latency)
                    node_a += (a, b)
                    node_b += (b, a)
                    link_of += (e, e)
                    continue
                for x, y, u, v in ((a, b, link.a, link.b), (b, a, link.b, link.a)):
                    cost = _priced(costs, "edge_cost", (u, v, protocol, latency))
                    if cost is not None:
                        rows.append(x * k + j)
                        cols.append(y * k + j)
                        weights.append(cost)
                        node_a.append(x)
                        node_b.append(y)
                        link_of.append(e)
        for i, agent in enumerate(graph.agents):
            chains = graph.table.chains_at(agent.speaks, agent.translation_delay)
            for (p, q), (tau, _) in chains.items():
                if costs is not None:
                    priced = _priced(costs, "translation_cost", (agent.id, p, q, tau))
                    if priced is None:
                        continue
                    tau = priced
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
        self._matrices: LRU[DownSet, csr_matrix] = LRU(8)
        self._reversed: LRU[DownSet, csr_matrix] = LRU(8)

    def matrix(self, down: DownSet) -> csr_matrix:
        """The CSR matrix of the states reachable around ``down``."""
        hit = self._matrices.get_or(down)
        if hit is not None:
            return hit
        rows, cols, weights = self._kept(down)
        matrix = csr_matrix((weights, (rows, cols)), shape=(self.size, self.size))
        self._matrices.put(down, matrix)
        return matrix

    def reverse(self, down: DownSet) -> csr_matrix:
        """The CSR matrix of :meth:`matrix` with every edge reversed (searches towards
        a target set)."""
        hit = self._reversed.get_or(down)
        if hit is not None:
            return hit
        rows, cols, weights = self._kept(down)
        matrix = csr_matrix((weights, (cols, rows)), shape=(self.size, self.size))
        self._reversed.put(down, matrix)
        return matrix

    def _kept(self, down: DownSet) -> tuple[IntArray, IntArray, FloatArray]:
        """(rows, cols, weights) of the edges that avoid ``down``."""
        if down:
            keep = np.ones(len(self.rows), dtype=bool)
            nodes = np.asarray([self.index[n] for n in down.nodes if n in self.index], np.int32)
            if len(nodes):
                keep &= ~np.isin(self.node_a, nodes) & ~np.isin(self.node_b, nodes)
            links = [self.link_index[pair] for pair in down.links if pair in self.link_index]
            if links:
                keep &= ~np.isin(self.link_of, np.asarray(links, np.int32))
            return self.rows[keep], self.cols[keep], self.weights[keep]
        return self.rows, self.cols, self.weights


class Tree:
    """A shortest-path tree from a set of source states: distances and predecessors."""

    __slots__ = ("dist", "pred")

    def __init__(self, dist: FloatArray, pred: IntArray) -> None:
        self.dist = dist
        self.pred = pred
