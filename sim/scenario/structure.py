"""The undirected graph a ``topology:`` block is built on, as plain edges.

A :class:`Structure` is nodes ``0..n-1`` and their edges, each once as ``(a, b)`` with
``a < b``, sorted. Barabási–Albert, the generator of large meshes, is grown here by the
same steps and the same ``random.Random`` draws as networkx's ``barabasi_albert_graph``
(networkx 3.x: a star on ``m + 1`` nodes, then each new node picks ``m`` distinct
targets uniformly from the list of edge ends), so a block gives the graph it gave
through networkx, without importing networkx (about 0.2 s of a command's start) or
building its graph; tests compare the two edge for edge. The other generators are
networkx's, converted (:func:`from_networkx`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Structure:
    """Nodes ``0..n-1``; ``edges`` sorted, each ``(a, b)`` with ``a < b``, no repeats."""

    n: int
    edges: list[tuple[int, int]]

    def degrees(self) -> list[int]:
        """Each node's number of edges, by node."""
        degree = [0] * self.n
        for a, b in self.edges:
            degree[a] += 1
            degree[b] += 1
        return degree


def barabasi_albert(n: int, m: int, seed: int) -> Structure:
    """networkx's ``barabasi_albert_graph(n, m, seed=seed)``, edge for edge (``1 <= m < n``).

    Each new node ``source`` draws targets with ``rng.choice`` from the list of edge ends
    until it holds ``m`` distinct ones, in a set, and appends them in the set's order,
    then itself ``m`` times: the list, and so every later draw, is networkx's.
    """
    rng = random.Random(seed)
    edges = [(0, v) for v in range(1, m + 1)]
    repeated = [0] * m + list(range(1, m + 1))
    for source in range(m + 1, n):
        targets: set[int] = set()
        while len(targets) < m:
            targets.add(rng.choice(repeated))
        edges.extend((t, source) for t in targets)
        repeated.extend(targets)
        repeated.extend([source] * m)
    edges.sort()
    return Structure(n, edges)


def from_networkx(graph: nx.Graph) -> Structure:
    """The edges of ``graph``, whose nodes are ``0..n-1``."""
    edges = sorted({(min(a, b), max(a, b)) for a, b in graph.edges()})
    return Structure(graph.number_of_nodes(), edges)


def components(n: int, edges: list[tuple[int, int]]) -> list[list[int]]:
    """The connected components of nodes ``0..n-1`` under ``edges``, each sorted, in the
    order of their smallest node."""
    parent = list(range(n))

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[int, list[int]] = {}
    for v in range(n):
        members.setdefault(root(v), []).append(v)
    return list(members.values())
