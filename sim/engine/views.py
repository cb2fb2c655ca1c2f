"""Tool views: a tool's compiled ground truth and what a caller knows of it.

:class:`ToolRT` is a scenario tool compiled once per replication (its calculus
descriptor, error draw table, service-time sampler). :class:`ViewRT` is a caller's
:class:`~sim.calculus.mcp.ToolView` of it (the fields a ``list`` reply kept, the
built-in rule's approval decision, which its ``list`` line records) with the LTSs an
invocation runs (one per approval decision and dialect: the approval policy decides per
call, :mod:`sim.approval`), its interned labels and the trace fragments of its lines;
:class:`Views` shares one per (tool, fields). No time: views are values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sim.approval import approval
from sim.calculus.lts import LTS, label
from sim.calculus.mcp import (
    SERVICE_DOWN,
    ToolPlus,
    ToolView,
    caller_view,
    excluders,
    knowledge,
)
from sim.calculus.mcp.dialects import Dialect
from sim.engine.randomness import Sampler
from sim.engine.trace import js

#: An LTS's transitions as one dict per state, label → the (first) successor.
Table = tuple[dict[str, int], ...]


def transition_table(lts: LTS) -> Table:
    """``lts.step`` as a table: ``table[state].get(label)`` is ``lts.step(state, label)``."""
    table = []
    for state in range(lts.n_states):
        first: dict[str, int] = {}
        for lab, dst in lts.enabled(state):
            first.setdefault(lab, dst)
        table.append(first)
    return tuple(table)


class ToolRT:
    """A tool's ground truth, compiled once per replication."""

    __slots__ = ("error_types", "errors", "excluded_by", "j", "name", "service", "truth", "write")

    def __init__(self, spec: Any, service: Sampler) -> None:
        self.name: str = spec.name
        #: the tools that declare this one ExclusiveWith (set with every tool's: :func:`tools_of`)
        self.excluded_by: frozenset[str] = frozenset()
        self.j = js(spec.name)
        self.truth: ToolPlus = spec.descriptor()
        self.write = approval(self.truth).demanded
        self.service = service
        cumulative = 0.0
        errors: list[tuple[float, str]] = []
        for name in sorted(spec.errors):
            p = float(spec.errors[name])
            if p > 0:
                cumulative += p
                errors.append((cumulative, name))
        self.errors = tuple(errors)
        self.error_types: tuple[str, ...] = tuple(sorted({*spec.errors, SERVICE_DOWN}))


def tools_of(specs: Any, service: Callable[[Any], Sampler]) -> dict[str, ToolRT]:
    """The tools of a replication by name (``specs``: the scenario's), every one of them
    knowing the tools that declare it ExclusiveWith; ``service``: each spec's sampler."""
    tools = {t.name: ToolRT(t, service(t)) for t in specs}
    for name, by in excluders([t.truth for t in tools.values()]).items():
        tools[name].excluded_by = by
    return tools


@dataclass(frozen=True, slots=True)
class Labels:
    """The interned LTS labels of one tool."""

    call: str
    invoke: str
    approve: str
    deny: str
    execute: str
    result: str
    retry: str
    prompt: str
    abort: str

    @staticmethod
    def of(name: str) -> Labels:
        return Labels(
            *(
                label(a, name)
                for a in (
                    "call",
                    "invoke",
                    "approve",
                    "deny",
                    "execute",
                    "result",
                    "retry",
                    "prompt",
                    "abort",
                )
            )
        )


class ViewRT:
    """What a caller knows of a tool (its :class:`ToolView`), with the LTSs it runs."""

    __slots__ = (
        "_lts",
        "_tables",
        "approval",
        "collect",
        "exclusive",
        "feeds",
        "fields",
        "labels",
        "list_detail",
        "recovery",
        "required",
        "requires",
        "sd_retries",
        "tool",
        "view",
    )

    def __init__(self, tool: ToolRT, view: ToolView) -> None:
        self.tool = tool
        self.view = view
        self.approval = view.approval
        self.fields = view.fields
        self._lts: dict[tuple[bool, Dialect], LTS] = {}  # (gate, dialect) → LTS, when first run
        self._tables: dict[int, tuple[LTS, Table]] = {}  # id(LTS) → its transition table
        self.labels = Labels.of(tool.name)
        known = knowledge(view, tool.excluded_by)
        self.required = known.required
        self.collect: dict[str, str] = {}
        self.requires = known.requires
        self.feeds = known.feeds
        self.exclusive = known.exclusive
        self.recovery = known.recovery
        self.sd_retries = known.sd_retries
        #: the members of its ``list`` line after ``host``
        self.list_detail = (
            f'"fields":{js(sorted(view.fields))},"approval":{js(view.approval)},'
            f'"approval_reason":{js(view.approval_reason)}'
        )

    def lts(self, gate: bool, dialect: Dialect) -> LTS:
        """The LTS of an invocation in ``dialect`` with the approval gate (``gate``) or
        without; built once each."""
        key = (gate, dialect)
        lts = self._lts.get(key)
        if lts is None:
            lts = dialect.lts(self.view, approval=gate, error_types=self.tool.error_types)
            self._lts[key] = lts
            if dialect.collects:
                self.collect = {r: label("collect", r) for r in self.required}
        return lts

    def table(self, lts: LTS) -> Table:
        """The transition table of ``lts`` (one of this view's), built once."""
        hit = self._tables.get(id(lts))
        if hit is None or hit[0] is not lts:
            hit = self._tables[id(lts)] = (lts, transition_table(lts))
        return hit[1]


class Views:
    """The views of one replication, shared per (tool, fields)."""

    __slots__ = ("_views", "mcp_policy")

    def __init__(self, mcp_policy: str) -> None:
        self.mcp_policy = mcp_policy
        self._views: dict[tuple[str, frozenset[str]], ViewRT] = {}

    def of(self, tool: ToolRT, fields: frozenset[str]) -> ViewRT:
        """The (shared, cached) view of ``tool`` projected to ``fields``."""
        key = (tool.name, fields)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = make_view(tool, fields, self.mcp_policy)
        return view


def views_equal(a: ViewRT, b: ViewRT) -> bool:
    """Whether two views carry the same knowledge (fields and approval)."""
    return a.fields == b.fields and a.approval == b.approval


def make_view(tool: ToolRT, fields: frozenset[str], mcp_policy: str) -> ViewRT:
    """The caller's view of ``tool`` from a descriptor projected to ``fields``."""
    return ViewRT(tool, caller_view(tool.truth, fields, mcp_policy))
