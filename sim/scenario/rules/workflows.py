"""The rules on ``workflows:``: initiators, tasks and ≺, against the mesh and the tools."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import (
    Finding,
    KnownNames,
    duplicates,
    find_cycle,
    hosted,
    not_spoken,
    unknown,
)
from sim.scenario.model import Scenario, TaskSpec, WorkflowSpec
from sim.scenario.model.dialects import dialect_problem


def workflow_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from duplicates("workflows", "name", [w.name for w in scn.workflows])
    served = hosted(scn, known)
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
                yield Finding(path, unknown("agent", agent_id, known.agents))
        if known.lacks("protocols", wf.protocol):
            yield Finding((*where, "protocol"), unknown("protocol", wf.protocol, known.protocols))
        else:
            for _, agent_id in named:
                if agent_id in speaks and wf.protocol not in speaks[agent_id]:
                    yield Finding(
                        (*where, "protocol"),
                        not_spoken("initiator", agent_id, wf.protocol, speaks[agent_id]),
                    )
        chosen = wf.initiators
        if chosen is not None and chosen.type is not None and not scn.initiators_of(wf):
            wanted = " and ".join(sorted(wf.protocols_issued()))
            yield Finding(
                (*where, "initiators", "type"),
                f"no {chosen.type.value} agent speaks {wanted}: the workflow has no initiator",
            )
        ids = [t.id for t in wf.tasks]
        for dup in duplicates("tasks", "id", ids):
            assert dup.first is not None
            yield Finding((*where, *dup.path), dup.message, first=(*where, *dup.first))
        for j, task in enumerate(wf.tasks):
            at: FieldPath = (*where, "tasks", j)
            if task.tool is not None:
                if known.lacks("tools", task.tool):
                    yield Finding((*at, "tool"), unknown("tool", task.tool, known.tools))
                elif task.tool not in served and "agents" in known.sections:
                    yield Finding(
                        (*at, "tool"),
                        f"tool '{task.tool}' is hosted by no agent; "
                        "list it in a TOOL_SERVER's `tools:`",
                    )
            yield from _task_warnings(scn, wf, task, at)
            if task.protocol is not None:
                if known.lacks("protocols", task.protocol):
                    yield Finding(
                        (*at, "protocol"), unknown("protocol", task.protocol, known.protocols)
                    )
                else:
                    for _, agent_id in named:
                        if agent_id in speaks and task.protocol not in speaks[agent_id]:
                            yield Finding(
                                (*at, "protocol"),
                                not_spoken("initiator", agent_id, task.protocol, speaks[agent_id]),
                            )
            for k, pred in enumerate(task.after):
                if pred not in ids:
                    if pred not in known.tasks.get(wf.name, ()):  # else: its own error
                        yield Finding((*at, "after", k), unknown("task", pred, set(ids)))
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


def _collects(scn: Scenario, rho: str) -> bool:
    """Whether ρ's declared dialect collects the missing slots (False when ρ or its dialect
    is not known: the protocol rules say so)."""
    for proto in scn.protocols:
        if proto.name == rho:
            return dialect_problem(proto.dialect or "mcp") is None and proto.behaviour().collects
    return False


def _task_warnings(
    scn: Scenario, wf: WorkflowSpec, task: TaskSpec, at: FieldPath
) -> Iterator[Finding]:
    """Legal tasks that cannot do what they look like they do (a capability no agent
    matches is the mesh's rule: :func:`sim.mesh.rules.capability_findings`)."""
    if task.tool is None or _collects(scn, wf.rho_of(task)):
        return  # the caller collects the missing slots from the user (SGD, A2A)
    try:
        spec = scn.tool(task.tool)
    except KeyError:
        return
    required = spec.input_schema.get("required", [])
    if not isinstance(required, list):  # its own error (rules.tools) is enough
        return
    missing = [r for r in required if isinstance(r, str) and r not in task.args]
    if missing:
        yield Finding(
            (*at, "args"),
            f"'{task.tool}' requires {', '.join(missing)}, which `args` does not give: "
            "its calls fail validation (ValidationError) unless issued in a dialect that "
            "collects them (sgd, a2a)",
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
