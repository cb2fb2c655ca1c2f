"""The rules on the mesh as declared: ``agents:`` (their protocols and tools, only tool
servers hosting tools, every tool hosted), ``links:`` (two declared agents, once, in
protocols both ends speak) and the ``topology:`` block that generates more of them."""

from __future__ import annotations

from collections.abc import Iterator

from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import Finding, KnownNames, duplicates, hosted, not_spoken, unknown
from sim.scenario.model import AgentType, Scenario


def agent_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from duplicates("agents", "id", [a.id for a in scn.agents])
    for i, agent in enumerate(scn.agents):
        for proto in agent.protocols:
            if known.lacks("protocols", proto):
                yield Finding(
                    ("agents", i, "protocols", proto),
                    unknown("protocol", proto, known.protocols)
                    + "; every protocol must be listed in `protocols:`",
                    at_key=True,
                )
        for j, tool in enumerate(agent.tools):
            if known.lacks("tools", tool):
                yield Finding(("agents", i, "tools", j), unknown("tool", tool, known.tools))
        if agent.tools and agent.type is not AgentType.TOOL_SERVER:
            yield Finding(
                ("agents", i, "tools"),
                f"agent '{agent.id}' is a {agent.type.value} but hosts tools; "
                "only TOOL_SERVER agents serve tool calls",
            )
    served = hosted(scn, known)
    for i, spec in enumerate(scn.tools):
        if spec.name not in served and "agents" in known.sections:
            yield Finding(("tools", i, "name"), f"tool '{spec.name}' is hosted by no agent", True)


def link_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    speaks = known.speaks
    seen: dict[frozenset[str], int] = {}
    for i, link in enumerate(scn.links):
        a, b = link.between
        for j, end in enumerate((a, b)):
            if known.lacks("agents", end):
                yield Finding(("links", i, "between", j), unknown("agent", end, known.agents))
        if a == b:
            yield Finding(
                ("links", i, "between"), f"a link joins two different agents ('{a}' twice)"
            )
            continue
        pair = frozenset((a, b))
        if pair in seen:
            yield Finding(
                ("links", i, "between"),
                f"duplicate link between '{a}' and '{b}'; list all its protocols in one `latency:`",
                first=("links", seen[pair], "between"),
            )
        seen.setdefault(pair, i)
        for proto in link.latency:
            if known.lacks("protocols", proto):
                yield Finding(
                    ("links", i, "latency", proto),
                    unknown("protocol", proto, known.protocols),
                    at_key=True,
                )
                continue
            for end in (a, b):
                if end in speaks and proto not in speaks[end]:
                    yield Finding(
                        ("links", i, "latency", proto),
                        not_spoken("agent", end, proto, speaks[end]),
                        at_key=True,
                    )


def topology_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    topo = scn.topology
    if topo is None:
        return
    where: FieldPath = ("topology",)
    for proto in topo.protocols:
        if known.lacks("protocols", proto):
            yield Finding(
                (*where, "protocols", proto),
                unknown("protocol", proto, known.protocols),
                at_key=True,
            )
    if isinstance(topo.latency, dict):
        for proto in topo.latency:
            if proto not in topo.protocols:
                yield Finding(
                    (*where, "latency", proto),
                    f"protocol '{proto}' is not one of the topology's protocols "
                    f"({', '.join(topo.protocols)})",
                    at_key=True,
                )
        for proto in topo.protocols:
            if proto not in topo.latency:
                yield Finding(
                    (*where, "latency"),
                    f"no latency for protocol '{proto}' (give one distribution per protocol, "
                    "or one for all)",
                )
    for j, placement in enumerate(topo.tools):
        if known.lacks("tools", placement.name):
            yield Finding(
                (*where, "tools", j, "name"), unknown("tool", placement.name, known.tools)
            )
    if topo.types.get("TOOL_SERVER", 0) <= 0 and topo.tools:
        yield Finding((*where, "types"), "tools are placed on TOOL_SERVERs: give them a share")
    for j, att in enumerate(topo.attach):
        if att.agent not in {a.id for a in scn.agents} and known.lacks("agents", att.agent):
            yield Finding((*where, "attach", j, "agent"), unknown("agent", att.agent, known.agents))
