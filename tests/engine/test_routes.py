"""The route service's cache (sim/engine/routes.py) is invisible: on random protocol graphs,
any sequence of requests (source, need, protocol, suspects) gets from the cached service
the route a fresh router computes for that request alone (the same route, cost bits and
translation positions, or the same NoRoute reason), and a repeated request the same
compiled path object."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.engine.paths import Path
from sim.engine.routes import RouteService
from sim.engine.topology import Topology
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import NO_DOWN, DownSet, Route
from sim.plugins import BUILTIN_ROUTERS
from tests.harness.routing_oracle import (
    CAPABILITIES,
    PROPS,
    TOOLS,
    Mesh,
    answer,
    down_set,
    meshes,
    same,
)

#: one request to the route service: (source, need, protocol, suspects)
Request = tuple[str, str, str, DownSet]


def route_of(path_to: Callable[[str, str, str, DownSet], Path]) -> Callable[..., Route]:
    """The route of the compiled path ``path_to`` gives (its NoRoute raised through)."""
    return lambda *request: path_to(*request).route


def check_cached_is_fresh(
    graph: ProtocolGraph, router: str, requests: list[Request], service: type[RouteService]
) -> None:
    """Each request's route from one cached ``service`` is the route of a fresh router."""
    cached = service(Topology(graph), make_router(router, graph), router)
    for k, (source, need, rho, down) in enumerate(requests):
        fresh = make_router(router, graph)
        got = answer(route_of(cached.path_to), source, need, rho, down)
        want = answer(fresh.serve, source, need, source_protocol=rho, down=down)
        try:
            same(got, want)
        except AssertionError:
            raise AssertionError(
                f"request {k} {(source, need, rho, down)}: {got} != {want}"
            ) from None
        if isinstance(got, Route):
            assert cached.path_to(source, need, rho, down) is cached.path_to(
                source, need, rho, down
            ), f"request {k}: the path compiled again"


@st.composite
def requests(draw: st.DrawFn, mesh: Mesh) -> list[Request]:
    """1 to 4 requests, each from an agent in one of its protocols, each asked under 2 or 3
    suspect sets (none, or up to two agents), then all of them again in another order:
    what a cache keyed too coarsely would answer from an earlier request."""
    out: list[Request] = []
    data = draw(st.data())
    for _ in range(draw(st.integers(1, 4))):
        source = draw(st.sampled_from(mesh.ids))
        agent = next(a for a in mesh.graph.agents if a.id == source)
        rho = draw(st.sampled_from(sorted(agent.protocols)))
        need = draw(st.sampled_from((*TOOLS, *CAPABILITIES, "nobody_serves_this")))
        for _ in range(draw(st.integers(2, 3))):
            down = NO_DOWN if draw(st.booleans()) else down_set(data, mesh)
            out.append((source, need, rho, down))
    return out + draw(st.permutations(out))


@PROPS
@given(data=st.data(), mesh=meshes(), router=st.sampled_from(sorted(BUILTIN_ROUTERS)))
def test_cached_routes_are_the_routes_of_a_fresh_router(
    data: st.DataObject, mesh: Mesh, router: str
) -> None:
    check_cached_is_fresh(mesh.graph, router, data.draw(requests(mesh)), RouteService)


class SuspectBlind(RouteService):
    """A broken cache: it keys routes without the caller's suspects."""

    def path_to(self, source: str, need: str, rho: str, down: DownSet) -> Path:
        key = (source, need, rho)
        if key not in self._routes:
            self._routes[key] = super().path_to(source, need, rho, down)
        return self._routes[key]


def test_a_cache_that_forgets_the_suspects_is_caught(graph: ProtocolGraph) -> None:
    # parts' mesh a - g - s: with g suspected there is no route to s's read_it
    requests: list[Request] = [
        ("a", "read_it", "MCP", NO_DOWN),
        ("a", "read_it", "MCP", DownSet.of(["g"])),
    ]
    check_cached_is_fresh(graph, "resilient", requests, RouteService)
    with pytest.raises(AssertionError, match=r"request 1 .*: Route\(.* != NoRoute: "):
        check_cached_is_fresh(graph, "resilient", requests, SuspectBlind)
