"""What a caller can know of a tool in the untimed model: routes and descriptor views.

A caller learns a tool's descriptor by discovery over a route (SPEC §2): the fields
every protocol on the route keeps. :func:`route_options` lists the ways a caller can
reach a server of a need: the router's route on the full topology and, for a router
that reacts to failures (``static`` false: ``resilient``, ``semantic``, dynamic
plug-ins), the route under every set of nodes and links the caller can suspect at once
(:func:`suspicion_sets`). Options with the same host, fields,
arrival protocol and translations are one option (the model's events would not tell
them apart). No time: these are values computed once per verification.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.approval import ApprovalPolicy, Decision, approval
from sim.calculus.lts import LTS
from sim.calculus.mcp import (
    SERVICE_DOWN,
    Fallback,
    ToolPlus,
    ToolView,
    caller_view,
    knowledge,
)
from sim.calculus.mcp.dialects import Dialect
from sim.mesh.errors import NoRoute
from sim.mesh.graph import ProtocolGraph, served_tool
from sim.mesh.route import NO_DOWN, DownSet, Route, arrival, route_fields, transformer_at
from sim.mesh.routing import Router
from sim.scenario.model import Scenario
from sim.verify.states import Event

#: Suspect sets of one caller whose routes are explored, by default (smallest first);
#: past them a property that holds on what was explored is ``undecided``.
MAX_SUSPECT_SETS = 256


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
    translations on the way, and the suspects that force it (empty: full topology)."""

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


@dataclass(frozen=True, slots=True)
class Suspicions:
    """The suspect sets whose routes a caller's calls can take (the empty one first,
    then smallest first), and whether they are all of them (False: ``bound`` cut)."""

    sets: tuple[DownSet, ...]
    complete: bool


def suspicion_sets(
    router: Router,
    graph: ProtocolGraph,
    source: str,
    needs: Sequence[tuple[str | None, str | None, str]],
    truth: Mapping[str, ToolPlus],
    bound: int = MAX_SUSPECT_SETS,
) -> Suspicions:
    """The sets of nodes and links the caller at ``source`` can suspect at once: only
    the empty one for a static router. A dynamic router's caller suspects
    ``router.suspects(path)`` after a timeout on a call or discovery routed along
    ``path`` (SPEC §4; in the untimed model a timeout is always possible, on healthy
    elements too: a slow server, a queue), routes around its current suspects (over the
    full topology when nothing avoids them, as the engine's ``RouteService.current``)
    and forgets each suspect when its ttl expires. So the sets are the closure of
    {∅} under: add the suspects of the route of any need (tool, capability, protocol)
    under the set, or of a fallback tool of the tool served there; drop one suspect.
    An over-approximation (suspects added together expire together unless suspected
    again): never a lost route. Explored smallest first, at most ``bound`` sets."""
    if router.static:
        return Suspicions((NO_DOWN,), True)
    wanted = list(dict.fromkeys(needs))
    explored: list[DownSet] = []
    seen = {NO_DOWN}
    heap: list[tuple[int, int, DownSet]] = [(0, 0, NO_DOWN)]
    count = itertools.count(1)

    def push(down: DownSet) -> None:
        if down not in seen:
            seen.add(down)
            heapq.heappush(heap, (len(down.nodes) + len(down.links), next(count), down))

    def visit(down: DownSet, need: tuple[str | None, str | None, str]) -> None:
        tool, capability, rho = need
        route = _current(router, source, tool if tool is not None else capability, rho, down)
        if route is None:
            return
        nodes, links = router.suspects(route.path)
        push(DownSet(down.nodes | frozenset(nodes), down.links | frozenset(links)))
        served = served_tool(graph.agent(route.path[-1]).tools, tool, capability)
        plus = truth.get(served) if served is not None else None
        for fm in (plus.failure_modes or ()) if plus is not None else ():
            fallback = (fm.recovery.tool, None, rho) if isinstance(fm.recovery, Fallback) else None
            if fallback is not None and fallback not in wanted:
                wanted.append(fallback)
                for earlier in explored:
                    visit(earlier, fallback)

    while heap and len(explored) < bound:
        _, _, down = heapq.heappop(heap)
        explored.append(down)
        for n in down.nodes:
            push(DownSet(down.nodes - {n}, down.links))
        for link in down.links:
            push(DownSet(down.nodes, down.links - {link}))
        for need in list(wanted):
            visit(down, need)
    return Suspicions(tuple(explored), not heap)


def _current(
    router: Router, source: str, need: str | None, rho: str, down: DownSet
) -> Route | None:
    """The engine's route for ``need`` under suspects ``down`` (or over the full
    topology when nothing avoids them); None when there is none."""
    assert need is not None
    try:
        return router.serve(source, need, source_protocol=rho, down=down)
    except NoRoute:
        if not down:
            return None
    try:
        return router.serve(source, need, source_protocol=rho)
    except NoRoute:
        return None


def _hops(graph: ProtocolGraph, route: Route) -> tuple[Hop, ...]:
    out = []
    for tr in route.translations:
        t = transformer_at(graph, tr.at, tr.source, tr.target)
        if t is None:
            out.append(Hop(tr.at, tr.source, tr.target, (tr.source, tr.target), (), "forbidden"))
        else:
            dropped = tuple(sorted(t.dropped))
            out.append(Hop(tr.at, tr.source, tr.target, t.chain, dropped, t.kind.label))
    return tuple(out)


def route_options(
    router: Router,
    graph: ProtocolGraph,
    downs: Sequence[DownSet],
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
        served = served_tool(graph.agent(route.path[-1]).tools, tool, capability)
        if served is None:
            continue
        option = RouteOption(
            route.path,
            served,
            route_fields(graph, route, rho),
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
        "recovery",
        "required",
        "requires",
        "sd_retries",
        "truth",
        "view",
    )

    def __init__(
        self,
        truth: ToolPlus,
        fields: frozenset[str],
        mcp_policy: str,
        errors: Any,
        excluded_by: frozenset[str] = frozenset(),
    ):
        self.name = truth.name
        self.truth = truth
        self.fields = fields
        self.view: ToolView = caller_view(truth, fields, mcp_policy)
        known = knowledge(self.view, excluded_by)
        self.required = known.required
        self.requires = known.requires
        self.feeds = known.feeds
        self.exclusive = known.exclusive
        self.recovery = known.recovery
        self.sd_retries = known.sd_retries
        self.error_types: tuple[str, ...] = tuple(sorted({*errors, SERVICE_DOWN}))
        self._lts: dict[tuple[bool, Dialect], LTS] = {}

    def lts(self, gate: bool, dialect: Dialect) -> LTS:
        """The invocation LTS in ``dialect`` with or without the gate."""
        key = (gate, dialect)
        hit = self._lts.get(key)
        if hit is None:
            hit = self._lts[key] = dialect.lts(
                self.view, approval=gate, error_types=self.error_types
            )
        return hit

    def decision(self, policy: ApprovalPolicy, args: Mapping[str, Any]) -> Decision:
        """The approval of a call with ``args`` by this caller under ``policy``."""
        return approval(self.truth, self.view, policy, args)


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
