"""The ground truth the checks hold a trace to: built from a scenario or an SGD schema.

Only the scenario's declarations are used (side effects, approval flags, failure modes,
dependencies, links and the protocols agents speak) and the calculus' LTS builders;
never the engine. A tool's ground-truth LTS for the ``lts`` check is the calculus'
``tool_lts`` of its full MCP+ descriptor: the ``mcp`` dialect for an invocation opened by
``call``, the ``sgd`` dialect for one opened by ``invoke`` (:attr:`ToolFacts.sgd_dialect`);
for SGD services, ``intent_lts`` of the intent. When the
ground truth has no approval gate, a caller may still ask (SPEC §2: a caller that lost
``requires_approval`` decides from hints or policy): asking is never unsafe, so both
the gated and the ungated LTS are accepted then.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.calculus.lts import LTS, TAU, label
from sim.calculus.mcp import (
    SERVICE_DOWN,
    Abort,
    Fallback,
    RecoveryStrategy,
    Relation,
    Retry,
    SideEffect,
    ToolPlus,
    UserPrompt,
    tool_lts,
)
from sim.calculus.sgd import EXECUTION_ERROR, Service, intent_lts
from sim.scenario.model import Scenario


@dataclass(frozen=True)
class ToolFacts:
    """What the ground truth says about one tool (or SGD intent)."""

    name: str
    write: bool
    requires: tuple[str, ...] = ()
    exclusive: frozenset[str] = frozenset()
    recovery: Mapping[str, RecoveryStrategy] = field(default_factory=dict)
    ltss: tuple[LTS, ...] = ()
    sgd: bool = False
    #: trace label → LTS label for labels without an argument
    plain: Mapping[str, str] = field(default_factory=dict)
    #: the facts an invocation opened by ``invoke`` is replayed on (a scenario tool's
    #: ``tool_lts`` in the ``sgd`` dialect); ``None``: these facts serve both openings
    sgd_dialect: ToolFacts | None = None


@dataclass(frozen=True)
class Truth:
    """Tools, topology and workflows a trace is checked against."""

    tools: Mapping[str, ToolFacts]
    links: Mapping[frozenset[str], frozenset[str]] = field(default_factory=dict)
    speaks: Mapping[str, frozenset[str]] = field(default_factory=dict)
    workflow_tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    source: str = ""
    #: each workflow's task ids (the ``task`` of its events)
    workflow_tasks: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def write_tools(self) -> frozenset[str]:
        return frozenset(n for n, f in self.tools.items() if f.write)


def _mcp_plain(name: str) -> dict[str, str]:
    actions = ("call", "approve", "deny", "execute", "result", "retry", "prompt", "abort")
    out = {a: label(a, name) for a in actions}
    out["validate"] = TAU
    return out


def _sgd_plain(name: str) -> dict[str, str]:
    out = {a: label(a, name) for a in ("invoke", "deny", "execute", "result", "abort")}
    out["approve"] = label("confirm", name)  # the user's AFFIRM (paper §4.3)
    return out


def _sgd_dialect_plain(name: str) -> dict[str, str]:
    actions = ("invoke", "approve", "deny", "execute", "result", "retry", "prompt", "abort")
    return {a: label(a, name) for a in actions}  # no validate: the dialect has no τ


def tool_facts(desc: ToolPlus, error_types: Iterable[str]) -> ToolFacts:
    """The facts of one MCP+ descriptor (both dialects of its invocation LTS)."""
    modes: dict[str, RecoveryStrategy] = {}
    for fm in desc.failure_modes or ():
        modes.setdefault(fm.error, fm.recovery)
    deps = desc.dependencies or ()
    types = tuple(sorted({*error_types, SERVICE_DOWN, EXECUTION_ERROR}))
    gated = desc.requires_approval is True
    gates = (True,) if gated else (False, True)
    ltss = tuple(tool_lts(desc, approval=g, error_types=types) for g in gates)
    sgd_ltss = tuple(tool_lts(desc, approval=g, error_types=types, dialect="sgd") for g in gates)
    facts = ToolFacts(
        name=desc.name,
        write=desc.side_effects in (SideEffect.WRITE, SideEffect.DELETE),
        requires=tuple(d.tool for d in deps if d.relation == Relation.REQUIRES),
        exclusive=frozenset(d.tool for d in deps if d.relation == Relation.EXCLUSIVE_WITH),
        recovery=modes,
        ltss=ltss,
        plain=_mcp_plain(desc.name),
    )
    return _replace(
        facts,
        sgd_dialect=_replace(facts, ltss=sgd_ltss, sgd=True, plain=_sgd_dialect_plain(desc.name)),
    )


def from_scenario(scenario: Scenario, source: str = "") -> Truth:
    """The ground truth of a loaded scenario."""
    tools: dict[str, ToolFacts] = {}
    for spec in scenario.tools:
        desc = spec.descriptor()
        tools[spec.name] = tool_facts(desc, spec.errors)
    # ExclusiveWith is symmetric: declared on either side, it binds both
    for name, facts in list(tools.items()):
        for other in facts.exclusive:
            if other in tools and name not in tools[other].exclusive:
                o = tools[other]
                excl = o.exclusive | {name}
                sgd = o.sgd_dialect and _replace(o.sgd_dialect, exclusive=excl)
                tools[other] = _replace(o, exclusive=excl, sgd_dialect=sgd)
    links = {frozenset(link.between): frozenset(link.latency) for link in scenario.links}
    speaks = {a.id: frozenset(a.protocols) for a in scenario.agents}
    workflow_tools = {
        wf.name: frozenset(t.tool for t in wf.tasks if t.tool is not None)
        for wf in scenario.workflows
    }
    workflow_tasks = {wf.name: frozenset(t.id for t in wf.tasks) for wf in scenario.workflows}
    return Truth(tools, links, speaks, workflow_tools, source or scenario.name, workflow_tasks)


def _replace(facts: ToolFacts, **changes: Any) -> ToolFacts:
    values = {k: getattr(facts, k) for k in facts.__dataclass_fields__}
    values.update(changes)
    return ToolFacts(**values)


def from_services(services: Iterable[Service], source: str = "") -> Truth:
    """The ground truth of SGD services: one tool per intent, ``Service__Intent``;
    transactional intents are writes (they need the user's AFFIRM, paper §3.1)."""
    tools: dict[str, ToolFacts] = {}
    for svc in services:
        for intent in svc.intents:
            n = intent.qualified_name
            tools[n] = ToolFacts(
                name=n,
                write=intent.transactional,
                recovery={EXECUTION_ERROR: Abort()},
                ltss=(intent_lts(intent),),
                sgd=True,
                plain=_sgd_plain(n),
            )
    return Truth(tools, source=source)


def known_values(truth: Truth) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The strings a trace held to ``truth`` names, per field and detail key (SPEC §5):
    its agents, tools, workflows, tasks and protocols, each sorted (for
    :func:`sim.conformance.events.interning_decoder`; a value outside them is still
    read, by the plain decoder)."""
    agents = {a for ends in truth.links for a in ends} | set(truth.speaks)
    protos = {p for ps in truth.links.values() for p in ps}
    protos |= {p for ps in truth.speaks.values() for p in ps}
    tools = set(truth.tools)
    values = {
        "agent": agents,
        "tool": tools,
        "wf": set(truth.workflow_tools),
        "task": {t for tasks in truth.workflow_tasks.values() for t in tasks},
        "proto": protos,
        "from": agents,
        "to": agents | tools,
        "at": agents,
        "from_proto": protos,
        "to_proto": protos,
    }
    return tuple((k, tuple(sorted(v))) for k, v in values.items() if v)


def strategy_text(strategy: RecoveryStrategy) -> str:
    """``Retry(3)``, ``Fallback(tool)``, ``UserPrompt``, ``Abort``."""
    if isinstance(strategy, Retry):
        return f"Retry({strategy.n})"
    if isinstance(strategy, Fallback):
        return f"Fallback({strategy.tool})"
    if isinstance(strategy, UserPrompt):
        return "UserPrompt"
    return "Abort"
