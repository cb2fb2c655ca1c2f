"""Invocation dialects: how one tool invocation goes in a protocol, and what its wire carries.

A :class:`Dialect` declares an invocation's shape (SPEC §4) from the trace vocabulary's
steps (SPEC §5), in order::

    opening . intake . [approve | deny] . execute . (result | error . recovery)

``opening`` is ``call`` or ``invoke``; ``intake`` is ``validate`` (the LTS's τ, which may
fail with ``ValidationError``) or ``collect`` (the caller asks the user for each required
slot its arguments lack; nothing fails there); the gate is there when the caller's view asks
for approval; ``execute`` may fail with the tool's error types; ``result``, ``deny`` and the
recoveries ``abort``, ``fallback``, ``prompt`` end an invocation (``retry`` goes back to the
intake after a ``ValidationError``, else to the gate). :meth:`Dialect.lts` builds that LTS
(:func:`~sim.calculus.mcp.tool_lts`); the engine, ``verify``, the live mesh and the checks
ask the dialect, never a protocol's name.

``carries`` is what the wire carries: the descriptor fields that reach a caller of a
protocol in this dialect when the protocol declares none (MCP: name, description, schema,
annotations; MCP⁺ the full ToolPlus; A2A the agent card's name and description). ``states``
names the protocol's own states of an invocation by the trace label that stands for each
(docs/scenario.md#protocols).

The built-in dialects are :class:`McpDialect`, :class:`SgdDialect` and :class:`A2aDialect`;
:mod:`sim.plugins` names them (and installed ones) and the scenario layer loads a
``module:Class`` plug-in (a subclass of :class:`Dialect`). This module imports nothing of
ours but the calculus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, Literal

from sim.calculus.lts import LTS, TAU, label
from sim.calculus.mcp.invocation import invocation_lts
from sim.calculus.mcp.model import PROTOCOL_FIELDS, Tool, ToolPlus
from sim.calculus.mcp.view import ToolView
from sim.calculus.sgd import EXECUTION_ERROR

__all__ = [
    "BUILTIN",
    "BUILTIN_PROTOCOL_DIALECTS",
    "ENDS",
    "MCP",
    "A2aDialect",
    "Dialect",
    "Intake",
    "McpDialect",
    "Opening",
    "SgdDialect",
    "builtin_dialect",
    "tool_lts",
]

Opening = Literal["call", "invoke"]
"""The trace labels that open an invocation (SPEC §5)."""
Intake = Literal["validate", "collect"]
"""What an invocation does between its opening and the approval gate."""
ENDS: tuple[str, ...] = ("result", "deny", "abort", "fallback", "prompt")
"""The trace labels that end an invocation, in every dialect."""
_RECOVERY = ("retry", "prompt", "abort")


class Dialect:
    """An invocation dialect (see the module; SPEC §4, paper §3.2.3): subclasses set the class
    attributes; one
    instance is shared by every protocol that declares it. Invariant: ``name`` is a
    registry name (letters, digits, ``-``, ``_``); a dialect is its class (equal and hashed
    by it); two dialects with the same opening and intake build the same LTS."""

    name: ClassVar[str] = ""
    opening: ClassVar[Opening] = "call"
    intake: ClassVar[Intake] = "validate"
    #: descriptor fields the wire carries (a protocol's own ``fields`` win); None: none
    #: declared (a protocol in this dialect must then declare its fields)
    carries: ClassVar[frozenset[str] | None] = None
    #: the protocol's own state names → the trace label that stands for each
    states: ClassVar[Mapping[str, str]] = MappingProxyType({})

    @property
    def validates(self) -> bool:
        """Whether the intake is the τ ``validate`` (which fails on a missing input)."""
        return self.intake == "validate"

    @property
    def collects(self) -> bool:
        """Whether the intake collects the missing required slots from the user."""
        return self.intake == "collect"

    def steps(self) -> tuple[str, ...]:
        """The trace labels of an invocation that succeeds with approval, in order."""
        return (self.opening, self.intake, "approve", "execute", "result")

    def failing(self) -> tuple[str, ...]:
        """The steps that may fail (each followed by ``error`` and a recovery)."""
        return ("validate", "execute") if self.validates else ("execute",)

    def lts(
        self,
        tool: Tool | ToolPlus | ToolView,
        *,
        approval: bool | None = None,
        error_types: Sequence[str] = (EXECUTION_ERROR,),
    ) -> LTS:
        """The LTS of one invocation of ``tool`` in this dialect (:func:`tool_lts`)."""
        return invocation_lts(
            tool,
            opening=self.opening,
            collects=self.collects,
            approval=approval,
            error_types=error_types,
        )

    def plain(self, tool: str) -> dict[str, str]:
        """Trace label → LTS label of ``tool``'s invocation, for the labels without an
        argument this dialect's invocations take (``validate`` is τ)."""
        actions = (self.opening, "approve", "deny", "execute", "result", *_RECOVERY)
        out = {a: label(a, tool) for a in actions}
        if self.validates:
            out["validate"] = TAU
        return out

    def __eq__(self, other: object) -> bool:
        """Two instances of one class are the same dialect (a copy made by pickling, in a
        worker process, included)."""
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash((type(self).__module__, type(self).__qualname__))

    def __repr__(self) -> str:
        return f"<dialect {self.name}: {' '.join(self.steps())}>"


class McpDialect(Dialect):
    """MCP's (and MCP⁺'s, ANP's; paper §3.2.3): call, τ validate, approve, execute, result."""

    name = "mcp"
    opening = "call"
    intake = "validate"
    carries = PROTOCOL_FIELDS["MCP"]


class SgdDialect(Dialect):
    """SGD's (paper §3.1): invoke, collect the missing slots, confirm (traced ``approve``),
    execute, result."""

    name = "sgd"
    opening = "invoke"
    intake = "collect"
    carries = PROTOCOL_FIELDS["SGD"]
    states = MappingProxyType(
        {"INFORM_INTENT": "invoke", "REQUEST": "collect", "AFFIRM": "approve"}
    )


class A2aDialect(Dialect):
    """A2A's task states (A2A §6.3 ``TaskState``) on the trace vocabulary: a message sent is
    ``submitted`` (``call``); ``input-required`` asks the client for a missing input
    (``collect``); ``working`` is ``execute``; ``completed``, ``failed``, ``canceled`` and
    ``rejected`` are ``result``, ``error``, ``abort`` and ``deny``. No client-side
    validation: the agent asks back for what is missing."""

    name = "a2a"
    opening = "call"
    intake = "collect"
    carries = PROTOCOL_FIELDS["A2A"]
    states = MappingProxyType(
        {
            "submitted": "call",
            "input-required": "collect",
            "auth-required": "approve",
            "working": "execute",
            "completed": "result",
            "failed": "error",
            "canceled": "abort",
            "rejected": "deny",
        }
    )


MCP = McpDialect()
"""The dialect of every protocol that neither declares one nor is built in otherwise."""
BUILTIN: Mapping[str, Dialect] = MappingProxyType(
    {d.name: d for d in (MCP, SgdDialect(), A2aDialect())}
)
"""The built-in dialects by name (:data:`sim.plugins.BUILTIN_DIALECTS` names their classes)."""
BUILTIN_PROTOCOL_DIALECTS: Mapping[str, Dialect] = MappingProxyType({"SGD": BUILTIN["sgd"]})
"""The dialect of a built-in protocol that does not invoke as MCP does (SPEC §4). A2A invokes
as MCP does (its traces stay as they were); a scenario entry may declare ``dialect: a2a``."""


def builtin_dialect(protocol: str) -> Dialect:
    """The dialect of ``protocol`` when its scenario entry declares none (SPEC §4)."""
    return BUILTIN_PROTOCOL_DIALECTS.get(protocol, MCP)


def tool_lts(
    tool: Tool | ToolPlus | ToolView,
    *,
    approval: bool | None = None,
    error_types: Sequence[str] = (EXECUTION_ERROR,),
    dialect: Dialect | str = "mcp",
) -> LTS:
    """The LTS of one invocation of ``tool`` (paper §3.2.3, §6.2, §6.3; SPEC §4) in
    ``dialect``, a :class:`Dialect` or a built-in one's name; ``ValueError`` for another
    name. The gate and the errors are :func:`~sim.calculus.mcp.invocation.invocation_lts`'s."""
    if isinstance(dialect, str):
        if dialect not in BUILTIN:
            raise ValueError(f"dialect must be {'|'.join(BUILTIN)}, not {dialect!r}")
        dialect = BUILTIN[dialect]
    return dialect.lts(tool, approval=approval, error_types=error_types)
