"""The protocol graph G = (V, E, P, Φ, Γ) of the Protocol Graph Model.

V are agents with their type, capabilities, tools and Γ(v, p) affinities; E are
undirected links with Φ(e) and the mean one-way latency w_e(p) in seconds (a protocol
whose latency is a distribution keeps its law too, and w_e(p) is its mean); P and the
translation table give τ. The graph is built once from a scenario; ``version``
increases on every topology change, so routers know when their caches are stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sim.longlived import long_lived
from sim.mesh.capabilities import Bag, bag, bag_cosine, capability_bag, cosine, tokens
from sim.mesh.errors import NodeNotFound, ProtocolNotFound
from sim.mesh.protocols import BUILTIN_FIELDS, PairRule, Protocol, TranslationTable
from sim.scenario.model import Distribution, Law, Scenario


@dataclass(frozen=True, slots=True)
class Agent:
    """A node v ∈ V. ``protocols`` maps each spoken protocol to Γ(v, p) ∈ (0, 1]."""

    id: str
    type: str
    protocols: Mapping[str, float]
    capabilities: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    translation_delay: float | None = None  # seconds; None: the pair's or routing default
    concurrency: int = 8

    @property
    def speaks(self) -> frozenset[str]:
        """protos(v)."""
        return frozenset(self.protocols)


@dataclass(frozen=True, slots=True)
class Link:
    """An undirected edge e = {a, b}: Φ(e) with w_e(p) in seconds, and jitter (seconds).

    ``laws`` holds the protocols whose crossings are drawn from a distribution (their
    w_e(p) in ``latency`` is the law's mean; they have no jitter)."""

    a: str
    b: str
    latency: Mapping[str, float]
    jitter: float = 0.0
    laws: Mapping[str, Law] = field(default_factory=dict)
    #: the two agent ids, built once (the graph, the routers and the engine share it)
    ends: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ends", frozenset((self.a, self.b)))

    def other(self, end: str) -> str:
        """The end that is not ``end``."""
        return self.b if end == self.a else self.a


class ProtocolGraph:
    """G = (V, E, P, Φ, Γ) with the translation table τ.

    Agents and protocols keep the order they were given in; every iteration over the
    graph follows it, so routes do not depend on hashing.
    """

    def __init__(
        self,
        agents: Iterable[Agent],
        links: Iterable[Link],
        table: TranslationTable,
    ) -> None:
        self.table = table
        self.protocols: tuple[str, ...] = table.names
        self._agents: dict[str, Agent] = {}
        self._links: dict[frozenset[str], Link] = {}
        self._adjacent: dict[str, list[Link]] = {}
        self._hosts: dict[str, tuple[str, ...]] | None = None
        self._matches: dict[str, dict[str, float]] = {}
        self._bags: list[tuple[str, Bag]] | None = None  # caps(a) by agent, graph order
        self.version = 0
        for agent in agents:
            self.add_agent(agent)
        for link in links:
            self.add_link(link)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> ProtocolGraph:
        """Build G from a validated scenario (objects kept long:
        :func:`sim.longlived.long_lived`)."""
        with long_lived():
            return cls._of(scenario)

    @classmethod
    def _of(cls, scenario: Scenario) -> ProtocolGraph:
        protocols = [
            Protocol(p.name, p.carries() or BUILTIN_FIELDS[p.name], p.behaviour())
            for p in scenario.protocols
        ]
        rules = [
            PairRule(t.from_, t.to, t.allowed, t.loss, t.delay, t.destructive, t.fail)
            for t in scenario.translations
        ]
        table = TranslationTable(
            protocols,
            rules,
            loss_penalty=scenario.routing.loss_penalty,
            default_delay=scenario.routing.translation_delay,
        )
        agents = [
            Agent(
                id=a.id,
                type=a.type.value,
                protocols=dict(a.protocols),
                capabilities=tuple(a.capabilities),
                tools=tuple(a.tools),
                translation_delay=a.translation_delay,
                concurrency=a.concurrency,
            )
            for a in scenario.agents
        ]
        links = [_link(spec.between, spec.latency, spec.jitter) for spec in scenario.links]
        return cls(agents, links, table)

    # --- V ---------------------------------------------------------------------------

    @property
    def agents(self) -> tuple[Agent, ...]:
        """V, in the order given."""
        return tuple(self._agents.values())

    def agent(self, agent_id: str) -> Agent:
        """The agent ``agent_id``; :class:`NodeNotFound` if absent."""
        try:
            return self._agents[agent_id]
        except KeyError:
            raise NodeNotFound(agent_id, self._agents) from None

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._agents

    def __len__(self) -> int:
        return len(self._agents)

    def affinity(self, agent_id: str, protocol: str) -> float:
        """Γ(v, p): 0 when v does not speak p."""
        return self.agent(agent_id).protocols.get(protocol, 0.0)

    def hosts(self, tool: str) -> tuple[str, ...]:
        """Ids of the agents hosting ``tool``, in graph order (indexed once per topology)."""
        if self._hosts is None:
            index: dict[str, list[str]] = {}
            for agent in self._agents.values():
                for name in agent.tools:
                    index.setdefault(name, []).append(agent.id)
            self._hosts = {name: tuple(ids) for name, ids in index.items()}
        return self._hosts.get(tool, ())

    def matches(self, capability: str) -> Mapping[str, float]:
        """sim(capability, caps(a)) > 0 by agent id, best first (ties: graph order);
        computed once per capability and topology (a call that names no hosted tool asks
        it again at every call)."""
        found = self._matches.get(capability)
        if found is None:
            if self._bags is None:
                self._bags = [(a.id, capability_bag(a.capabilities)) for a in self._agents.values()]
            want = bag(tokens(capability))
            scored = [(bag_cosine(want, b), i, aid) for i, (aid, b) in enumerate(self._bags)]
            scored.sort(key=lambda s: (-s[0], s[1]))
            found = self._matches[capability] = {aid: sim for sim, _, aid in scored if sim > 0}
        return found

    def check_protocol(self, protocol: str) -> None:
        """:class:`ProtocolNotFound` unless ``protocol`` ∈ P."""
        if protocol not in self.protocols:
            raise ProtocolNotFound(protocol, self.protocols)

    # --- E ---------------------------------------------------------------------------

    @property
    def links(self) -> tuple[Link, ...]:
        """E, in the order given."""
        return tuple(self._links.values())

    def link(self, a: str, b: str) -> Link | None:
        """The link between ``a`` and ``b``, or None."""
        return self._links.get(frozenset((a, b)))

    def incident(self, agent_id: str) -> list[Link]:
        """Links at ``agent_id``, in the order they were added."""
        return self._adjacent[agent_id]

    # --- topology changes (each bumps ``version``) -----------------------------------

    def add_agent(self, agent: Agent) -> None:
        """Add a node; an existing id is replaced only if it has no links."""
        if agent.id in self._agents and self._adjacent[agent.id]:
            raise ValueError(f"agent '{agent.id}' exists and has links")
        for protocol in agent.protocols:
            self.check_protocol(protocol)
        self._agents[agent.id] = agent
        self._adjacent.setdefault(agent.id, [])
        self._hosts = None
        self._matches.clear()
        self._bags = None
        self.version += 1

    def add_link(self, link: Link) -> None:
        """Add an edge between two existing agents that both speak its protocols."""
        if link.a == link.b:
            raise ValueError(f"a link joins two different agents ('{link.a}' twice)")
        for end in (link.a, link.b):
            agent = self.agent(end)
            for protocol in link.latency:
                self.check_protocol(protocol)
                if protocol not in agent.protocols:
                    raise ValueError(f"agent '{end}' does not speak {protocol}")
        if link.ends in self._links:
            raise ValueError(f"a link between '{link.a}' and '{link.b}' exists")
        self._links[link.ends] = link
        self._adjacent[link.a].append(link)
        self._adjacent[link.b].append(link)
        self.version += 1

    def remove_link(self, a: str, b: str) -> Link:
        """Remove and return the link between ``a`` and ``b``."""
        link = self._links.pop(frozenset((a, b)), None)
        if link is None:
            raise KeyError(f"no link between '{a}' and '{b}'")
        self._adjacent[link.a].remove(link)
        self._adjacent[link.b].remove(link)
        self.version += 1
        return link


def _link(ends: Sequence[str], latency: Mapping[str, float | Distribution], jitter: float) -> Link:
    """The graph's link of a scenario's: a distribution's weight is its law's mean."""
    weights: dict[str, float] = {}
    laws: dict[str, Law] = {}
    for protocol, value in latency.items():
        if isinstance(value, Distribution):
            law = laws[protocol] = value.law()
            weights[protocol] = law.mean()
        else:
            weights[protocol] = float(value)
    return Link(ends[0], ends[1], weights, jitter, laws)


def served_tool(hosted: Sequence[str], tool: str | None, capability: str | None) -> str | None:
    """The tool a task calls at an agent hosting ``hosted``: ``tool`` if hosted there,
    else for a ``capability`` the hosted tool whose name matches its tokens best (the
    first on ties); None when there is none."""
    if tool is not None:
        return tool if tool in hosted else None
    if not hosted:
        return None
    want = tokens(capability or "")
    best = max(range(len(hosted)), key=lambda k: (cosine(want, tokens(hosted[k])), -k))
    return hosted[best]
