"""Why a router with cost hooks finds no route between states that are joined.

Two causes, told apart by a breadth-first search that ignores the costs: the hooks'
costs overflow when a route adds them up (a route exists in the router's own state
space, at a cost past the largest float: an ``edge_cost`` of 1e308 on two hops), or the
hooks hide every route (one exists in the state space without them: ``edge_cost`` or
``translation_cost`` returned None). Read only when a ``NoRoute``'s reason is read.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scipy.sparse.csgraph import breadth_first_order

from sim.mesh.atlas import atlas_of
from sim.mesh.route import DownSet

if TYPE_CHECKING:
    from sim.mesh.routing import Router


def priced_away(
    router: Router,
    source: str,
    target: str,
    source_protocol: str | None,
    target_protocol: str | None,
    down: DownSet,
) -> str | None:
    """The sentence for a route the hooks priced away (module docstring), or None when
    the states are not joined even without the hooks (another reason holds)."""
    space = router.space()
    k, s, d = space.k, space.index[source], space.index[target]
    starts = (
        [s * k + space.pindex[source_protocol]]
        if source_protocol is not None
        else [s * k + j for j in space.speaks[s]]
    )
    ends = (
        {d * k + space.pindex[target_protocol]}
        if target_protocol is not None
        else {d * k + j for j in space.speaks[d]}
    )

    def joined(matrix: Any) -> bool:
        return any(
            not ends.isdisjoint(breadth_first_order(matrix, i, return_predecessors=False).tolist())
            for i in starts
        )

    if joined(space.matrix(down)):
        return (
            f"every route from '{source}' to '{target}' costs more than the largest float "
            f"({sys.float_info.max:.3g}): the costs of router '{router.name}' overflow when "
            "added up"
        )
    if joined(atlas_of(router.graph).space.matrix(down)):
        return (
            f"the cost hooks of router '{router.name}' hide every route from '{source}' to "
            f"'{target}' (edge_cost or translation_cost returned None)"
        )
    return None
