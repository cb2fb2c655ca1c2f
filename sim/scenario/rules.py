"""The cross-field rules of SPEC §1, checked after every field has its shape.

Each rule yields :class:`Finding` objects with a field path; the loader turns the
path into file, line and column. Rules never stop at the first problem. Here: protocols,
agents, links, failures, the approval policy, routers, topology and sweep;
:mod:`sim.scenario.rules_tools`, :mod:`sim.scenario.rules_workflows` and
:mod:`sim.scenario.rules_ranges` hold the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sim.plugins import BUILTIN_ROUTERS, approval_names, policy_reference
from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import (
    Finding,
    KnownNames,
    Rule,
    duplicates,
    find_cycle,
    hosted,
    not_spoken,
    unknown,
)
from sim.scenario.model import BUILTIN_PROTOCOLS, AgentType, Scenario
from sim.scenario.properties_rules import property_findings
from sim.scenario.rules_ranges import range_findings
from sim.scenario.rules_tools import tool_findings
from sim.scenario.rules_workflows import workflow_findings
from sim.spelling import did_you_mean

__all__ = ["Finding", "KnownNames", "Rule", "check_rules", "find_cycle"]


def _protocols(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from duplicates("protocols", "name", [p.name for p in scn.protocols])
    for i, proto in enumerate(scn.protocols):
        if proto.name not in BUILTIN_PROTOCOLS and proto.fields is None:
            yield Finding(
                ("protocols", i, "name"),
                f"protocol '{proto.name}' is not built in ({', '.join(BUILTIN_PROTOCOLS)}); "
                f"declare the descriptor fields it represents with `fields:`"
                + did_you_mean(proto.name, BUILTIN_PROTOCOLS),
            )
    for i, rule in enumerate(scn.translations):
        for key, name in (("from", rule.from_), ("to", rule.to)):
            if known.lacks("protocols", name):
                yield Finding(("translations", i, key), unknown("protocol", name, known.protocols))
        if rule.from_ == rule.to:
            yield Finding(
                ("translations", i, "to"),
                f"a translation joins two different protocols (got {rule.to} → {rule.to})",
            )
        if rule.fail > 0 and not rule.destructive:
            yield Finding(
                ("translations", i, "fail"),
                "`fail` needs `destructive: true` (only a destructive translation can fail)",
            )
    pairs = [(t.from_, t.to) for t in scn.translations]
    yield from duplicates("translations", "to", [f"{a} -> {b}" for a, b in pairs])


def _agents(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
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


def _links(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
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


def _failures(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    links = {frozenset(link.between) for link in scn.links}

    def check_link(path: FieldPath, pair: list[str]) -> Iterator[Finding]:
        if len(pair) != 2:
            yield Finding(path, "a link is a pair of agent ids")
            return
        missing = False
        for j, end in enumerate(pair):
            if known.lacks("agents", end):
                missing = True
                yield Finding((*path, j), unknown("agent", end, known.agents))
        if not missing and "agents" in known.sections and frozenset(pair) not in links:
            yield Finding(path, f"there is no link between '{pair[0]}' and '{pair[1]}'")

    for i, failure in enumerate(scn.failures):
        if failure.node is not None and known.lacks("agents", failure.node):
            yield Finding(("failures", i, "node"), unknown("agent", failure.node, known.agents))
        if failure.link is not None:
            yield from check_link(("failures", i, "link"), failure.link)
        if failure.random is not None:
            rnd = failure.random
            if not rnd.nodes and not rnd.links:
                yield Finding(("failures", i, "random"), "random failures need nodes or links")
            for j, node in enumerate(rnd.nodes):
                if known.lacks("agents", node):
                    yield Finding(
                        ("failures", i, "random", "nodes", j), unknown("agent", node, known.agents)
                    )
            for j, pair in enumerate(rnd.links):
                yield from check_link(("failures", i, "random", "links", j), pair)
        if failure.at is not None and failure.at > scn.duration:
            yield Finding(
                ("failures", i, "at"),
                f"the outage starts at {failure.at:g} s, after the run's duration "
                f"({scn.duration:g} s)",
                warning=True,
            )


def _routers(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """Router names listed once and known (``known.routers``, given by the registry
    above), a plug-in not named as a built-in (SPEC §12). Whether a plug-in is a router
    class taking its options is the mesh's rule (:func:`sim.mesh.rules.router_findings`)."""
    seen: set[str] = set()
    for i, router in enumerate(scn.routers):
        name = router.name
        if name in seen:
            yield Finding(("routers", i), f"router '{name}' is listed twice")
        seen.add(name)
        if router.plugin is None and name not in known.routers:
            choices = ", ".join(known.routers)
            yield Finding(
                ("routers", i),
                f"must be one of {choices}, or {{name, plugin: package.module:Class}} "
                f"(got '{name}'){did_you_mean(name, known.routers)}",
            )
        elif router.plugin is not None and name in BUILTIN_ROUTERS:
            yield Finding(
                ("routers", i, "name"),
                f"'{name}' is a built-in router: give the plug-in another name",
            )


def _approval(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """An ``approval.policy`` plug-in: ``module:Class`` or a name an installed package
    registers (SPEC §12). Whether the class is an approval policy taking its options is
    :func:`sim.approval.policy_findings`'s rule."""
    entry = scn.approval.policy
    if entry is None or policy_reference(entry.plugin) is not None:
        return
    names = approval_names()
    yield Finding(
        ("approval", "policy", "plugin"),
        f"unknown approval policy '{entry.plugin}'{did_you_mean(entry.plugin, names)}: "
        "give package.module:Class, or a name an installed package registers under "
        f"protomesh.approval (installed: {', '.join(names) or 'none'})",
    )


def _topology(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
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


def _sweep(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    sweep = scn.sweep
    if sweep is None:
        return
    named = [(("sweep", "parameters", k), k) for k in sweep.parameters] + [
        (("sweep", "points", i, k), k) for i, point in enumerate(sweep.points) for k in point
    ]
    for path, name in named:
        parts = name.split(".")
        if parts[0] in ("sweep", "name") or any(not part for part in parts):
            yield Finding(
                path,
                f"cannot sweep '{name}': give a field path like routing.loss_penalty "
                "(not `name` or `sweep`)",
                at_key=True,
            )


def check_rules(scenario: Scenario, known: KnownNames, rules: Sequence[Rule] = ()) -> list[Finding]:
    """Every cross-field rule of SPEC §1 on ``scenario``, then ``rules`` (those of the
    layers above: :data:`sim.admission.RULES`), in a deterministic order."""
    findings: list[Finding] = []
    for rule in (
        _protocols,
        _agents,
        _links,
        tool_findings,
        workflow_findings,
        _failures,
        _approval,
        _topology,
        _sweep,
        range_findings,
    ):
        findings.extend(rule(scenario, known))
    findings.extend(_routers(scenario, known))
    findings.extend(property_findings(scenario, known))
    for above in rules:
        findings.extend(above(scenario, known))
    return findings
