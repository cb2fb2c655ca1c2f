"""The cross-field rules of SPEC §1, checked after every field has its shape.

Each rule yields :class:`Finding` objects with a field path; the loader turns the
path into file, line and column. Rules never stop at the first problem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sim.scenario.diagnostics import FieldPath, did_you_mean
from sim.scenario.model import BUILTIN_PROTOCOLS, AgentType, Scenario, SideEffects


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule's verdict on one field; ``at_key`` points at the key rather than its value."""

    path: FieldPath
    message: str
    warning: bool = False
    at_key: bool = False
    first: FieldPath | None = None  # an earlier field this one repeats


@dataclass(frozen=True, slots=True)
class KnownNames:
    """Names declared in the file, including items whose own fields are invalid.

    A reference to such an item is not reported as unknown: its own error is enough.
    """

    agents: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    protocols: set[str] = field(default_factory=set)
    speaks: dict[str, set[str]] = field(default_factory=dict)  # agent id → protocol names


def _unknown(kind: str, name: str, known: set[str]) -> str:
    return f"unknown {kind} '{name}'{did_you_mean(name, known)}"


def _duplicates(section: str, key: str, names: Sequence[str]) -> Iterator[Finding]:
    seen: Counter[str] = Counter()
    for i, name in enumerate(names):
        seen[name] += 1
        if seen[name] == 2:
            first = names.index(name)
            yield Finding(
                (section, i, key), f"duplicate {key} '{name}'", first=(section, first, key)
            )


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """A cycle of the directed graph ``node → successors`` as [a, b, ..., a], or None.

    Deterministic: nodes are explored in the order the mapping lists them.
    """
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(edges, white)
    for root in edges:
        if colour[root] != white:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(edges[root]))]
        path = [root]
        colour[root] = grey
        while stack:
            node, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                stack.pop()
                path.pop()
                colour[node] = black
                continue
            if nxt not in colour:
                continue
            if colour[nxt] == grey:
                return [*path[path.index(nxt) :], nxt]
            if colour[nxt] == white:
                colour[nxt] = grey
                path.append(nxt)
                stack.append((nxt, iter(edges[nxt])))
    return None


def _protocols(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("protocols", "name", [p.name for p in scn.protocols])
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
            if name not in known.protocols:
                yield Finding(("translations", i, key), _unknown("protocol", name, known.protocols))
        if rule.from_ == rule.to:
            yield Finding(("translations", i, "to"), "a translation joins two different protocols")
        if rule.fail > 0 and not rule.destructive:
            yield Finding(("translations", i, "fail"), "`fail` needs `destructive: true`")
    pairs = [(t.from_, t.to) for t in scn.translations]
    yield from _duplicates("translations", "to", [f"{a} -> {b}" for a, b in pairs])


def _agents(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("agents", "id", [a.id for a in scn.agents])
    hosted: set[str] = set()
    for i, agent in enumerate(scn.agents):
        for proto in agent.protocols:
            if proto not in known.protocols:
                yield Finding(
                    ("agents", i, "protocols", proto),
                    _unknown("protocol", proto, known.protocols) + " (not in `protocols:`)",
                    at_key=True,
                )
        for j, tool in enumerate(agent.tools):
            if tool not in known.tools:
                yield Finding(("agents", i, "tools", j), _unknown("tool", tool, known.tools))
            hosted.add(tool)
        if agent.tools and agent.type is not AgentType.TOOL_SERVER:
            yield Finding(
                ("agents", i, "tools"),
                f"agent '{agent.id}' is a {agent.type.value} but hosts tools; "
                "only TOOL_SERVER agents serve tool calls",
            )
    for i, spec in enumerate(scn.tools):
        if spec.name not in hosted:
            yield Finding(("tools", i, "name"), f"tool '{spec.name}' is hosted by no agent", True)


def _links(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    speaks = known.speaks
    seen: dict[frozenset[str], int] = {}
    for i, link in enumerate(scn.links):
        a, b = link.between
        for j, end in enumerate((a, b)):
            if end not in known.agents:
                yield Finding(("links", i, "between", j), _unknown("agent", end, known.agents))
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
            if proto not in known.protocols:
                yield Finding(
                    ("links", i, "latency", proto),
                    _unknown("protocol", proto, known.protocols),
                    at_key=True,
                )
                continue
            for end in (a, b):
                if end in speaks and proto not in speaks[end]:
                    yield Finding(
                        ("links", i, "latency", proto),
                        f"agent '{end}' does not speak {proto} "
                        f"(it speaks {', '.join(sorted(speaks[end])) or 'nothing'})",
                        at_key=True,
                    )


def _tools(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("tools", "name", [t.name for t in scn.tools])
    requires: dict[str, list[str]] = {t.name: [] for t in scn.tools}
    for i, tool in enumerate(scn.tools):
        for j, mode in enumerate(tool.failure_modes):
            target = mode.recovery.fallback
            if target is not None and target not in known.tools:
                yield Finding(
                    ("tools", i, "failure_modes", j, "recovery", "fallback"),
                    _unknown("fallback tool", target, known.tools),
                )
        errors_declared = Counter(m.error for m in tool.failure_modes)
        for j, mode in enumerate(tool.failure_modes):
            if errors_declared[mode.error] > 1:
                yield Finding(
                    ("tools", i, "failure_modes", j, "error"),
                    f"error '{mode.error}' has more than one recovery",
                )
                errors_declared[mode.error] = 0
        for j, dep in enumerate(tool.dependencies):
            if dep.tool not in known.tools:
                yield Finding(
                    ("tools", i, "dependencies", j, "tool"), _unknown("tool", dep.tool, known.tools)
                )
            elif dep.tool == tool.name:
                yield Finding(
                    ("tools", i, "dependencies", j, "tool"), "a tool cannot depend on itself"
                )
            elif dep.relation.value in ("Requires", "ProducesInputFor"):
                requires[tool.name].append(dep.tool)
        if (
            tool.side_effects in (SideEffects.WRITE, SideEffects.DELETE)
            and not tool.requires_approval
        ):
            yield Finding(
                ("tools", i, "requires_approval"),
                f"a {tool.side_effects.value} tool without requires_approval violates P2 "
                "(WriteApproval); callers may execute it unapproved",
                warning=True,
            )
    cycle = find_cycle(requires)
    if cycle is not None:
        index = next(i for i, t in enumerate(scn.tools) if t.name == cycle[0])
        yield Finding(
            ("tools", index, "dependencies"),
            "tool dependencies form a cycle: " + " -> ".join(cycle),
        )


def _workflows(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("workflows", "name", [w.name for w in scn.workflows])
    hosted = {tool for agent in scn.agents for tool in agent.tools}
    speaks = known.speaks
    for i, wf in enumerate(scn.workflows):
        where: FieldPath = ("workflows", i)
        if wf.initiator not in known.agents:
            yield Finding((*where, "initiator"), _unknown("agent", wf.initiator, known.agents))
        if wf.protocol not in known.protocols:
            yield Finding((*where, "protocol"), _unknown("protocol", wf.protocol, known.protocols))
        elif wf.initiator in speaks and wf.protocol not in speaks[wf.initiator]:
            yield Finding(
                (*where, "protocol"),
                f"initiator '{wf.initiator}' does not speak {wf.protocol}",
            )
        ids = [t.id for t in wf.tasks]
        for dup in _duplicates("tasks", "id", ids):
            assert dup.first is not None
            yield Finding((*where, *dup.path), dup.message, first=(*where, *dup.first))
        for j, task in enumerate(wf.tasks):
            at: FieldPath = (*where, "tasks", j)
            if task.tool is not None:
                if task.tool not in known.tools:
                    yield Finding((*at, "tool"), _unknown("tool", task.tool, known.tools))
                elif task.tool not in hosted:
                    yield Finding((*at, "tool"), f"tool '{task.tool}' is hosted by no agent")
            if task.protocol is not None and task.protocol not in known.protocols:
                yield Finding(
                    (*at, "protocol"), _unknown("protocol", task.protocol, known.protocols)
                )
            for k, pred in enumerate(task.after):
                if pred not in ids:
                    yield Finding((*at, "after", k), _unknown("task", pred, set(ids)))
                elif pred == task.id:
                    yield Finding((*at, "after", k), "a task cannot come after itself")
        order = {t.id: [p for p in t.after if p in ids and p != t.id] for t in wf.tasks}
        cycle = find_cycle(order)
        if cycle is not None:
            index = ids.index(cycle[0])
            shown = " ≺ ".join(reversed(cycle))
            yield Finding((*where, "tasks", index, "after"), f"≺ has a cycle: {shown}")


def _failures(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    links = {frozenset(link.between) for link in scn.links}

    def check_link(path: FieldPath, pair: list[str]) -> Iterator[Finding]:
        if len(pair) != 2:
            yield Finding(path, "a link is a pair of agent ids")
            return
        missing = False
        for j, end in enumerate(pair):
            if end not in known.agents:
                missing = True
                yield Finding((*path, j), _unknown("agent", end, known.agents))
        if not missing and frozenset(pair) not in links:
            yield Finding(path, f"there is no link between '{pair[0]}' and '{pair[1]}'")

    for i, failure in enumerate(scn.failures):
        if failure.node is not None and failure.node not in known.agents:
            yield Finding(("failures", i, "node"), _unknown("agent", failure.node, known.agents))
        if failure.link is not None:
            yield from check_link(("failures", i, "link"), failure.link)
        if failure.random is not None:
            rnd = failure.random
            if not rnd.nodes and not rnd.links:
                yield Finding(("failures", i, "random"), "random failures need nodes or links")
            for j, node in enumerate(rnd.nodes):
                if node not in known.agents:
                    yield Finding(
                        ("failures", i, "random", "nodes", j), _unknown("agent", node, known.agents)
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


def _routers(scn: Scenario) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, router in enumerate(scn.routers):
        if router in seen:
            yield Finding(("routers", i), f"router '{router}' listed twice")
        seen.add(router)


def check_rules(scenario: Scenario, known: KnownNames) -> list[Finding]:
    """Every cross-field rule of SPEC §1 on ``scenario``, in a deterministic order."""
    findings: list[Finding] = []
    for rule in (_protocols, _agents, _links, _tools, _workflows, _failures):
        findings.extend(rule(scenario, known))
    findings.extend(_routers(scenario))
    return findings
