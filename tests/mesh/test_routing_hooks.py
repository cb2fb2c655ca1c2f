"""A plug-in router's cost hooks (SPEC §12) on random protocol graphs: repriced and
hidden hops and translations against a brute force that applies the same hooks
(:mod:`routing_oracle` prices the steps)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.mesh import (
    DijkstraRouter,
    NoRoute,
    ProtocolGraph,
)
from tests.harness.routing_oracle import (
    PROPS,
    ROUTE_DRAWS,
    Mesh,
    endpoints,
    exhaustively,
    meshes,
    step_price,
)


def chain_tau(mesh: Mesh, node: str, p: str, q: str) -> float | None:
    """τ(p, q, node) by the oracle: the cheapest chain of direct allowed translations
    through distinct protocols the node speaks (Σ delay + penalty × min(1, Σ loss))."""
    speaks = set(mesh.graph.agent(node).protocols)
    best: float | None = None
    middle = sorted(speaks - {p, q})
    for k in range(len(middle) + 1):
        for via in itertools.permutations(middle, k):
            steps = [step_price(mesh, node, x, y) for x, y in itertools.pairwise((p, *via, q))]
            if any(step is None for step in steps):
                continue
            delay = sum(step[0] for step in steps if step is not None)
            loss = sum(step[1] for step in steps if step is not None)
            price = delay + mesh.penalty * min(1.0, loss)
            best = price if best is None or price < best else best
    return best


HOOK_COST = st.none() | st.sampled_from([0.0, 0.001, 0.5]) | st.floats(0, 2)


class TableRouter(DijkstraRouter):
    """A plug-in whose hooks read drawn tables (``"keep"``: the default cost)."""

    def __init__(
        self,
        graph: ProtocolGraph,
        edges: dict[tuple[str, str, str], float | str | None],
        translations: dict[tuple[str, str, str], float | str | None],
    ) -> None:
        super().__init__(graph)
        self.edges = edges
        self.translations = translations

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None:
        value = self.edges[(u, v, protocol)]
        return latency if value == "keep" else value  # type: ignore[return-value]

    def translation_cost(self, node: str, f: str, t: str, tau: float) -> float | None:
        value = self.translations[(node, f, t)]
        return tau if value == "keep" else value  # type: ignore[return-value]


def hooked_brute_force(
    mesh: Mesh,
    router: TableRouter,
    source: str,
    target: str,
    source_protocol: str | None,
    target_protocol: str | None,
) -> float | None:
    """Bellman–Ford over (agent, protocol) states with the hooks' prices: a hop u→v in p
    costs the edge table (or w_e(p)); a translation p→q at v the translation table (or
    the oracle's τ); a None entry is no edge."""
    speaks = {a.id: set(a.protocols) for a in mesh.graph.agents}
    edges: list[tuple[tuple[str, str], tuple[str, str], float]] = []
    for link in mesh.graph.links:
        for p, w in link.latency.items():
            for u, v in ((link.a, link.b), (link.b, link.a)):
                value = router.edges[(u, v, p)]
                cost = w if value == "keep" else value
                if cost is not None:
                    edges.append(((u, p), (v, p), float(cost)))
    for v, spoken in speaks.items():
        for p, q in itertools.permutations(sorted(spoken), 2):
            tau = chain_tau(mesh, v, p, q)
            if tau is None:
                continue
            value = router.translations[(v, p, q)]
            cost = tau if value == "keep" else value
            if cost is not None:
                edges.append(((v, p), (v, q), float(cost)))
    starts = [
        (source, p) for p in speaks[source] if source_protocol is None or p == source_protocol
    ]
    dist = {state: 0.0 for state in starts}
    for _ in range(sum(len(x) for x in speaks.values())):
        changed = False
        for a, b, c in edges:
            if a in dist and dist[a] + c < dist.get(b, math.inf):
                dist[b] = dist[a] + c
                changed = True
        if not changed:
            break
    goal = [
        dist[(target, p)]
        for p in speaks[target]
        if (target_protocol is None or p == target_protocol) and (target, p) in dist
    ]
    return min(goal) if goal else None


@PROPS
@given(data=st.data(), mesh=meshes())
def test_a_router_with_cost_hooks_is_exact(data: st.DataObject, mesh: Mesh) -> None:
    keep = st.just("keep")
    edges = {
        (u, v, p): data.draw(keep | HOOK_COST, label=f"edge {u}->{v} {p}")
        for link in mesh.graph.links
        for p in link.latency
        for u, v in ((link.a, link.b), (link.b, link.a))
    }
    translations = {
        (a.id, p, q): data.draw(keep | HOOK_COST, label=f"tau {a.id} {p}->{q}")
        for a in mesh.graph.agents
        for p, q in itertools.permutations(sorted(a.protocols), 2)
    }
    router = TableRouter(mesh.graph, edges, translations)
    for _ in range(3):
        source, target, sp, tp = endpoints(data, mesh)
        expected = hooked_brute_force(mesh, router, source, target, sp, tp)
        if expected is None:
            with pytest.raises(NoRoute):
                router.route(source, target, source_protocol=sp, target_protocol=tp)
            continue
        route = router.route(source, target, source_protocol=sp, target_protocol=tp)
        assert route.cost == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert route.path[0] == source and route.path[-1] == target
        for i, p in enumerate(route.protocols):  # no hidden hop is used
            assert edges[(route.path[i], route.path[i + 1], p)] is not None
        for t in route.translations:  # no forbidden translation is made
            assert translations[(t.at, t.source, t.target)] is not None
        assert router.route(source, target, source_protocol=sp, target_protocol=tp) is route
    # hiding every hop into one agent: no route passes through it
    hidden = data.draw(st.sampled_from(mesh.ids), label="hidden agent")
    avoiding = TableRouter(
        mesh.graph,
        {key: (None if key[1] == hidden else value) for key, value in edges.items()},
        translations,
    )
    source, target, sp, tp = endpoints(data, mesh)
    try:
        route = avoiding.route(source, target, source_protocol=sp, target_protocol=tp)
    except NoRoute:
        return
    assert hidden not in route.path[1:]


test_a_router_with_cost_hooks_is_exact_exhaustively = exhaustively(
    test_a_router_with_cost_hooks_is_exact, **ROUTE_DRAWS
)
