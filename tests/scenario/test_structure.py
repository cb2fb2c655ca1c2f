"""The generators' plain graphs against networkx, the oracle (networkx stays a dependency)."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.scenario.structure import Structure, barabasi_albert, components, from_networkx


def nx_edges(graph: nx.Graph) -> list[tuple[int, int]]:
    return sorted((min(a, b), max(a, b)) for a, b in graph.edges())


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 400), m=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_barabasi_albert_is_networkx_s_graph_edge_for_edge(n: int, m: int, seed: int) -> None:
    m = min(m, n - 1)
    ours = barabasi_albert(n, m, seed)
    assert ours.n == n
    assert ours.edges == nx_edges(nx.barabasi_albert_graph(n, m, seed=seed))


def test_the_large_mesh_s_graph_is_networkx_s() -> None:
    assert barabasi_albert(10_000, 2, 123).edges == nx_edges(
        nx.barabasi_albert_graph(10_000, 2, seed=123)
    )


def test_another_seed_gives_another_graph() -> None:
    """The comparison above can fail: the seed reaches every draw."""
    assert barabasi_albert(200, 2, 1).edges != nx_edges(nx.barabasi_albert_graph(200, 2, seed=2))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), p=st.floats(0.0, 0.2), seed=st.integers(0, 1000))
def test_components_are_networkx_s_in_order_of_their_smallest_node(
    n: int, p: float, seed: int
) -> None:
    graph = nx.gnp_random_graph(n, p, seed=seed)
    expected = sorted((sorted(c) for c in nx.connected_components(graph)), key=min)
    assert components(n, from_networkx(graph).edges) == expected


def test_degrees_count_both_ends() -> None:
    assert Structure(4, [(0, 1), (0, 2), (2, 3)]).degrees() == [2, 1, 2, 1]
