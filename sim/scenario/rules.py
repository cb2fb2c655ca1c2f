"""The cross-field rules of SPEC §1, checked after every field has its shape.

Each rule yields :class:`Finding` objects with a field path; the loader turns the
path into file, line and column. Rules never stop at the first problem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sim.calculus.lts import is_label_argument
from sim.plugins import BUILTIN_ROUTERS, PluginError, router_class, router_names, router_reference
from sim.scenario.capabilities import similarity
from sim.scenario.diagnostics import FieldPath, did_you_mean
from sim.scenario.model import (
    BUILTIN_PROTOCOLS,
    AgentType,
    Scenario,
    SideEffects,
    TaskSpec,
    WorkflowSpec,
)
from sim.scenario.properties_rules import property_findings


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule's verdict on one field; ``at_key`` points at the key rather than its value."""

    path: FieldPath
    message: str
    warning: bool = False
    at_key: bool = False
    first: FieldPath | None = None  # an earlier field this one repeats
    inner: tuple[str, int] | None = None  # (string value, offset of the problem in it)


@dataclass(frozen=True, slots=True)
class KnownNames:
    """Names declared in the file, including items whose own fields are invalid.

    A reference to such an item is not reported as unknown: its own error is enough.
    """

    agents: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    protocols: set[str] = field(default_factory=set)
    speaks: dict[str, set[str]] = field(default_factory=dict)  # agent id → protocol names
    #: Sections given as lists. References into a section that is missing or not a
    #: list are not checked: that section's own error is enough.
    sections: frozenset[str] = frozenset({"agents", "tools", "protocols"})
    #: Tool names listed in some agent's ``tools:`` (None: take them from the scenario).
    hosted: set[str] | None = None
    #: The router names known without a plug-in entry (from the registry, above).
    routers: tuple[str, ...] = field(default_factory=router_names)

    def lacks(self, section: str, name: str) -> bool:
        """True when ``name`` is certainly not declared in ``section``."""
        names = {"agents": self.agents, "tools": self.tools, "protocols": self.protocols}
        return section in self.sections and name not in names[section]


def _unknown(kind: str, name: str, known: set[str]) -> str:
    """``unknown tool 'x'`` with a did-you-mean, or the short list of what is declared."""
    hint = did_you_mean(name, known)
    if not hint and known and len(known) <= 8:
        hint = f" (declared: {', '.join(sorted(known))})"
    elif not known:
        hint = " (none declared)"
    return f"unknown {kind} '{name}'{hint}"


def _hosted(scn: Scenario, known: KnownNames) -> set[str]:
    """Tools some agent lists (including agents whose other fields are invalid)."""
    if known.hosted is not None:
        return known.hosted
    return {tool for agent in scn.agents for tool in agent.tools}


def _not_spoken(role: str, agent: str, proto: str, spoken: set[str]) -> str:
    return (
        f"{role} '{agent}' does not speak {proto} "
        f"(it speaks {', '.join(sorted(spoken)) or 'nothing'})"
    )


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
            if known.lacks("protocols", name):
                yield Finding(("translations", i, key), _unknown("protocol", name, known.protocols))
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
    yield from _duplicates("translations", "to", [f"{a} -> {b}" for a, b in pairs])


def _agents(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("agents", "id", [a.id for a in scn.agents])
    for i, agent in enumerate(scn.agents):
        for proto in agent.protocols:
            if known.lacks("protocols", proto):
                yield Finding(
                    ("agents", i, "protocols", proto),
                    _unknown("protocol", proto, known.protocols)
                    + "; every protocol must be listed in `protocols:`",
                    at_key=True,
                )
        for j, tool in enumerate(agent.tools):
            if known.lacks("tools", tool):
                yield Finding(("agents", i, "tools", j), _unknown("tool", tool, known.tools))
        if agent.tools and agent.type is not AgentType.TOOL_SERVER:
            yield Finding(
                ("agents", i, "tools"),
                f"agent '{agent.id}' is a {agent.type.value} but hosts tools; "
                "only TOOL_SERVER agents serve tool calls",
            )
    hosted = _hosted(scn, known)
    for i, spec in enumerate(scn.tools):
        if spec.name not in hosted and "agents" in known.sections:
            yield Finding(("tools", i, "name"), f"tool '{spec.name}' is hosted by no agent", True)


def _links(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    speaks = known.speaks
    seen: dict[frozenset[str], int] = {}
    for i, link in enumerate(scn.links):
        a, b = link.between
        for j, end in enumerate((a, b)):
            if known.lacks("agents", end):
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
            if known.lacks("protocols", proto):
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
                        _not_spoken("agent", end, proto, speaks[end]),
                        at_key=True,
                    )


_LABEL_SAFE = "no commas, parentheses, double quotes or spaces: it appears in trace labels"


def _label_safe(scn: Scenario) -> Iterator[Finding]:
    """Names that become label arguments (``call(n)``, ``error(n,t)``, ``collect(s)``)."""
    for i, tool in enumerate(scn.tools):
        if not is_label_argument(tool.name):
            yield Finding(("tools", i, "name"), f"tool name '{tool.name}': {_LABEL_SAFE}")
        for error in tool.errors:
            if not is_label_argument(error):
                yield Finding(
                    ("tools", i, "errors", error),
                    f"error type '{error}': {_LABEL_SAFE}",
                    at_key=True,
                )
        for j, mode in enumerate(tool.failure_modes):
            if not is_label_argument(mode.error):
                yield Finding(
                    ("tools", i, "failure_modes", j, "error"),
                    f"error type '{mode.error}': {_LABEL_SAFE}",
                )
        required = tool.input_schema.get("required", [])
        for j, slot in enumerate(required if isinstance(required, list) else []):
            if not isinstance(slot, str) or not is_label_argument(slot):
                yield Finding(
                    ("tools", i, "input_schema", "required", j),
                    f"required input {slot!r}: {_LABEL_SAFE} (collect(s) of SGD callers)",
                )


def _tools(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from _duplicates("tools", "name", [t.name for t in scn.tools])
    yield from _label_safe(scn)
    requires: dict[str, list[str]] = {t.name: [] for t in scn.tools}
    for i, tool in enumerate(scn.tools):
        for j, mode in enumerate(tool.failure_modes):
            target = mode.recovery.fallback
            if target is not None and known.lacks("tools", target):
                yield Finding(
                    ("tools", i, "failure_modes", j, "recovery", "fallback"),
                    _unknown("fallback tool", target, known.tools),
                )
        first_mode: dict[str, int] = {}
        for j, mode in enumerate(tool.failure_modes):
            if mode.error in first_mode:
                yield Finding(
                    ("tools", i, "failure_modes", j, "error"),
                    f"error '{mode.error}' already has a recovery; give one per error type",
                    first=("tools", i, "failure_modes", first_mode[mode.error], "error"),
                )
            first_mode.setdefault(mode.error, j)
        for j, dep in enumerate(tool.dependencies):
            if known.lacks("tools", dep.tool):
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
    hosted = _hosted(scn, known)
    speaks = known.speaks
    for i, wf in enumerate(scn.workflows):
        where: FieldPath = ("workflows", i)
        named: list[tuple[FieldPath, str]] = []  # explicit initiators and where they stand
        if wf.initiator is not None:
            named.append(((*where, "initiator"), wf.initiator))
        elif wf.initiators is not None and wf.initiators.agents is not None:
            named += [
                ((*where, "initiators", "agents", k), agent_id)
                for k, agent_id in enumerate(wf.initiators.agents)
            ]
        for path, agent_id in named:
            if known.lacks("agents", agent_id):
                yield Finding(path, _unknown("agent", agent_id, known.agents))
        if known.lacks("protocols", wf.protocol):
            yield Finding((*where, "protocol"), _unknown("protocol", wf.protocol, known.protocols))
        else:
            for _, agent_id in named:
                if agent_id in speaks and wf.protocol not in speaks[agent_id]:
                    yield Finding(
                        (*where, "protocol"),
                        _not_spoken("initiator", agent_id, wf.protocol, speaks[agent_id]),
                    )
        chosen = wf.initiators
        if chosen is not None and chosen.type is not None and not scn.initiators_of(wf):
            wanted = " and ".join(sorted(wf.protocols_issued()))
            yield Finding(
                (*where, "initiators", "type"),
                f"no {chosen.type.value} agent speaks {wanted}: the workflow has no initiator",
            )
        ids = [t.id for t in wf.tasks]
        for dup in _duplicates("tasks", "id", ids):
            assert dup.first is not None
            yield Finding((*where, *dup.path), dup.message, first=(*where, *dup.first))
        for j, task in enumerate(wf.tasks):
            at: FieldPath = (*where, "tasks", j)
            if task.tool is not None:
                if known.lacks("tools", task.tool):
                    yield Finding((*at, "tool"), _unknown("tool", task.tool, known.tools))
                elif task.tool not in hosted and "agents" in known.sections:
                    yield Finding(
                        (*at, "tool"),
                        f"tool '{task.tool}' is hosted by no agent; "
                        "list it in a TOOL_SERVER's `tools:`",
                    )
            yield from _task_warnings(scn, wf, task, at)
            if task.protocol is not None:
                if known.lacks("protocols", task.protocol):
                    yield Finding(
                        (*at, "protocol"), _unknown("protocol", task.protocol, known.protocols)
                    )
                else:
                    for _, agent_id in named:
                        if agent_id in speaks and task.protocol not in speaks[agent_id]:
                            yield Finding(
                                (*at, "protocol"),
                                _not_spoken("initiator", agent_id, task.protocol, speaks[agent_id]),
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
        else:
            yield from _dependencies_against_order(scn, wf.tasks, order, where)


def _task_warnings(
    scn: Scenario, wf: WorkflowSpec, task: TaskSpec, at: FieldPath
) -> Iterator[Finding]:
    """Legal tasks that cannot do what they look like they do."""
    if task.capability is not None and not any(
        task.capability in agent.tools or similarity(task.capability, agent.capabilities) > 0
        for agent in scn.agents
    ):
        yield Finding(
            (*at, "capability"),
            f"no agent's capabilities match '{task.capability}': every call of this task "
            "fails with no route",
            warning=True,
        )
    if task.tool is None or (task.protocol or wf.protocol) == "SGD":
        return  # an SGD caller collects the missing slots from the user
    try:
        spec = scn.tool(task.tool)
    except KeyError:
        return
    required = spec.input_schema.get("required", [])
    missing = [r for r in required if isinstance(r, str) and r not in task.args]
    if missing:
        yield Finding(
            (*at, "args"),
            f"'{task.tool}' requires {', '.join(missing)}, which `args` does not give: "
            "its calls fail validation (ValidationError) unless issued in SGD",
            warning=True,
        )


def _dependencies_against_order(
    scn: Scenario, tasks: Sequence[TaskSpec], order: dict[str, list[str]], where: FieldPath
) -> Iterator[Finding]:
    """Warn when the tools' Requires / ProducesInputFor dependencies contradict ≺.

    "X declares (Y, Requires)" puts Y's tasks first; "X declares (Y, ProducesInputFor)"
    puts X's tasks first. A caller that knows the dependencies adds them to ≺ (SPEC §4),
    so a cycle means such a caller can never finish the workflow.
    """
    by_tool: dict[str, list[str]] = {}
    for task in tasks:
        if task.tool is not None:
            by_tool.setdefault(task.tool, []).append(task.id)
    combined = {task_id: list(preds) for task_id, preds in order.items()}
    for spec in scn.tools:
        for dep in spec.dependencies:
            if dep.relation.value == "Requires":
                first, then = dep.tool, spec.name
            elif dep.relation.value == "ProducesInputFor":
                first, then = spec.name, dep.tool
            else:
                continue
            for later in by_tool.get(then, ()):
                combined[later].extend(by_tool.get(first, ()))
    cycle = find_cycle(combined)
    if cycle is not None:
        ids = [t.id for t in tasks]
        yield Finding(
            (*where, "tasks", ids.index(cycle[0])),
            "the tools' declared dependencies contradict ≺: "
            + " ≺ ".join(reversed(cycle))
            + "; a caller that knows them can never run these tasks",
            warning=True,
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
                yield Finding((*path, j), _unknown("agent", end, known.agents))
        if not missing and "agents" in known.sections and frozenset(pair) not in links:
            yield Finding(path, f"there is no link between '{pair[0]}' and '{pair[1]}'")

    for i, failure in enumerate(scn.failures):
        if failure.node is not None and known.lacks("agents", failure.node):
            yield Finding(("failures", i, "node"), _unknown("agent", failure.node, known.agents))
        if failure.link is not None:
            yield from check_link(("failures", i, "link"), failure.link)
        if failure.random is not None:
            rnd = failure.random
            if not rnd.nodes and not rnd.links:
                yield Finding(("failures", i, "random"), "random failures need nodes or links")
            for j, node in enumerate(rnd.nodes):
                if known.lacks("agents", node):
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


def _routers(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """Router names listed once and known (``known.routers``, given by the registry
    above); a plug-in importable, a router, and taking its options (SPEC §12)."""
    seen: set[str] = set()
    for i, router in enumerate(scn.routers):
        name = router.name
        if name in seen:
            yield Finding(("routers", i), f"router '{name}' is listed twice")
        seen.add(name)
        reference = router.plugin
        if reference is None:
            if name not in known.routers:
                choices = ", ".join(known.routers)
                yield Finding(
                    ("routers", i),
                    f"must be one of {choices}, or {{name, plugin: package.module:Class}} "
                    f"(got '{name}'){did_you_mean(name, known.routers)}",
                )
                continue
            if not router.options:
                continue
            reference = router_reference(name) or name
            where: FieldPath = ("routers", i, "options")
        elif name in BUILTIN_ROUTERS:
            yield Finding(
                ("routers", i, "name"),
                f"'{name}' is a built-in router: give the plug-in another name",
            )
            continue
        else:
            where = ("routers", i, "plugin")
        try:
            router_class(reference, router.options)
        except PluginError as exc:
            yield Finding(where, f"router plug-in '{reference}': {exc}")


def _topology(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    topo = scn.topology
    if topo is None:
        return
    where: FieldPath = ("topology",)
    for proto in topo.protocols:
        if known.lacks("protocols", proto):
            yield Finding(
                (*where, "protocols", proto),
                _unknown("protocol", proto, known.protocols),
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
                (*where, "tools", j, "name"), _unknown("tool", placement.name, known.tools)
            )
    if topo.types.get("TOOL_SERVER", 0) <= 0 and topo.tools:
        yield Finding((*where, "types"), "tools are placed on TOOL_SERVERs: give them a share")
    for j, att in enumerate(topo.attach):
        if att.agent not in {a.id for a in scn.agents} and known.lacks("agents", att.agent):
            yield Finding(
                (*where, "attach", j, "agent"), _unknown("agent", att.agent, known.agents)
            )


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


def check_rules(scenario: Scenario, known: KnownNames) -> list[Finding]:
    """Every cross-field rule of SPEC §1 on ``scenario``, in a deterministic order."""
    findings: list[Finding] = []
    for rule in (_protocols, _agents, _links, _tools, _workflows, _failures, _topology, _sweep):
        findings.extend(rule(scenario, known))
    findings.extend(_routers(scenario, known))
    findings.extend(property_findings(scenario, known))
    return findings
