"""Property tests of the routers on random protocol graphs (SPEC §3): exactness,
validity, BFS hop counts and the resilient router's down-sets, each against the
independent oracle of :mod:`routing_oracle`."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.mesh import (
    BfsRouter,
    DijkstraRouter,
    DownSet,
    NoRoute,
    ProtocolGraph,
    ResilientRouter,
    SemanticRouter,
)
from tests.harness.routing_oracle import (
    PROPS,
    ROUTE_DRAWS,
    Mesh,
    brute_force,
    check_valid,
    endpoints,
    exhaustively,
    meshes,
    up_links,
)

if TYPE_CHECKING:  # networkx is imported by the tests that use it, not at collection
    import networkx as nx


@PROPS
@given(data=st.data(), mesh=meshes())
def test_dijkstra_is_exact(data: st.DataObject, mesh: Mesh) -> None:
    router = DijkstraRouter(mesh.graph)
    for _ in range(3):
        source, target, sp, tp = endpoints(data, mesh)
        for sp_, tp_ in ((None, None), (sp, None), (None, tp), (sp, tp)):
            expected = brute_force(mesh, source, target, sp_, tp_)
            if expected is None:
                with pytest.raises(NoRoute) as info:
                    router.route(source, target, source_protocol=sp_, target_protocol=tp_)
                assert info.value.reason
                continue
            route = router.route(source, target, source_protocol=sp_, target_protocol=tp_)
            assert route.router == "dijkstra"
            assert route.path[0] == source and route.path[-1] == target
            assert route.cost == pytest.approx(expected, rel=1e-9, abs=1e-12)
            check_valid(mesh, route, sp_, tp_)
            # the cache gives the same object back
            assert router.route(source, target, source_protocol=sp_, target_protocol=tp_) is route


@PROPS
@given(data=st.data(), mesh=meshes())
def test_every_router_returns_valid_routes(data: st.DataObject, mesh: Mesh) -> None:
    source, target, sp, tp = endpoints(data, mesh)
    for router in (
        DijkstraRouter(mesh.graph),
        ResilientRouter(mesh.graph),
        SemanticRouter(mesh.graph),
    ):
        try:
            route = router.route(source, target, source_protocol=sp, target_protocol=tp)
        except NoRoute:
            assert brute_force(mesh, source, target, sp, tp) is None
            continue
        assert route.router == router.name
        check_valid(mesh, route, sp, tp)
    bfs = BfsRouter(mesh.graph)
    try:
        route = bfs.route(source, target, source_protocol=sp)
    except NoRoute:
        return
    assert route.translations == ()
    assert len(set(route.protocols)) <= 1
    check_valid(mesh, route, None, None)


def _protocol_subgraph(mesh: Mesh, protocol: str) -> nx.Graph:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(mesh.ids)
    for link in mesh.graph.links:
        if protocol in link.latency:
            g.add_edge(link.a, link.b, weight=link.latency[protocol])
    return g


@PROPS
@given(data=st.data(), mesh=meshes())
def test_bfs_hops_match_networkx(data: st.DataObject, mesh: Mesh) -> None:
    import networkx as nx

    bfs = BfsRouter(mesh.graph)
    source = data.draw(st.sampled_from(mesh.ids))
    target = data.draw(st.sampled_from(mesh.ids))
    for protocol in mesh.graph.protocols:
        g = _protocol_subgraph(mesh, protocol)
        both_speak = all(protocol in mesh.graph.agent(x).protocols for x in (source, target))
        reachable = both_speak and nx.has_path(g, source, target)
        if not reachable:
            with pytest.raises(NoRoute):
                bfs.route(source, target, source_protocol=protocol)
            continue
        route = bfs.route(source, target, source_protocol=protocol)
        assert route.hops == nx.shortest_path_length(g, source, target)
        assert set(route.protocols) <= {protocol}
        assert route.translations == ()
        # ties by lower cost
        cheapest = min(
            sum(g.edges[u, v]["weight"] for u, v in itertools.pairwise(path))
            for path in nx.all_shortest_paths(g, source, target)
        )
        assert route.cost == pytest.approx(cheapest, rel=1e-9, abs=1e-12)
        check_valid(mesh, route, None, None)
    # without a protocol: the fewest hops over the protocols both ends speak
    common = [
        p
        for p in mesh.graph.protocols
        if p in mesh.graph.agent(source).protocols and p in mesh.graph.agent(target).protocols
    ]
    lengths = [
        nx.shortest_path_length(_protocol_subgraph(mesh, p), source, target)
        for p in common
        if nx.has_path(_protocol_subgraph(mesh, p), source, target)
    ]
    if not lengths:
        with pytest.raises(NoRoute):
            bfs.route(source, target)
    else:
        assert bfs.route(source, target).hops == min(lengths)


@PROPS
@given(data=st.data(), mesh=meshes())
def test_resilient_avoids_down_and_equals_dijkstra_on_residual(
    data: st.DataObject, mesh: Mesh
) -> None:
    ids = mesh.ids
    down_nodes = set(data.draw(st.lists(st.sampled_from(ids), max_size=3), label="down nodes"))
    links = list(mesh.graph.links)
    down_links = (
        {
            link.ends
            for link in data.draw(st.lists(st.sampled_from(links), max_size=3), label="down links")
        }
        if links
        else set()
    )
    down = DownSet.of(down_nodes, down_links)
    mesh.down_nodes, mesh.down_links = down_nodes, down_links
    residual = ProtocolGraph(
        [a for a in mesh.graph.agents if a.id not in down_nodes],
        up_links(mesh),
        mesh.graph.table,
    )
    resilient = ResilientRouter(mesh.graph)
    static = DijkstraRouter(mesh.graph)
    on_residual = DijkstraRouter(residual)
    for _ in range(3):
        source, target, sp, tp = endpoints(data, mesh)
        expected = brute_force(mesh, source, target, sp, tp)
        if expected is None:
            with pytest.raises(NoRoute) as info:
                resilient.route(source, target, source_protocol=sp, target_protocol=tp, down=down)
            if source in down_nodes:
                assert info.value.reason == f"the source '{source}' is down"
            elif target in down_nodes:
                assert info.value.reason == f"the target '{target}' is down"
            else:
                with pytest.raises(NoRoute):
                    on_residual.route(source, target, source_protocol=sp, target_protocol=tp)
            continue
        route = resilient.route(source, target, source_protocol=sp, target_protocol=tp, down=down)
        assert not set(route.path) & down_nodes
        assert not {frozenset(hop) for hop in itertools.pairwise(route.path)} & down_links
        assert route.cost == pytest.approx(expected, rel=1e-9, abs=1e-12)
        reference = on_residual.route(source, target, source_protocol=sp, target_protocol=tp)
        assert route.cost == pytest.approx(reference.cost, rel=1e-9, abs=1e-12)
        check_valid(mesh, route, sp, tp)
        # the static router ignores the down-set
        assert static.route(
            source, target, source_protocol=sp, target_protocol=tp, down=down
        ) == static.route(source, target, source_protocol=sp, target_protocol=tp)


test_dijkstra_is_exact_exhaustively = exhaustively(test_dijkstra_is_exact, **ROUTE_DRAWS)
test_every_router_returns_valid_routes_exhaustively = exhaustively(
    test_every_router_returns_valid_routes, **ROUTE_DRAWS
)
test_bfs_hops_match_networkx_exhaustively = exhaustively(
    test_bfs_hops_match_networkx, **ROUTE_DRAWS
)
test_resilient_avoids_down_and_equals_dijkstra_on_residual_exhaustively = exhaustively(
    test_resilient_avoids_down_and_equals_dijkstra_on_residual, **ROUTE_DRAWS
)
