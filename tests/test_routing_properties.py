"""Property tests of the routers on random protocol graphs (SPEC §3).

Every oracle here is written from the SPEC, independently of ``sim.mesh.routing`` and of
``TranslationTable``: the brute force walks the (agent, protocol) state space and prices
each translation step from the protocols' field sets and the scenario's pair rules.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from sim.mesh import (
    Agent,
    BfsRouter,
    DijkstraRouter,
    DownSet,
    Link,
    NoRoute,
    PairRule,
    Protocol,
    ProtocolGraph,
    ResilientRouter,
    Route,
    SemanticRouter,
    TranslationTable,
    route_cost,
)

EIGHT = (
    "name",
    "description",
    "input_schema",
    "side_effects",
    "requires_approval",
    "failure_modes",
    "dependencies",
    "summary",
)
FIELD_POOL = (*EIGHT, "annotations")
BUILTIN = {
    "MCP+": set(FIELD_POOL),
    "SGD": set(EIGHT),
    "MCP": {"name", "description", "input_schema", "annotations"},
    "ANP": {"name", "description", "input_schema", "requires_approval"},
    "A2A": {"name", "description"},
}
CAPABILITIES = (
    "train_booking",
    "ticketDelivery",
    "user-profile",
    "account.balance",
    "booking",
    "planning",
    "HTTPServer",
    "geo:lookup",
    "data/store",
    "trainTicket_lookup",
)
TOOLS = ("book", "lookup", "store")
LATENCY = st.sampled_from([0.0, 0.0, 0.001, 0.01]) | st.floats(0, 0.1)
SMALL_DELAY = st.sampled_from([0.0, 0.002]) | st.floats(0, 0.05)


@dataclass
class Mesh:
    """A random mesh, with the raw ingredients the oracles price from."""

    graph: ProtocolGraph
    fields: dict[str, set[str]]
    rules: dict[tuple[str, str], PairRule]
    penalty: float
    default: float
    down_nodes: set[str] = field(default_factory=set)
    down_links: set[frozenset[str]] = field(default_factory=set)

    @property
    def ids(self) -> list[str]:
        return [a.id for a in self.graph.agents]


@st.composite
def meshes(draw: st.DrawFn, max_agents: int = 7) -> Mesh:
    pool = ("MCP", "MCP+", "A2A", "ANP", "SGD", "U1", "U2", "U3")
    names = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    fields: dict[str, set[str]] = {}
    for n in names:
        if n in BUILTIN:
            fields[n] = set(BUILTIN[n])
        else:
            fields[n] = set(draw(st.sets(st.sampled_from(FIELD_POOL))))
    rules: dict[tuple[str, str], PairRule] = {}
    for p, q in itertools.permutations(names, 2):
        kind = draw(st.sampled_from(["none", "none", "forbid", "calibrate", "destroy"]))
        if kind == "forbid":
            rules[(p, q)] = PairRule(p, q, allowed=False)
        elif kind == "calibrate":
            rules[(p, q)] = PairRule(
                p,
                q,
                loss=draw(st.none() | st.sampled_from([0.0, 1.0]) | st.floats(0, 1)),
                delay=draw(st.none() | SMALL_DELAY),
            )
        elif kind == "destroy":
            rules[(p, q)] = PairRule(p, q, destructive=True, fail=draw(st.floats(0, 1)))
    penalty = draw(st.sampled_from([0.0, 0.01, 1.0]) | st.floats(0, 5))
    default = draw(SMALL_DELAY)
    table = TranslationTable(
        [Protocol(n, frozenset(fields[n])) for n in names],
        list(rules.values()),
        loss_penalty=penalty,
        default_delay=default,
    )
    n = draw(st.integers(1, max_agents))
    agents: list[Agent] = []
    for i in range(n):
        speaks = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        affinities = {p: draw(st.sampled_from([1.0, 0.5]) | st.floats(0.05, 1.0)) for p in speaks}
        agents.append(
            Agent(
                id=f"a{i}",
                type=draw(st.sampled_from(["LLM_AGENT", "GATEWAY", "TOOL_SERVER"])),
                protocols=affinities,
                capabilities=tuple(draw(st.lists(st.sampled_from(CAPABILITIES), max_size=3))),
                tools=tuple(draw(st.lists(st.sampled_from(TOOLS), max_size=2, unique=True))),
                translation_delay=draw(st.none() | SMALL_DELAY),
            )
        )
    links: list[Link] = []
    for i, j in itertools.combinations(range(n), 2):
        common = [p for p in names if p in agents[i].protocols and p in agents[j].protocols]
        if not common or not draw(st.booleans()):
            continue
        carried = draw(st.lists(st.sampled_from(common), min_size=1, unique=True))
        a, b = (agents[i].id, agents[j].id) if draw(st.booleans()) else (agents[j].id, agents[i].id)
        links.append(Link(a, b, {p: draw(LATENCY) for p in carried}))
    graph = ProtocolGraph(agents, links, table)
    return Mesh(graph, fields, rules, penalty, default)


# --- the oracle ---------------------------------------------------------------------------


def step_price(mesh: Mesh, node: str, p: str, q: str) -> tuple[float, float] | None:
    """(delay, loss) of one direct translation p → q at ``node``, or None when forbidden."""
    rule = mesh.rules.get((p, q))
    if rule is not None and not rule.allowed:
        return None
    if rule is not None and rule.loss is not None:
        loss = rule.loss
    else:
        loss = sum(1 for f in EIGHT if f in mesh.fields[p] and f not in mesh.fields[q]) / 8
    node_delay = mesh.graph.agent(node).translation_delay
    if node_delay is not None:
        delay = node_delay
    elif rule is not None and rule.delay is not None:
        delay = rule.delay
    else:
        delay = mesh.default
    return delay, loss


def up_links(mesh: Mesh) -> list[Link]:
    return [
        link
        for link in mesh.graph.links
        if link.ends not in mesh.down_links
        and link.a not in mesh.down_nodes
        and link.b not in mesh.down_nodes
    ]


#: walks the brute force may extend before it gives the example up (hypothesis.reject)
BUDGET = 300_000


def brute_force(
    mesh: Mesh,
    source: str,
    target: str,
    source_protocol: str | None = None,
    target_protocol: str | None = None,
) -> float | None:
    """Minimum cost over all walks visiting each (agent, protocol) state at most once.

    Moves: cross an up link in the current protocol, or translate at the current node to
    another spoken protocol through one direct allowed pair. Consecutive translations at
    one node form one chain, priced as Σ delay + penalty × min(1, Σ loss).
    """
    if source in mesh.down_nodes or target in mesh.down_nodes:
        return None
    speaks = {a.id: set(a.protocols) for a in mesh.graph.agents}
    adjacent: dict[str, list[tuple[str, str, float]]] = {a: [] for a in speaks}
    for link in up_links(mesh):
        for p, w in link.latency.items():
            adjacent[link.a].append((link.b, p, w))
            adjacent[link.b].append((link.a, p, w))
    prices = {
        (v, p, q): step_price(mesh, v, p, q)
        for v in speaks
        for p in speaks[v]
        for q in speaks[v]
        if p != q
    }

    def moves(state: tuple[str, str]) -> list[tuple[str, str, str, float, float]]:
        v, p = state
        out = [(u, q, "link", w, 0.0) for u, q, w in adjacent[v] if q == p]
        for q in speaks[v]:
            price = prices.get((v, p, q))
            if q != p and price is not None:
                out.append((v, q, "translate", *price))
        return out

    # reachability first (an exhaustive search of an unreachable target is slow)
    starts = (
        [(source, source_protocol)]
        if source_protocol is not None
        else [(source, p) for p in sorted(speaks[source])]
    )
    starts = [s for s in starts if s[1] in speaks[source]]
    goal = (
        {(target, target_protocol)}
        if target_protocol is not None
        else {(target, p) for p in speaks[target]}
    )
    seen = set(starts)
    frontier = list(starts)
    while frontier:
        nxt = []
        for state in frontier:
            for u, q, *_ in moves(state):
                if (u, q) not in seen:
                    seen.add((u, q))
                    nxt.append((u, q))
        frontier = nxt
    if not seen & goal:
        return None

    best = math.inf
    budget = [BUDGET]

    def walk(
        state: tuple[str, str],
        visited: set[tuple[str, str]],
        settled: float,
        chain_delay: float,
        chain_loss: float,
    ) -> None:
        nonlocal best
        budget[0] -= 1
        if budget[0] < 0:
            reject()  # a rare dense, nearly free state space: too many walks to enumerate
        chain = chain_delay + mesh.penalty * min(1.0, chain_loss)
        total = settled + chain
        if total >= best:
            return
        if state in goal:
            best = total
            return  # going on costs more (all prices are non-negative)
        for u, q, kind, delay, loss in sorted(moves(state), key=lambda m: m[3]):
            if (u, q) in visited:
                continue
            visited.add((u, q))
            if kind == "link":
                walk((u, q), visited, total + delay, 0.0, 0.0)
            else:
                walk((u, q), visited, settled, chain_delay + delay, chain_loss + loss)
            visited.remove((u, q))

    for start in starts:
        walk(start, {start}, 0.0, 0.0, 0.0)
    return best if math.isfinite(best) else None


def check_valid(
    mesh: Mesh, route: Route, source_protocol: str | None, target_protocol: str | None
) -> None:
    """The route is valid by SPEC §3, and its cost is Definition 12's."""
    graph = mesh.graph
    assert len(route.protocols) == len(route.path) - 1 == route.hops
    for i, p in enumerate(route.protocols):
        link = graph.link(route.path[i], route.path[i + 1])
        assert link is not None and p in link.latency
    for t in route.translations:
        assert t.source != t.target
        assert {t.source, t.target} <= set(graph.agent(t.at).protocols)
        assert t.at in route.path
    expected = route_cost(graph, route.path, route.protocols, source_protocol, target_protocol)
    assert route.cost == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # translations happen exactly where the protocol changes, as one chain there
    pending = list(route.translations)

    def consume(at: str, old: str, new: str) -> None:
        current = old
        while current != new:
            assert pending, f"no translation {old}→{new} at {at}"
            t = pending.pop(0)
            assert (t.at, t.source) == (at, current)
            current = t.target

    previous = source_protocol
    for i, p in enumerate(route.protocols):
        if previous is not None:
            consume(route.path[i], previous, p)
        previous = p
    if target_protocol is not None and previous is not None:
        consume(route.path[-1], previous, target_protocol)
    assert not pending, f"translations where the protocol does not change: {pending}"


# Each property runs 40 examples in the default suite and again 120 in its slow variant
# (``*_exhaustively`` at the end of this module, run by make bench).
PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FULL = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def endpoints(data: st.DataObject, mesh: Mesh) -> tuple[str, str, str | None, str | None]:
    ids = mesh.ids
    source = data.draw(st.sampled_from(ids), label="source")
    target = data.draw(st.sampled_from(ids), label="target")
    protocols = list(mesh.graph.protocols)
    sp = data.draw(st.none() | st.sampled_from(protocols), label="source_protocol")
    tp = data.draw(st.none() | st.sampled_from(protocols), label="target_protocol")
    return source, target, sp, tp


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
    g = nx.Graph()
    g.add_nodes_from(mesh.ids)
    for link in mesh.graph.links:
        if protocol in link.latency:
            g.add_edge(link.a, link.b, weight=link.latency[protocol])
    return g


@PROPS
@given(data=st.data(), mesh=meshes())
def test_bfs_hops_match_networkx(data: st.DataObject, mesh: Mesh) -> None:
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


# --- cost hooks (SPEC §12): a plug-in's repriced and hidden hops -------------------------


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


# --- semantic: an independent tokeniser and cosine ----------------------------------------


def my_tokens(text: str) -> list[str]:
    words: list[str] = []
    current = ""
    for i, ch in enumerate(text):
        if ch in "_-./: \t":
            if current:
                words.append(current)
            current = ""
            continue
        if current and ch.isupper():
            prev = text[i - 1]
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                words.append(current)
                current = ""
        current += ch
    if current:
        words.append(current)
    return [w.lower() for w in words]


def my_cosine(a: list[str], b: list[str]) -> float:
    ca, cb = Counter(a), Counter(b)
    dot = sum(ca[t] * cb[t] for t in ca)
    if not dot:
        return 0.0
    return dot / (
        math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    )


def test_my_tokeniser() -> None:
    assert my_tokens("trainTicket_lookup") == ["train", "ticket", "lookup"]
    assert my_tokens("HTTPServer") == ["http", "server"]
    assert my_tokens("geo:lookup/data.store-x") == ["geo", "lookup", "data", "store", "x"]


NEEDS = st.sampled_from(CAPABILITIES + TOOLS + ("ticket", "train lookup", "nothing_here"))


@PROPS
@given(data=st.data(), mesh=meshes(), need=NEEDS)
def test_semantic_scores_match_the_formula(data: st.DataObject, mesh: Mesh, need: str) -> None:
    router = SemanticRouter(mesh.graph)
    ids = mesh.ids
    source = data.draw(st.sampled_from(ids))
    sp = data.draw(st.none() | st.sampled_from(list(mesh.graph.agent(source).protocols)))
    down_nodes = set(data.draw(st.lists(st.sampled_from(ids), max_size=2))) - {source}
    mesh.down_nodes = down_nodes
    down = DownSet.of(down_nodes)
    ranked = router.rank(source, need, source_protocol=sp, down=down)
    hosts = [a.id for a in mesh.graph.agents if need in a.tools]
    pool = hosts or [x for x in ids if x != source]
    expected_ids = []
    for agent_id in pool:
        agent = mesh.graph.agent(agent_id)
        caps = [t for c in agent.capabilities for t in my_tokens(c)]
        sim = 1.0 if need in agent.tools else my_cosine(my_tokens(need), caps)
        if (
            sim > 0
            and agent_id not in down_nodes
            and brute_force(mesh, source, agent_id, sp) is not None
        ):
            expected_ids.append(agent_id)
    assert sorted(c.agent for c in ranked) == sorted(expected_ids)
    for c in ranked:
        agent = mesh.graph.agent(c.agent)
        caps = [t for cap in agent.capabilities for t in my_tokens(cap)]
        sim = 1.0 if need in agent.tools else my_cosine(my_tokens(need), caps)
        route = c.route
        arrival = route.protocols[-1] if route.protocols else sp
        gamma = agent.protocols[arrival] if arrival else max(agent.protocols.values())
        cost = brute_force(mesh, source, c.agent, sp)
        assert cost is not None
        assert route.cost == pytest.approx(cost, rel=1e-9, abs=1e-12)
        assert c.similarity == pytest.approx(sim, rel=1e-12)
        assert c.affinity == gamma
        assert c.score == pytest.approx(sim * gamma * (1.0 / (1.0 + cost)), rel=1e-9)
        check_valid(mesh, route, sp, None)
        assert not set(route.path) & down_nodes
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)
    if ranked:
        best = router.resolve(source, need, source_protocol=sp, down=down)
        assert best.path[-1] == ranked[0].agent
        assert best.router == "semantic"
    else:
        with pytest.raises(NoRoute):
            router.resolve(source, need, source_protocol=sp, down=down)


def exhaustively(test: Any, **strategies: Any) -> Any:
    """The property checked by ``test`` at FULL examples, marked slow."""
    return pytest.mark.slow(FULL(given(**strategies)(test.hypothesis.inner_test)))


ROUTE_DRAWS = {"data": st.data(), "mesh": meshes()}
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
test_a_router_with_cost_hooks_is_exact_exhaustively = exhaustively(
    test_a_router_with_cost_hooks_is_exact, **ROUTE_DRAWS
)
test_semantic_scores_match_the_formula_exhaustively = exhaustively(
    test_semantic_scores_match_the_formula, **ROUTE_DRAWS, need=NEEDS
)
