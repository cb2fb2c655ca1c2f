"""What a caller can know of a tool in the untimed model: routes and descriptor views.

A caller learns a tool's descriptor by discovery over a route (SPEC §2): the fields
every protocol on the route keeps. :func:`route_options` lists the ways a caller can
reach a server of a need: the router's route on the full topology and, for a router
that reacts to failures (``static`` false: ``resilient``, ``semantic``, dynamic
plug-ins), the route under every combination of the scenario's failed elements (a
down set the caller's suspicions can reach). Options with the same host, fields,
arrival protocol and translations are one option (the model's events would not tell
them apart). No time: these are values computed once per verification.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sim.approval import ApprovalPolicy, decide
from sim.calculus.lts import LTS
from sim.calculus.mcp import Relation, Retry, ToolPlus, ToolView, caller_view, tool_lts
from sim.mesh.errors import NoRoute
from sim.mesh.graph import ProtocolGraph
from sim.mesh.route import NO_DOWN, DownSet, Route
from sim.mesh.routing import Router
from sim.scenario.capabilities import cosine, tokens
from sim.scenario.model import Scenario
from sim.verify.states import Event

#: The error a timeout stands for (SPEC §4).
SERVICE_DOWN = "ServiceDown"
#: Failed elements combined at most (2^n down sets); more are reported as a limit.
MAX_FAILED_ELEMENTS = 10


@dataclass(frozen=True, slots=True)
class Hop:
    """One translation on a route: at ``at``, ``source`` → ``target`` (a chain)."""

    at: str
    source: str
    target: str
    chain: tuple[str, ...]
    dropped: tuple[str, ...]
    kind: str


@dataclass(frozen=True, slots=True)
class RouteOption:
    """One way to reach a server: its path, the tool it serves there, the descriptor
    fields that survive the path, the protocol the request arrives in, the
    translations on the way, and the down set that forces it (empty: full topology)."""

    path: tuple[str, ...]
    tool: str
    fields: frozenset[str]
    arrives: str
    translations: tuple[Hop, ...]
    forced_by: str

    @property
    def host(self) -> str:
        return self.path[-1]

    def key(self) -> tuple[Any, ...]:
        """What the model's events show of the option."""
        return (self.path[-1], self.tool, self.fields, self.arrives, self.translations)


def failed_elements(scenario: Scenario) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
    """The nodes and links the scenario's failures can take down (scheduled or random)."""
    nodes: list[str] = []
    links: list[frozenset[str]] = []
    for f in scenario.failures:
        if f.node is not None and f.node not in nodes:
            nodes.append(f.node)
        if f.link is not None and frozenset(f.link) not in links:
            links.append(frozenset(f.link))
        if f.random is not None:
            nodes.extend(n for n in f.random.nodes if n not in nodes)
            links.extend(frozenset(x) for x in f.random.links if frozenset(x) not in links)
    return tuple(nodes), tuple(links)


def down_sets(scenario: Scenario, static: bool) -> list[DownSet]:
    """The down sets whose routes a caller can take: none for a static router, else
    every subset of the failed elements (the empty one first)."""
    if static:
        return [NO_DOWN]
    nodes, links = failed_elements(scenario)
    elements: list[tuple[str, Any]] = [("node", n) for n in nodes] + [("link", x) for x in links]
    if len(elements) > MAX_FAILED_ELEMENTS:
        raise ValueError(
            f"{len(elements)} failing elements: verify combines at most {MAX_FAILED_ELEMENTS}"
        )
    out = [NO_DOWN]
    for k in range(1, len(elements) + 1):
        for combo in itertools.combinations(elements, k):
            out.append(
                DownSet.of(
                    [e for kind, e in combo if kind == "node"],
                    [e for kind, e in combo if kind == "link"],
                )
            )
    return out


def path_fields(graph: ProtocolGraph, route: Route, start: str) -> frozenset[str]:
    """The descriptor fields kept by every protocol a message issued in ``start`` passes
    through on ``route`` (each translation's whole chain counts), SPEC §2."""
    table = graph.table
    seen = {start, *route.protocols}
    for tr in route.translations:
        seen.update(_chain(graph, tr.at, tr.source, tr.target))
    fields = frozenset(table.fields(start))
    for p in seen:
        fields &= table.fields(p)
    return fields


def _chain(graph: ProtocolGraph, at: str, source: str, target: str) -> tuple[str, ...]:
    agent = graph.agent(at)
    hit = graph.table.chains_at(agent.speaks, agent.translation_delay).get((source, target))
    return hit[1].chain if hit is not None else (source, target)


def _hops(graph: ProtocolGraph, route: Route) -> tuple[Hop, ...]:
    out = []
    for tr in route.translations:
        agent = graph.agent(tr.at)
        hit = graph.table.chains_at(agent.speaks, agent.translation_delay).get(
            (tr.source, tr.target)
        )
        if hit is None:
            out.append(Hop(tr.at, tr.source, tr.target, (tr.source, tr.target), (), "forbidden"))
        else:
            t = hit[1]
            out.append(
                Hop(tr.at, tr.source, tr.target, t.chain, tuple(sorted(t.dropped)), t.kind.label)
            )
    return tuple(out)


def arrival(route: Route, start: str) -> str:
    """The protocol a message issued in ``start`` arrives in at the route's end."""
    end = route.protocols[-1] if route.protocols else start
    for tr in route.translations:
        if tr.position == len(route.path) - 1 or (tr.position < 0 and tr.at == route.path[-1]):
            end = tr.target
    return end


def tool_at(
    graph: ProtocolGraph, tool: str | None, capability: str | None, host: str
) -> str | None:
    """The tool a task calls at ``host``: ``tool`` if hosted there, else for a capability
    the hosted tool whose name matches its tokens best (first on ties)."""
    hosted = graph.agent(host).tools
    if tool is not None:
        return tool if tool in hosted else None
    if not hosted:
        return None
    want = tokens(capability or "")
    best = max(range(len(hosted)), key=lambda k: (cosine(want, tokens(hosted[k])), -k))
    return hosted[best]


def route_options(
    router: Router,
    graph: ProtocolGraph,
    downs: list[DownSet],
    source: str,
    tool: str | None,
    capability: str | None,
    rho: str,
) -> tuple[RouteOption, ...]:
    """Every distinct option to reach a server of the need (empty: no route)."""
    need = tool if tool is not None else capability
    assert need is not None
    seen: dict[tuple[Any, ...], RouteOption] = {}
    for down in downs:
        try:
            route = router.serve(source, need, source_protocol=rho, down=down)
        except NoRoute:
            continue
        served = tool_at(graph, tool, capability, route.path[-1])
        if served is None:
            continue
        option = RouteOption(
            route.path,
            served,
            path_fields(graph, route, rho),
            arrival(route, rho),
            _hops(graph, route),
            down.describe() if down else "",
        )
        seen.setdefault(option.key(), option)
    return tuple(seen.values())


class ToolModel:
    """A caller's view of one tool through one set of fields: what it knows (requires,
    feeds, exclusive, recovery, required inputs) and its invocation LTSs."""

    __slots__ = (
        "_lts",
        "error_types",
        "exclusive",
        "feeds",
        "fields",
        "name",
        "required",
        "requires",
        "sd_retries",
        "view",
    )

    def __init__(self, truth: ToolPlus, fields: frozenset[str], mcp_policy: str, errors: Any):
        self.name = truth.name
        self.fields = fields
        self.view: ToolView = caller_view(truth, fields, mcp_policy)
        d = self.view.descriptor
        schema = d.input_schema or {}
        self.required: tuple[str, ...] = tuple(schema.get("required", ()) or ())
        deps = d.dependencies or ()
        self.requires = tuple(x.tool for x in deps if x.relation == Relation.REQUIRES)
        self.feeds = tuple(x.tool for x in deps if x.relation == Relation.PRODUCES_INPUT_FOR)
        self.exclusive = tuple(x.tool for x in deps if x.relation == Relation.EXCLUSIVE_WITH)
        recovery: dict[str, Any] = {}
        for fm in d.failure_modes or ():
            recovery.setdefault(fm.error, fm.recovery)
        sd = recovery.get(SERVICE_DOWN)
        self.sd_retries = sd.n if isinstance(sd, Retry) else 0
        self.error_types: tuple[str, ...] = tuple(sorted({*errors, SERVICE_DOWN}))
        self._lts: dict[tuple[bool, bool], LTS] = {}

    def lts(self, gate: bool, sgd: bool) -> LTS:
        """The invocation LTS with or without the gate, in the SGD dialect or not."""
        key = (gate, sgd)
        hit = self._lts.get(key)
        if hit is None:
            hit = self._lts[key] = tool_lts(
                self.view,
                approval=gate,
                error_types=self.error_types,
                dialect="sgd" if sgd else "mcp",
            )
        return hit

    def gate(self, policy: ApprovalPolicy, args: Mapping[str, Any]) -> bool:
        """Whether the caller asks for approval for a call with ``args`` (the policy)."""
        return decide(policy, self.view, args)


def list_events(
    option: RouteOption, view: ToolView, task: int, caller: str, rho: str
) -> list[Event]:
    """The events of a discovery over ``option``: its translations (at the translating
    agent, in the request's direction), then the ``list`` with what the caller learned."""
    evs: list[Event] = []
    for hop in option.translations:
        detail = (
            ("at", hop.at),
            ("chain", hop.chain),
            ("dropped", hop.dropped),
            ("from_proto", hop.source),
            ("kind", hop.kind),
            ("to_proto", hop.target),
        )
        evs.append(("translate", task, option.tool, hop.at, hop.source, detail))
    listed = (
        ("host", option.host),
        ("fields", tuple(sorted(option.fields))),
        ("approval", view.approval),
        ("approval_reason", view.approval_reason),
    )
    evs.append(("list", task, option.tool, caller, rho, listed))
    return evs
