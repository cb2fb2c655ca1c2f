"""Routes: a path π with protocols σ, its translations and Definition 12's cost.

A route from s to d is a path π = (v0..vk) with protocols σ = (p0..pk-1), p_i ∈ Φ(v_i,
v_i+1), and translations where the protocol changes. Its cost (seconds-equivalent) is
Definition 12 of the Protocol Graph Model: Σ w_e(p_i) + Σ τ(p_i, p_i+1, v_i), plus
τ(p_s, p0, s) with a source protocol and τ(p_k-1, p_t, d) with a target protocol.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.mesh.graph import ProtocolGraph
from sim.mesh.protocols import Transformer


@dataclass(frozen=True, slots=True)
class Translation:
    """A protocol change at node ``at``, from ``source`` to ``target``."""

    at: str
    source: str
    target: str
    #: index in the route's path of the visit of ``at`` where it happens (-1: unknown)
    position: int = field(default=-1, compare=False)

    def to_json(self) -> dict[str, str]:
        """``{"at", "from", "to"}`` as SPEC §7 prints it."""
        return {"at": self.at, "from": self.source, "to": self.target}


@dataclass(frozen=True, slots=True)
class Route:
    """A route π with protocols σ, its translations and cost (seconds-equivalent)."""

    router: str
    path: tuple[str, ...]
    protocols: tuple[str, ...]
    translations: tuple[Translation, ...]
    cost: float

    @property
    def hops(self) -> int:
        """Number of links crossed."""
        return len(self.path) - 1

    @property
    def source(self) -> str:
        """v0."""
        return self.path[0]

    @property
    def target(self) -> str:
        """vk."""
        return self.path[-1]

    def describe(self) -> str:
        """``planner -MCP+-> gw2 [MCP+→MCP] -MCP-> tickets``."""
        out = ""
        for i, node in enumerate(self.path):
            if i:
                out += f" -{self.protocols[i - 1]}-> "
            out += node
            for t in self.translations:
                if t.position == i or (t.position < 0 and t.at == node):
                    out += f" [{t.source}→{t.target}]"
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``route --json`` object of SPEC §7."""
        return {
            "router": self.router,
            "from": self.source,
            "to": self.target,
            "path": list(self.path),
            "protocols": list(self.protocols),
            "translations": [t.to_json() for t in self.translations],
            "cost": self.cost,
            "hops": self.hops,
        }


@dataclass(frozen=True, slots=True)
class DownSet:
    """Nodes and links known to be down; links are unordered pairs of agent ids."""

    nodes: frozenset[str] = frozenset()
    links: frozenset[frozenset[str]] = frozenset()

    @classmethod
    def of(cls, nodes: Iterable[str] = (), links: Iterable[Iterable[str]] = ()) -> DownSet:
        """Build from any iterables."""
        return cls(frozenset(nodes), frozenset(frozenset(link) for link in links))

    def __bool__(self) -> bool:
        return bool(self.nodes or self.links)

    def describe(self) -> str:
        """``gw1, link a–b`` for messages."""
        parts = sorted(self.nodes) + sorted("–".join(sorted(link)) for link in self.links)
        return ", ".join(parts)


NO_DOWN = DownSet()


def route_cost(
    graph: ProtocolGraph,
    path: Sequence[str],
    protocols: Sequence[str],
    source_protocol: str | None = None,
    target_protocol: str | None = None,
) -> float:
    """Definition 12's cost of (π, σ): link latencies plus τ at each protocol change.

    Raises ``ValueError`` when the route is not valid (a protocol not on its link, a
    translation the node cannot make).
    """
    if len(protocols) != len(path) - 1:
        raise ValueError("a route has one protocol per hop")
    cost = 0.0
    previous = source_protocol
    for i, protocol in enumerate(protocols):
        link = graph.link(path[i], path[i + 1])
        if link is None or protocol not in link.latency:
            raise ValueError(f"no {protocol} link between '{path[i]}' and '{path[i + 1]}'")
        cost += _tau_at(graph, path[i], previous, protocol)
        cost += link.latency[protocol]
        previous = protocol
    if target_protocol is not None:
        cost += _tau_at(graph, path[-1], previous, target_protocol)
    return cost


def _tau_at(graph: ProtocolGraph, at: str, source: str | None, target: str) -> float:
    if source is None or source == target:
        return 0.0
    agent = graph.agent(at)
    tau = graph.table.tau(source, target, agent.speaks, agent.translation_delay)
    if tau is None:
        raise ValueError(f"'{at}' cannot translate {source} to {target}")
    return tau


def transformer_at(graph: ProtocolGraph, at: str, source: str, target: str) -> Transformer | None:
    """The cheapest chain ``source → target`` agent ``at`` can run (None: it cannot)."""
    agent = graph.agent(at)
    hit = graph.table.chains_at(agent.speaks, agent.translation_delay).get((source, target))
    return hit[1] if hit is not None else None


def route_fields(graph: ProtocolGraph, route: Route, start: str) -> frozenset[str]:
    """The descriptor fields kept by every protocol a message issued in ``start`` passes
    through on ``route`` (each translation's whole chain counts; SPEC §2): what a
    discovery over the route can carry."""
    table = graph.table
    seen = {start, *route.protocols}
    for tr in route.translations:
        chain = transformer_at(graph, tr.at, tr.source, tr.target)
        seen.update(chain.chain if chain is not None else (tr.source, tr.target))
    fields = frozenset(table.fields(start))
    for p in seen:
        fields &= table.fields(p)
    return fields


def arrival(route: Route, start: str) -> str:
    """The protocol a message issued in ``start`` arrives in at the route's end."""
    end = route.protocols[-1] if route.protocols else start
    last = len(route.path) - 1
    for tr in route.translations:
        if (tr.position if tr.position >= 0 else route.path.index(tr.at)) == last:
            end = tr.target
    return end


@dataclass(frozen=True, slots=True)
class TranslationStep:
    """What translating ``source → target`` at node ``at`` does (SPEC §2): the cheapest
    chain the node can run (``chain``, protocols in order), its total ``delay`` in
    seconds (each step: the node's own delay, else the pair's calibrated one, else the
    routing default), the probability ``fail`` that it fails (⊥), the descriptor fields
    it drops, its ``kind`` (lossless, lossy, destructive); ``ok`` False: the node cannot
    make it (``kind`` forbidden, ``fail`` 1). The engine and the live mesh share it."""

    at: str
    source: str
    target: str
    delay: float
    fail: float
    dropped: tuple[str, ...]
    kind: str
    ok: bool
    chain: tuple[str, ...]


def translation_step(graph: ProtocolGraph, at: str, source: str, target: str) -> TranslationStep:
    """The :class:`TranslationStep` of ``source → target`` at ``at``."""
    table = graph.table
    transformer = transformer_at(graph, at, source, target)
    if transformer is None:
        return TranslationStep(
            at, source, target, 0.0, 1.0, (), "forbidden", False, (source, target)
        )
    node_delay = graph.agent(at).translation_delay
    delay = 0.0
    chain = transformer.chain
    for a, b in itertools.pairwise(chain):
        direct = table.direct(a, b)
        assert direct is not None
        delay += table.step_delay(direct, node_delay)
    return TranslationStep(
        at,
        source,
        target,
        delay,
        transformer.fail,
        tuple(sorted(transformer.dropped)),
        transformer.kind.label,
        True,
        chain,
    )


def position_of(route: Route, tr: Translation) -> int:
    """The index in ``route.path`` of the visit where ``tr`` happens."""
    return tr.position if tr.position >= 0 else route.path.index(tr.at)


def reversed_route(route: Route) -> Route:
    """``route`` walked back (a reply's): the path and protocols reversed, each
    translation undone at the same node."""
    last = len(route.path) - 1
    back = [
        Translation(tr.at, tr.target, tr.source, last - position_of(route, tr))
        for tr in route.translations
    ]
    back.sort(key=lambda t: t.position)
    return Route(
        route.router,
        tuple(reversed(route.path)),
        tuple(reversed(route.protocols)),
        tuple(back),
        route.cost,
    )
