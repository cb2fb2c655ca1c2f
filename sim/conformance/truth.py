"""The ground truth the checks hold a trace to: built from a scenario or an SGD schema.

Only the scenario's declarations are used (side effects, approval flags, failure modes,
dependencies, links and the protocols agents speak) and the calculus' LTS builders;
never the engine. A tool's ground-truth LTS for the ``lts`` check is its full MCP+
descriptor's LTS in the dialect of the invocation's protocol (:attr:`ToolFacts.dialects`,
:meth:`Truth.dialect_of`): the protocol's when that dialect opens with the invocation's
first label, else the built-in one that does (``call``: mcp, ``invoke``: sgd);
for SGD services, ``intent_lts`` of the intent. When the
ground truth has no approval gate, a caller may still ask (SPEC §2: a caller that lost
``requires_approval`` decides from hints or policy): asking is never unsafe, so both
the gated and the ungated LTS are accepted then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.approval import approval
from sim.calculus.lts import LTS, label
from sim.calculus.mcp import (
    SERVICE_DOWN,
    Abort,
    Fallback,
    RecoveryStrategy,
    Relation,
    Retry,
    ToolPlus,
    UserPrompt,
    excluders,
)
from sim.calculus.mcp.dialects import BUILTIN, MCP, Dialect
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
    #: an invocation collects slots (``collect(slot)`` is a label of its LTS)
    collects: bool = False
    #: trace label → LTS label for labels without an argument
    plain: Mapping[str, str] = field(default_factory=dict)
    #: the facts of the same tool in each dialect the ground truth knows (a scenario
    #: tool's LTS in that dialect); empty: these facts serve every opening
    dialects: Mapping[Dialect, ToolFacts] = field(default_factory=dict)


class DialectFacts(Mapping[Dialect, ToolFacts]):
    """A tool's facts per dialect (:attr:`ToolFacts.dialects`), each built at its first
    reading: a run reads those of the dialects its protocols speak, the others' LTSs are
    never built. Pickled as the plain dict of all of them."""

    __slots__ = ("_build", "_built", "_keys")

    def __init__(self, keys: Iterable[Dialect], build: Callable[[Dialect], ToolFacts]) -> None:
        self._keys = tuple(dict.fromkeys(keys))
        self._build = build
        self._built: dict[Dialect, ToolFacts] = {}

    def __getitem__(self, dialect: Dialect) -> ToolFacts:
        try:
            return self._built[dialect]
        except KeyError:
            if dialect not in self._keys:
                raise
        facts = self._built[dialect] = self._build(dialect)
        return facts

    def __iter__(self) -> Iterator[Dialect]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __reduce__(self) -> tuple[type[dict[Dialect, ToolFacts]], tuple[dict[Dialect, ToolFacts]]]:
        return dict, (dict(self.items()),)


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
    #: each protocol's dialect (protocols not named invoke as the built-in ones say)
    protocol_dialects: Mapping[str, Dialect] = field(default_factory=dict)

    def dialect_of(self, protocol: Any, opening: str) -> Dialect:
        """The dialect an invocation in ``protocol`` opened by ``opening`` is replayed in:
        the protocol's when it opens so, else the first built-in dialect that does."""
        own = self.protocol_dialects.get(protocol) if isinstance(protocol, str) else None
        if own is not None and own.opening == opening:
            return own
        return next((d for d in BUILTIN.values() if d.opening == opening), MCP)

    def shared_opening(self, opening: str) -> bool:
        """Whether every invocation opened by ``opening`` is replayed in one dialect,
        whatever its protocol (the ``lts`` check then keeps one start per tool)."""
        own = {d for d in self.protocol_dialects.values() if d.opening == opening}
        return own <= {self.dialect_of(None, opening)}

    @property
    def write_tools(self) -> frozenset[str]:
        return frozenset(n for n, f in self.tools.items() if f.write)


def _sgd_plain(name: str) -> dict[str, str]:
    out = {a: label(a, name) for a in ("invoke", "deny", "execute", "result", "abort")}
    out["approve"] = label("confirm", name)  # the user's AFFIRM (paper §4.3)
    return out


def tool_facts(
    desc: ToolPlus,
    error_types: Iterable[str],
    dialects: Iterable[Dialect] = (),
    exclusive: Iterable[str] = (),
) -> ToolFacts:
    """The facts of one MCP+ descriptor: in MCP's dialect, with the same facts in each
    built-in dialect and each of ``dialects`` (:attr:`ToolFacts.dialects`); ``exclusive``:
    the tools it excludes besides those it declares."""
    modes: dict[str, RecoveryStrategy] = {}
    for fm in desc.failure_modes or ():
        modes.setdefault(fm.error, fm.recovery)
    deps = desc.dependencies or ()
    types = tuple(sorted({*error_types, SERVICE_DOWN, EXECUTION_ERROR}))
    demand = approval(desc)
    gates = (True,) if demand.gated else (False, True)
    declared = frozenset(d.tool for d in deps if d.relation == Relation.EXCLUSIVE_WITH)

    def facts_in(dialect: Dialect) -> ToolFacts:
        return ToolFacts(
            name=desc.name,
            write=demand.demanded,
            requires=tuple(d.tool for d in deps if d.relation == Relation.REQUIRES),
            exclusive=declared | frozenset(exclusive),
            recovery=modes,
            ltss=tuple(dialect.lts(desc, approval=g, error_types=types) for g in gates),
            collects=dialect.collects,
            plain=dialect.plain(desc.name),
        )

    known = DialectFacts((*BUILTIN.values(), *dialects), facts_in)
    return _replace(known[MCP], dialects=known)


def from_scenario(scenario: Scenario, source: str = "") -> Truth:
    """The ground truth of a loaded scenario."""
    dialects = scenario.dialects()
    descs = {spec.name: spec.descriptor() for spec in scenario.tools}
    excluded = excluders(descs.values())  # ExclusiveWith binds both tools of a pair
    tools = {
        spec.name: tool_facts(
            descs[spec.name], spec.errors, dialects.values(), excluded.get(spec.name, ())
        )
        for spec in scenario.tools
    }
    links = {frozenset(link.between): frozenset(link.latency) for link in scenario.links}
    speaks = {a.id: frozenset(a.protocols) for a in scenario.agents}
    workflow_tools = {
        wf.name: frozenset(t.tool for t in wf.tasks if t.tool is not None)
        for wf in scenario.workflows
    }
    workflow_tasks = {wf.name: frozenset(t.id for t in wf.tasks) for wf in scenario.workflows}
    return Truth(
        tools, links, speaks, workflow_tools, source or scenario.name, workflow_tasks, dialects
    )


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
                collects=True,
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
