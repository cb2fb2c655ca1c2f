"""Seeded topologies: the ``topology:`` block.

:func:`expand` turns a :class:`~sim.scenario.model.TopologySpec` into agents and links
that the loader appends to the explicit ones *before* the rules run, so every
generated item is checked like a written one. The same block and seed give the same
mesh, on every machine (``random.Random`` and networkx's seeded generators only;
Barabási–Albert grown as networkx grows it, without networkx:
:mod:`sim.scenario.structure`).

How the mesh is built:

1. **Structure**: the generator's graph on ``agents`` nodes (``grid`` takes ``rows`` ×
   ``cols`` = ``agents``; ``erdos_renyi`` takes ``p`` or a mean ``degree``).
2. **Roles**: ``round(gateways × agents)`` agents (at least one) are GATEWAYs speaking
   every listed protocol; the highest-degree nodes get the role (hubs, where a
   gateway belongs). The others get a type by the ``types`` shares (in index order,
   largest remainder, then shuffled with the seed).
3. **Protocols**: a non-gateway agent speaks each protocol with its share as
   probability, and at least one (drawn by the shares). Affinities are uniform in
   ``affinity`` (3 decimals).
4. **Links**: an edge whose ends share no protocol is dropped; the others carry every
   shared protocol, each with a mean latency drawn from ``latency`` (rounded to the
   microsecond). Each component that does not contain the first gateway is then
   joined to a gateway (which shares a protocol with everyone), so the mesh is
   connected.
5. **Tools**: each ``tools`` entry is placed on ``replicas`` distinct generated
   TOOL_SERVERs (seeded choice).
6. **Attach**: each explicit agent of ``attach`` gets ``links`` links to generated
   agents that share a protocol with it, gateways first.

Generated items are built with ``model_construct`` (no pydantic validation): their
values are correct by construction from a validated block, and validating 10,000
agents and 20,000 links one by one would take seconds. Ids are ``<id_prefix><index>``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from sim.scenario.diagnostics import FieldPath
from sim.scenario.model import (
    MAX_MESH_SIZE,
    AgentSpec,
    AgentType,
    Distribution,
    LinkSpec,
    TopologySpec,
)
from sim.scenario.structure import Structure, barabasi_albert, components, from_networkx


class GenerationError(ValueError):
    """A ``topology:`` block that cannot be expanded; ``where`` is relative to the block."""

    def __init__(self, message: str, *where: str | int) -> None:
        super().__init__(message)
        self.where: FieldPath = where


@dataclass(frozen=True)
class Generated:
    """The expansion of a topology block."""

    agents: list[AgentSpec]
    links: list[LinkSpec]


def _int_param(spec: TopologySpec, name: str, default: int | None = None) -> int:
    value = spec.params.get(name)
    if value is None:
        if default is None:
            raise GenerationError(f"{spec.generator} needs params.{name}", "params")
        return default
    if value != int(value) or value < 1:
        raise GenerationError(
            f"params.{name} must be a whole number ≥ 1 (got {value:g})", "params", name
        )
    return int(value)


def _unit_param(spec: TopologySpec, name: str, default: float, open_low: bool) -> float:
    """A parameter that lies in [0, 1], or (0, 1] with ``open_low``: the generator is
    defined on nothing else (waxman's alpha 0 divided by zero inside networkx, a rewiring
    probability of 1.5 generated a mesh)."""
    value = spec.params.get(name, default)
    if not (0 < value <= 1 if open_low else 0 <= value <= 1):
        span = "(0, 1]" if open_low else "[0, 1]"
        raise GenerationError(
            f"{spec.generator} needs params.{name} in {span} (got {value:g})", "params", name
        )
    return value


def _number(spec: TopologySpec, name: str, default: float) -> float:
    """A parameter for :func:`estimated_links`: its value where it is a number ≥ 0."""
    value = spec.params.get(name, default)
    return value if isinstance(value, int | float) and value >= 0 else default


def estimated_links(spec: TopologySpec) -> tuple[float, FieldPath, str]:
    """The links the block's generator makes before any is dropped or added (their
    expectation for a random one; an upper bound for waxman), the parameter that sets
    them (relative to the block) and how they were counted. Cheap: nothing is built."""
    n = spec.agents
    pairs = n * (n - 1) / 2
    kind = spec.generator
    if kind == "barabasi_albert":
        m = _number(spec, "m", 1)
        return m * max(0, n - m), ("params", "m"), f"m × (agents − m), m = {m:g}"
    if kind == "waxman":
        beta = _number(spec, "beta", 0.4)
        return beta * pairs, ("agents",), f"at most beta × agents × (agents − 1) / 2, beta {beta:g}"
    if kind == "grid":
        return 2.0 * n, ("agents",), "about 2 per agent"
    if kind == "erdos_renyi":
        if "p" in spec.params:
            p = _number(spec, "p", 0)
            return p * pairs, ("params", "p"), f"p × agents × (agents − 1) / 2, p = {p:g}"
        degree = _number(spec, "degree", 4.0)
        return degree * n / 2, ("params", "degree"), f"degree × agents / 2, degree {degree:g}"
    if kind == "random_regular":
        d = _number(spec, "degree", 0)
        return d * n / 2, ("params", "degree"), f"degree × agents / 2, degree {d:g}"
    if kind == "watts_strogatz":
        k = _number(spec, "k", 0)
        return (k // 2) * n, ("params", "k"), f"(k ÷ 2) × agents, k = {k:g}"
    return 0.0, ("generator",), ""


def check_size(spec: TopologySpec) -> None:
    """Raise :class:`GenerationError` at the parameter that drives it when the block
    would generate more than :data:`MAX_MESH_SIZE` agents and links together (every
    generated mesh is connected: at least ``agents − 1`` links; ``attach`` adds its own)."""
    n = spec.agents
    links = max(estimated_links(spec)[0], n - 1) + sum(a.links for a in spec.attach)
    if n + links <= MAX_MESH_SIZE:
        return
    _, where, counted = estimated_links(spec)
    raise GenerationError(
        f"{spec.generator} would generate {n:,} agents and about {links:,.0f} links "
        f"({counted}): at most {MAX_MESH_SIZE:,} agents and links together (a run holds "
        "about 3.5 KB for each; give fewer agents or a smaller degree)",
        *where,
    )


def structure(spec: TopologySpec, seed: int) -> Structure:
    """The generator's graph on nodes 0..agents-1 (:func:`check_size` first)."""
    n = spec.agents
    kind = spec.generator
    check_size(spec)
    if kind == "barabasi_albert":
        m = _int_param(spec, "m")
        if m >= n:
            raise GenerationError(
                f"barabasi_albert needs m < agents (m={m}, agents={n})", "params", "m"
            )
        return barabasi_albert(n, m, seed)
    import networkx as nx  # only for these generators

    if kind == "waxman":
        if n > 5000:
            raise GenerationError(
                "waxman is quadratic in the number of agents: use it up to 5000 agents",
                "agents",
            )
        alpha = _unit_param(spec, "alpha", 0.1, open_low=True)
        beta = _unit_param(spec, "beta", 0.4, open_low=True)
        graph = nx.waxman_graph(n, beta=beta, alpha=alpha, seed=seed)
        return from_networkx(nx.convert_node_labels_to_integers(graph, ordering="sorted"))
    if kind == "grid":
        rows = spec.params.get("rows")
        cols = spec.params.get("cols")
        if rows is None and cols is None:
            side = round(n**0.5)
            r, c = side, n // side if side else 0
        else:
            r = _int_param(spec, "rows", n // _int_param(spec, "cols") if cols else None)
            c = _int_param(spec, "cols", n // r)
        if r * c != n:
            raise GenerationError(f"grid needs rows × cols = agents ({r} × {c} ≠ {n})", "params")
        graph = nx.grid_2d_graph(r, c)
        return from_networkx(nx.convert_node_labels_to_integers(graph, ordering="sorted"))
    if kind == "erdos_renyi":
        p = spec.params.get("p")
        if p is None:
            p = spec.params.get("degree", 4.0) / max(1, n - 1)
        if not 0 <= p <= 1:
            raise GenerationError(f"erdos_renyi p must be in [0, 1] (got {p:g})", "params")
        return from_networkx(nx.fast_gnp_random_graph(n, p, seed=seed))
    if kind == "random_regular":
        d = _int_param(spec, "degree")
        if d >= n or (d * n) % 2:
            raise GenerationError(
                f"random_regular needs degree < agents and degree × agents even (got {d}, {n})",
                "params",
                "degree",
            )
        return from_networkx(nx.random_regular_graph(d, n, seed=seed))
    if kind == "watts_strogatz":
        k = _int_param(spec, "k")
        if k >= n:
            raise GenerationError(f"watts_strogatz needs k < agents (k={k})", "params", "k")
        p = _unit_param(spec, "p", 0.1, open_low=False)
        return from_networkx(nx.watts_strogatz_graph(n, k, p, seed=seed))
    raise GenerationError(f"unknown generator '{kind}'", "generator")


def _type_counts(spec: TopologySpec, others: int) -> list[str]:
    shares = {t: s for t, s in spec.types.items() if s > 0}
    total = sum(shares.values())
    if not shares or total <= 0:
        raise GenerationError("types: at least one share must be above 0", "types")
    exact = {t: others * s / total for t, s in shares.items()}
    counts = {t: int(v) for t, v in exact.items()}
    left = others - sum(counts.values())
    for t in sorted(exact, key=lambda t: (-(exact[t] - counts[t]), t))[:left]:
        counts[t] += 1
    out: list[str] = []
    for t in sorted(counts):
        out += [t] * counts[t]
    return out


def expand(spec: TopologySpec, seed: int, explicit: Sequence[AgentSpec] = ()) -> Generated:
    """The agents and links of ``spec`` (seeded by ``spec.seed``, else ``seed``)."""
    root = spec.seed if spec.seed is not None else seed
    rng = random.Random(root)
    graph = structure(spec, rng.randrange(2**31))
    n = spec.agents
    protocols = list(spec.protocols)
    ids = [f"{spec.id_prefix}{i}" for i in range(n)]
    taken = {a.id for a in explicit}
    clash = next((i for i in ids if i in taken), None)
    if clash is not None:
        raise GenerationError(
            f"generated id '{clash}' is already an explicit agent's; change id_prefix", "id_prefix"
        )

    # roles: gateways on the hubs, the other types shuffled
    n_gw = max(1, round(spec.gateways * n))
    degree = graph.degrees()
    by_degree = sorted(range(n), key=lambda v: (-degree[v], v))
    gateways = set(by_degree[:n_gw])
    others = [v for v in range(n) if v not in gateways]
    types = _type_counts(spec, len(others)) if others else []
    rng.shuffle(types)
    type_of: dict[int, str] = dict.fromkeys(gateways, AgentType.GATEWAY.value)
    type_of.update(zip(others, types, strict=True))

    # protocols and affinities
    weights = [spec.protocols[p] for p in protocols]
    low, high = spec.affinity.min, spec.affinity.max
    speaks: list[list[str]] = []
    for v in range(n):
        if v in gateways:
            chosen = list(protocols)
        else:
            chosen = [p for p, w in zip(protocols, weights, strict=True) if rng.random() < w]
            if not chosen:
                chosen = rng.choices(protocols, weights=weights if sum(weights) > 0 else None)
        speaks.append(chosen)
    affinity = [{p: round(rng.uniform(low, high), 3) for p in s} for s in speaks]

    # tool placement
    servers = [v for v in range(n) if type_of[v] == AgentType.TOOL_SERVER.value]
    hosted: dict[int, list[str]] = {}
    for j, placement in enumerate(spec.tools):
        if placement.replicas > len(servers):
            raise GenerationError(
                f"tool '{placement.name}' wants {placement.replicas} replicas but the topology "
                f"has {len(servers)} TOOL_SERVER agents",
                "tools",
                j,
                "replicas",
            )
        for v in sorted(rng.sample(servers, placement.replicas)):
            hosted.setdefault(v, []).append(placement.name)

    agents = [
        AgentSpec.model_construct(
            id=ids[v],
            type=AgentType(type_of[v]),
            capabilities=[],
            protocols=affinity[v],
            translation_delay=None,
            tools=hosted.get(v, []),
            concurrency=spec.concurrency,
        )
        for v in range(n)
    ]

    # links over shared protocols; then connect the components through gateways
    def latency_of(p: str) -> Distribution:
        return (
            spec.latency[p]
            if isinstance(spec.latency, dict) and p in spec.latency
            else (spec.latency if isinstance(spec.latency, Distribution) else _DEFAULT_LATENCY)
        )

    sets = [set(s) for s in speaks]
    edges = [(a, b) for a, b in graph.edges if sets[a] & sets[b]]
    kept = set(edges)
    hub = by_degree[0]
    gw_list = sorted(gateways)
    for nodes in components(n, edges):
        component = set(nodes)
        if hub in component:
            continue
        member = nodes[0]
        gw = next((g for g in gw_list if g in component), None)
        target = hub if gw is None else gw
        if gw is not None:
            member = gw
        a, b = min(member, target), max(member, target)
        if member == target:
            continue
        if (a, b) not in kept:
            edges.append((a, b))
            kept.add((a, b))
    # one sampler per protocol, each drawing from rng as Law.draw does (the same draws)
    latency = {p: latency_of(p).law().sampler(rng) for p in protocols}
    links: list[LinkSpec] = []
    for a, b in edges:
        shared = [p for p in protocols if p in sets[a] and p in sets[b]]
        links.append(
            LinkSpec.model_construct(
                between=[ids[a], ids[b]],
                latency={p: round(latency[p](), 6) for p in shared},
                jitter=spec.jitter,
            )
        )

    # explicit agents attached to the mesh
    by_id = {a.id: a for a in explicit}
    for j, att in enumerate(spec.attach):
        agent = by_id.get(att.agent)
        if agent is None:
            continue  # the rules report the unknown id
        own = set(agent.protocols)
        candidates = [v for v in by_degree if own & sets[v]]
        gws = [v for v in candidates if v in gateways]
        rest = [v for v in candidates if v not in gateways]
        rng.shuffle(gws)
        rng.shuffle(rest)
        picked = (gws + rest)[: att.links]
        if not picked:
            raise GenerationError(
                f"agent '{att.agent}' shares no protocol with any generated agent",
                "attach",
                j,
                "agent",
            )
        for v in picked:
            shared = [p for p in protocols if p in own and p in sets[v]]
            links.append(
                LinkSpec.model_construct(
                    between=[att.agent, ids[v]],
                    latency={p: round(latency[p](), 6) for p in shared},
                    jitter=spec.jitter,
                )
            )
    return Generated(agents, links)


_DEFAULT_LATENCY = Distribution(dist="uniform", low=0.001, high=0.02)
