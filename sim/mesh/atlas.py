"""One compiled state space per graph, shared by every router that does not reprice it.

An :class:`Atlas` holds a graph version's :class:`~sim.mesh.statespace.StateSpace`, its
forward trees (per sources and down-set) and reverse trees (per target set and
down-set), and how often each set was asked for (which of the two trees to build).
Routers without cost hooks answer from the same atlas, so a worker that keeps its graph
across replications, or runs several routers on it (``dijkstra`` and ``resilient`` in
one ``compare``), compiles and searches once. The atlas is keyed by the
graph object (weakly: it goes with the graph) and rebuilt when the graph's ``version``
changes (a topology change); the down-set is part of every tree's key.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from sim.mesh.graph import ProtocolGraph
from sim.mesh.reverse import Sink
from sim.mesh.route import DownSet
from sim.mesh.statespace import LRU, StateSpace, Tree

#: Bytes of trees kept per atlas (forward: 12 per state, reverse: 8 per state).
TREE_BUDGET = 64e6


class Atlas:
    """A graph version's state space and the trees searched on it."""

    __slots__ = ("asked_from", "asked_to", "sinks", "space", "trees")

    def __init__(self, space: StateSpace) -> None:
        self.space = space
        size = max(1, space.size)
        self.trees: LRU[tuple[tuple[int, ...], DownSet], Tree] = LRU(
            max(2, int(TREE_BUDGET // (12 * size)))
        )
        self.sinks: LRU[tuple[tuple[int, ...], DownSet], Sink] = LRU(
            max(2, int(TREE_BUDGET // (8 * size)))
        )
        #: routes decided so far from each source-state set and to each target set
        #: while neither tree was kept (what :meth:`Router._by_sink` weighs)
        self.asked_from: dict[tuple[int, ...], int] = {}
        self.asked_to: dict[tuple[int, ...], int] = {}


_ATLASES: WeakKeyDictionary[ProtocolGraph, Atlas] = WeakKeyDictionary()


def atlas_of(graph: ProtocolGraph) -> Atlas:
    """The shared atlas of ``graph``'s current version (compiled on first use)."""
    atlas = _ATLASES.get(graph)
    if atlas is None or atlas.space.version != graph.version:
        atlas = _ATLASES[graph] = Atlas(StateSpace(graph))
    return atlas
