"""The routing oracle shared by the routers' property tests (SPEC §3): random protocol
graphs (:func:`meshes`), a brute force over the (agent, protocol) state space written from
the SPEC independently of ``sim.mesh.routing`` and of ``TranslationTable``
(:func:`brute_force`), and the validity check every returned route must pass
(:func:`check_valid`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from sim.mesh import (
    Agent,
    DownSet,
    Link,
    NoRoute,
    PairRule,
    Protocol,
    ProtocolGraph,
    Route,
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


# The strategies whose arguments never change, built once (a strategy built in each drawing
# is validated again each time: a third of the drawing's cost); the drawings are the same.
_NAME_SETS = st.lists(
    st.sampled_from(("MCP", "MCP+", "A2A", "ANP", "SGD", "U1", "U2", "U3")),
    min_size=1,
    max_size=3,
    unique=True,
)
_FIELD_SETS = st.sets(st.sampled_from(FIELD_POOL))
_RULE_KINDS = st.sampled_from(["none", "none", "forbid", "calibrate", "destroy"])
_LOSSES = st.none() | st.sampled_from([0.0, 1.0]) | st.floats(0, 1)
_DELAYS = st.none() | SMALL_DELAY
_FAILS = st.floats(0, 1)
_PENALTIES = st.sampled_from([0.0, 0.01, 1.0]) | st.floats(0, 5)
_AFFINITIES = st.sampled_from([1.0, 0.5]) | st.floats(0.05, 1.0)
_AGENT_TYPES = st.sampled_from(["LLM_AGENT", "GATEWAY", "TOOL_SERVER"])
_CAPABILITY_LISTS = st.lists(st.sampled_from(CAPABILITIES), max_size=3)
_TOOL_LISTS = st.lists(st.sampled_from(TOOLS), max_size=2, unique=True)


@st.composite
def meshes(draw: st.DrawFn, max_agents: int = 7) -> Mesh:
    names = draw(_NAME_SETS)
    fields: dict[str, set[str]] = {}
    for n in names:
        if n in BUILTIN:
            fields[n] = set(BUILTIN[n])
        else:
            fields[n] = set(draw(_FIELD_SETS))
    rules: dict[tuple[str, str], PairRule] = {}
    for p, q in itertools.permutations(names, 2):
        kind = draw(_RULE_KINDS)
        if kind == "forbid":
            rules[(p, q)] = PairRule(p, q, allowed=False)
        elif kind == "calibrate":
            rules[(p, q)] = PairRule(
                p,
                q,
                loss=draw(_LOSSES),
                delay=draw(_DELAYS),
            )
        elif kind == "destroy":
            rules[(p, q)] = PairRule(p, q, destructive=True, fail=draw(_FAILS))
    penalty = draw(_PENALTIES)
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
        affinities = {p: draw(_AFFINITIES) for p in speaks}
        agents.append(
            Agent(
                id=f"a{i}",
                type=draw(_AGENT_TYPES),
                protocols=affinities,
                capabilities=tuple(draw(_CAPABILITY_LISTS)),
                tools=tuple(draw(_TOOL_LISTS)),
                translation_delay=draw(_DELAYS),
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


def down_set(data: st.DataObject, mesh: Mesh) -> DownSet:
    """Up to two of the mesh's agents down."""
    return DownSet.of(data.draw(st.sets(st.sampled_from(mesh.ids), max_size=2), label="down"))


def answer(call: Callable[..., Route], *args: Any, **kwargs: Any) -> Route | str:
    """The route ``call(*args, **kwargs)`` returns, or its NoRoute reason."""
    try:
        return call(*args, **kwargs)
    except NoRoute as exc:
        return f"NoRoute: {exc.reason}"


def same(a: Route | str, b: Route | str) -> None:
    """Equal routes, the same cost bits and translation positions (or the same reason)."""
    assert a == b
    if isinstance(a, Route) and isinstance(b, Route):
        assert repr(a.cost) == repr(b.cost)
        assert [t.position for t in a.translations] == [t.position for t in b.translations]


def exhaustively(test: Any, **strategies: Any) -> Any:
    """The property checked by ``test`` at FULL examples, marked slow."""
    return pytest.mark.slow(FULL(given(**strategies)(test.hypothesis.inner_test)))


#: The draws of the route properties (their slow variants re-draw with FULL).
ROUTE_DRAWS = {"data": st.data(), "mesh": meshes()}
