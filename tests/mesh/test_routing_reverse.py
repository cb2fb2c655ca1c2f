"""The reverse-tree walk gives the forward search's route, bit for bit (ties included).

``Router._shortest`` answers from a reverse tree per target set and falls back to the
forward SciPy search on a tie; a router whose walk is disabled always runs the forward
search. Both must return equal routes with the same float cost, and the same NoRoute
reason, on random meshes full of ties (zero and repeated latencies) and down-sets.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from sim.mesh import (
    Agent,
    DijkstraRouter,
    DownSet,
    Link,
    Protocol,
    ProtocolGraph,
    ResilientRouter,
    TranslationTable,
)
from sim.mesh.atlas import atlas_of
from sim.mesh.discovery import cheapest_service
from sim.mesh.reverse import Sink, Walker
from tests.harness.routing_oracle import PROPS, Mesh, answer, down_set, endpoints, meshes, same


def forward_only(router: DijkstraRouter) -> DijkstraRouter:
    """``router`` with the walk disabled: every route from the forward search."""
    router._walk = lambda *args: None  # type: ignore[method-assign]
    router._serve_walk = lambda *args: None  # type: ignore[method-assign]
    return router


@PROPS
@given(data=st.data(), mesh=meshes())
def test_walk_equals_forward_search(data: st.DataObject, mesh: Mesh) -> None:
    walk, forward = DijkstraRouter(mesh.graph), forward_only(DijkstraRouter(mesh.graph))
    down = down_set(data, mesh)
    for _ in range(4):
        query = endpoints(data, mesh)
        for d in (DownSet(), down):
            same(answer(walk._shortest, *query, d), answer(forward._shortest, *query, d))


@PROPS
@given(data=st.data(), mesh=meshes())
def test_service_walk_equals_per_host_routes(data: st.DataObject, mesh: Mesh) -> None:
    walk, forward = DijkstraRouter(mesh.graph), forward_only(DijkstraRouter(mesh.graph))
    down = down_set(data, mesh)
    source = data.draw(st.sampled_from(mesh.ids), label="source")
    sp = data.draw(st.none() | st.sampled_from(list(mesh.graph.protocols)), label="sp")
    for need in ("book", "lookup", "store", "planning"):
        for d in (DownSet(), down):
            same(
                answer(cheapest_service, walk, source, need, source_protocol=sp, down=d),
                answer(cheapest_service, forward, source, need, source_protocol=sp, down=d),
            )


def test_walk_declines_an_exact_tie() -> None:
    """Two equal-cost paths a→b→d and a→c→d: the walk gives way to the forward search."""
    # states 0=a, 1=b, 2=c, 3=d; edges a→b, a→c, b→d, c→d of cost 1
    rows, cols = [0, 0, 1, 2], [1, 2, 3, 3]
    forward = csr_matrix(([1.0] * 4, (rows, cols)), shape=(4, 4))
    reverse = csr_matrix(([1.0] * 4, (cols, rows)), shape=(4, 4))
    assert Walker(forward).route(Sink(reverse, (3,)), (0,)) is None
    # one cheaper edge breaks the tie: the walk answers, with the forward-summed cost
    forward = csr_matrix(([1.0, 1.0, 0.5, 1.0], (rows, cols)), shape=(4, 4))
    reverse = csr_matrix(([1.0, 1.0, 0.5, 1.0], (cols, rows)), shape=(4, 4))
    assert Walker(forward).route(Sink(reverse, (3,)), (0,)) == ([0, 1, 3], 1.5)


@pytest.mark.parametrize("end_cost", [0.0, 1e-12])
def test_walk_declines_a_free_step_to_another_target(end_cost: float) -> None:
    """From the first target reached, another target state within the tie margin: the
    forward search's (dist, state) choice decides, so the walk declines."""
    rows, cols, w = [0, 1], [1, 2], [1.0, end_cost]  # a→t1, t1→t2 (free or nearly)
    forward = csr_matrix((w, (rows, cols)), shape=(3, 3))
    reverse = csr_matrix((w, (cols, rows)), shape=(3, 3))
    assert Walker(forward).route(Sink(reverse, (1, 2)), (0,)) is None
    assert Walker(forward).route(Sink(reverse, (1,)), (0,)) == ([0, 1], 1.0)


# --- the shared atlas ---------------------------------------------------------------------


def _line_graph() -> ProtocolGraph:
    table = TranslationTable([Protocol("A", frozenset({"name"}))])
    agents = [Agent(n, "GATEWAY", {"A": 1.0}) for n in ("s", "v", "d")]
    return ProtocolGraph(agents, [Link("s", "v", {"A": 0.01}), Link("v", "d", {"A": 0.01})], table)


class Repriced(DijkstraRouter):
    """A router with a cost hook: its state space is its own."""

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None:
        return 2 * latency


def test_routers_of_one_graph_share_the_atlas_until_the_topology_changes() -> None:
    graph = _line_graph()
    dijkstra, resilient = DijkstraRouter(graph), ResilientRouter(graph)
    assert dijkstra.route("s", "d").cost == pytest.approx(0.02)
    assert resilient.space() is dijkstra.space() is atlas_of(graph).space
    # the first route of a caller and a target never asked for: the caller's forward tree
    assert resilient._trees is dijkstra._trees and len(dijkstra._trees) == 1
    assert resilient._sinks is dijkstra._sinks and len(dijkstra._sinks) == 0
    resilient.route("v", "d")  # another caller, the same target: the target's reverse tree
    assert (len(dijkstra._trees), len(dijkstra._sinks)) == (1, 1)
    resilient.route("s", "d")  # kept: no new search
    dijkstra.route("v", "d")
    assert (len(dijkstra._trees), len(dijkstra._sinks)) == (1, 1)
    # a later replication's router on the kept graph finds the trees already searched
    again = DijkstraRouter(graph)
    again.space()
    assert again._sinks is dijkstra._sinks
    graph.add_link(Link("s", "d", {"A": 0.005}))  # a topology change: a new atlas
    assert again.route("s", "d").path == ("s", "d")
    assert dijkstra.space() is atlas_of(graph).space and dijkstra.space().version == graph.version
    assert dijkstra.route("s", "d").cost == pytest.approx(0.005)


def test_a_repriced_router_keeps_its_own_space() -> None:
    graph = _line_graph()
    plain, repriced = DijkstraRouter(graph), Repriced(graph)
    assert repriced.route("s", "d").cost == pytest.approx(0.04)
    assert plain.route("s", "d").cost == pytest.approx(0.02)
    assert repriced.space() is not plain.space()
    assert repriced._sinks is not plain._sinks
