"""Reverse shortest-path trees: one search per target set, shared by every caller.

A :class:`Sink` holds, for a set of target states T and a down-set, the distance
D[x] from every state x to T (one multi-source SciPy Dijkstra on the reversed state
graph). A caller's route is then a walk: from its source state, step to the one
successor u with w(x, u) + D[u] = D[x], until a state of T.

The walk answers only when that route is the one the forward search of
:meth:`sim.mesh.Router._shortest` would return, whatever its tie-breaking: every other
step, every other source state, and every other target state reachable from the end
costs more than ``TIE`` (relative) above the best. Otherwise it returns None and the
caller runs the forward search (an exact tie: equal latencies, zero-cost edges). The
route cost is summed forward from the source, in the forward search's order, so the
float is the same bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra as csgraph_dijkstra

#: Relative margin under which two route costs count as a tie (the forward search
#: decides those); far above float rounding (≈1e-15 per hop), far below real gaps.
TIE = 1e-9

FloatArray = npt.NDArray[np.float64]


class Sink:
    """Distances (seconds-equivalent) from every state to one target set of states.

    ``dist[x]`` is +inf where no path leads to the set. Built once per (target set,
    down-set, state-space version) and shared by every caller.
    """

    __slots__ = ("dist", "targets")

    def __init__(self, reverse: csr_matrix, targets: tuple[int, ...]) -> None:
        self.targets = frozenset(targets)
        self.dist: FloatArray = csgraph_dijkstra(
            reverse, directed=True, indices=list(targets), min_only=True
        )


class Walker:
    """Walks on one forward state graph (its CSR arrays, shared, not copied)."""

    __slots__ = ("indices", "indptr", "weights")

    def __init__(self, forward: csr_matrix) -> None:
        self.indptr = forward.indptr
        self.indices = forward.indices
        self.weights: FloatArray = forward.data

    def route(self, sink: Sink, sources: Sequence[int]) -> tuple[list[int], float] | None:
        """(states, forward cost) of the unique cheapest walk from ``sources`` to the
        sink's set, or None when it is not unique by ``TIE`` or no walk exists."""
        dist = sink.dist
        best = min(sources, key=lambda s: float(dist[s]))
        c = float(dist[best])
        if not math.isfinite(c):
            return None
        tol = TIE * (1.0 + c)
        if sum(1 for s in sources if dist[s] <= c + tol) != 1:
            return None
        indptr, indices, weights = self.indptr, self.indices, self.weights
        targets = sink.targets
        states = [best]
        cost = 0.0
        x = best
        while x not in targets:
            lo, hi = int(indptr[x]), int(indptr[x + 1])
            row = indices[lo:hi]
            close = np.flatnonzero(weights[lo:hi] + dist[row] <= float(dist[x]) + tol)
            if len(close) != 1 or len(states) > len(dist):
                return None
            j = lo + int(close[0])
            cost = cost + float(weights[j])
            x = int(indices[j])
            states.append(x)
        if self._near(x, targets, tol):
            return None
        return states, cost

    def _near(self, end: int, targets: frozenset[int], tol: float) -> bool:
        """Whether another target state is reachable from ``end`` within ``tol``."""
        indptr, indices, weights = self.indptr, self.indices, self.weights
        seen = {end: 0.0}
        stack = [end]
        while stack:
            x = stack.pop()
            here = seen[x]
            lo, hi = int(indptr[x]), int(indptr[x + 1])
            for j in np.flatnonzero(weights[lo:hi] <= tol - here).tolist():
                u, total = int(indices[lo + j]), here + float(weights[lo + j])
                if seen.get(u, math.inf) <= total:
                    continue
                if u in targets:
                    return True
                seen[u] = total
                stack.append(u)
        return False
