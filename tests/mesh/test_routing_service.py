"""The cheapest host of a need, read off the source's forward tree, is the one routing
every host in turn finds: the same route, the same cost bits, ties to the first host in
graph order, the same NoRoute reason (``sim.mesh.discovery.cheapest_service``,
``Router._host_costs``), on random meshes full of ties and down-sets."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

from hypothesis import given
from hypothesis import strategies as st

from sim.mesh import (
    Agent,
    DijkstraRouter,
    DownSet,
    Link,
    NoRoute,
    Protocol,
    ProtocolGraph,
    ResilientRouter,
    Route,
    TranslationTable,
)
from sim.mesh.discovery import cheapest_service
from sim.mesh.routing import Router
from tests.harness.routing_oracle import PROPS, Mesh, answer, down_set, meshes, same


def host_by_host(router: Router) -> Router:
    """``router`` routing every host in turn (no cost read off a tree)."""
    router._host_costs = lambda *args: None  # type: ignore[method-assign]
    return router


def searched(router: Router, source: str, sp: str | None, down: DownSet) -> None:
    """Build ``source``'s forward tree, as a caller asking for many targets does."""
    for target in router.graph.agents:
        with suppress(NoRoute):
            router._shortest(source, target.id, sp, None, down, towards=False)


@PROPS
@given(data=st.data(), mesh=meshes(), resilient=st.booleans())
def test_the_tree_s_cheapest_host_is_the_host_by_host_one(
    data: st.DataObject, mesh: Mesh, resilient: bool
) -> None:
    kind: Callable[[ProtocolGraph], Router] = ResilientRouter if resilient else DijkstraRouter
    tree, each = kind(mesh.graph), host_by_host(kind(mesh.graph))
    down = down_set(data, mesh)
    source = data.draw(st.sampled_from(mesh.ids), label="source")
    sp = data.draw(st.none() | st.sampled_from(list(mesh.graph.protocols)), label="sp")
    searched(tree, source, sp, down)
    for need in ("book", "lookup", "store"):
        same(
            answer(cheapest_service, tree, source, need, source_protocol=sp, down=down),
            answer(cheapest_service, each, source, need, source_protocol=sp, down=down),
        )


def test_equal_hosts_go_to_the_first_in_graph_order() -> None:
    """s reaches h1 dearer, h2 and h3 at one cost, h4 cheapest but only around a down
    node: h2 (h1 is routed first, its route searches s's forward tree)."""
    table = TranslationTable([Protocol("A", frozenset({"name"}))])
    agents = [Agent("s", "LLM_AGENT", {"A": 1.0}), Agent("g", "GATEWAY", {"A": 1.0})]
    hosts = ("h1", "h2", "h3", "h4")
    agents += [Agent(h, "TOOL_SERVER", {"A": 1.0}, tools=("book",)) for h in hosts]
    links = [Link("s", "g", {"A": 0.01}), Link("g", "h1", {"A": 0.05})]
    links += [Link("g", "h2", {"A": 0.02}), Link("g", "h3", {"A": 0.02})]
    links += [Link("s", "h4", {"A": 0.001})]
    graph = ProtocolGraph(agents, links, table)
    router = ResilientRouter(graph)
    down = DownSet.of({"h4"})
    assert router._host_costs("s", hosts, None, down) is None  # no tree searched yet
    route = cheapest_service(router, "s", "book", down=down)
    assert router._host_costs("s", hosts, None, down) == [0.060000000000000005, 0.03, 0.03, INF]
    assert isinstance(route, Route) and route.path == ("s", "g", "h2")
    assert cheapest_service(router, "s", "book").path == ("s", "h4")


INF = float("inf")
