"""The MCP and MCP⁺ descriptors (paper §3.2.1, §6, §7.1): tools, their metadata fields and
the shapes they are written in (SPEC §2). Parsing is :mod:`sim.calculus.mcp.parsing`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, get_args

__all__ = [
    "ALL_FIELDS",
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "HINT_DEFAULTS",
    "MAX_FALLBACK_DEPTH",
    "MCP_PLUS_META",
    "MCP_PLUS_META_LEGACY",
    "PROTOCOL_FIELDS",
    "SERVICE_DOWN",
    "VALIDATION_ERROR",
    "Abort",
    "Annotations",
    "Dependency",
    "DescriptorField",
    "FailureMode",
    "Fallback",
    "RecoveryStrategy",
    "Relation",
    "Retry",
    "SideEffect",
    "Tool",
    "ToolPlus",
    "ToolsListError",
    "UserPrompt",
    "backoff",
]

MCP_PLUS_META = "protomesh/mcp-plus"
"""The ``_meta`` key under which a ``tools/list`` entry carries MCP⁺ metadata (the MCP
naming rule: a prefix, then a name that begins and ends with an alphanumeric character).
Every writer (``export mcp``, ``serve mcp``, ``phi``) and reader uses this constant."""
MCP_PLUS_META_LEGACY = "protomesh/mcp+"
"""The key protomesh wrote before it followed the naming rule: still read on import, never
written."""
VALIDATION_ERROR = "ValidationError"
"""The MCP error of a failed input validation (paper §4.4, MCP-Validate-Err)."""
SERVICE_DOWN = "ServiceDown"
"""The error a caller's timeout stands for (SPEC §4): its recovery is the view's for it."""

DescriptorField = Literal[
    "name",
    "description",
    "input_schema",
    "side_effects",
    "requires_approval",
    "failure_modes",
    "dependencies",
    "summary",
    "annotations",
]
"""A field of a tool descriptor (SPEC §2), as a scenario's user-defined protocol names it."""

ALL_FIELDS: frozenset[str] = frozenset(get_args(DescriptorField))
"""The fields of a ground-truth descriptor (SPEC §2): MCP⁺'s eight plus MCP annotations."""

PROTOCOL_FIELDS: Mapping[str, frozenset[str]] = {
    "MCP+": ALL_FIELDS,
    "SGD": ALL_FIELDS - {"annotations"},
    "MCP": frozenset({"name", "description", "input_schema", "annotations"}),
    "ANP": frozenset({"name", "description", "input_schema", "requires_approval"}),
    "A2A": frozenset({"name", "description"}),
}
"""The fields each built-in protocol represents (SPEC §2 table)."""


class ToolsListError(ValueError):
    """A malformed tool descriptor (paper §3.2.1, §7.1); ``path`` is the JSON path of the bad
    field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class SideEffect(StrEnum):
    """``side_effects ::= read | write | delete | none`` (paper §6.2)."""

    NONE = "none"
    READ = "read"
    WRITE = "write"
    DELETE = "delete"

    @property
    def writes(self) -> bool:
        """Whether the tool changes state (``write`` or ``delete``)."""
        return self in (SideEffect.WRITE, SideEffect.DELETE)


class Relation(StrEnum):
    """``relation ::= Requires | ProducesInputFor | ExclusiveWith`` (paper §6.4)."""

    REQUIRES = "Requires"
    PRODUCES_INPUT_FOR = "ProducesInputFor"
    EXCLUSIVE_WITH = "ExclusiveWith"


@dataclass(frozen=True, slots=True)
class Retry:
    """``Retry(n)`` (paper §6.3): retry at most ``n`` times."""

    n: int


@dataclass(frozen=True, slots=True)
class Fallback:
    """``Fallback(tool)`` (paper §6.3): call ``tool`` instead."""

    tool: str


@dataclass(frozen=True, slots=True)
class UserPrompt:
    """``UserPrompt(m)`` (paper §6.3): ask the user with message ``m``."""

    message: str


@dataclass(frozen=True, slots=True)
class Abort:
    """``Abort`` (paper §6.3): give up the invocation."""


RecoveryStrategy = Retry | Fallback | UserPrompt | Abort
"""``RecoveryStrategy ::= Retry(n) | Fallback(tool) | UserPrompt(m) | Abort`` (paper §6.3)."""

BACKOFF_BASE = 0.5
"""Seconds before the first retry or re-send (SPEC §4); doubled each time, capped."""
BACKOFF_CAP = 30.0
"""The longest backoff, seconds."""
MAX_FALLBACK_DEPTH = 8
"""Fallback chains longer than this fail the task (``fallback_depth``; guards against cycles)."""
SGD = "SGD"
"""The built-in protocol whose invocations take the ``sgd`` dialect (SPEC §4;
:data:`sim.calculus.mcp.dialects.BUILTIN_PROTOCOL_DIALECTS`)."""
DISCOVERY_ATTEMPTS = 3
"""``tools/list`` attempts (the first and its re-sends) before the waiting tasks fail."""


def backoff(k: int) -> float:
    """Seconds before the ``k``-th retry or re-send (k ≥ 1, SPEC §4): 0.5 × 2^(k−1), ≤ 30."""
    return min(BACKOFF_CAP, BACKOFF_BASE * (2.0 ** min(k - 1, 64)))  # 2**1024 overflows


@dataclass(frozen=True, slots=True)
class FailureMode:
    """``(ErrorType, RecoveryStrategy)`` (paper §6.3)."""

    error: str
    recovery: RecoveryStrategy


@dataclass(frozen=True, slots=True)
class Dependency:
    """``(tool_name, relation)`` (paper §6.4)."""

    tool: str
    relation: Relation


_HINTS = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)
HINT_DEFAULTS: Mapping[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
"""The MCP specification's defaults of absent hints (2025-11-25 ``ToolAnnotations``)."""


@dataclass(frozen=True, slots=True)
class Annotations:
    """MCP ``ToolAnnotations`` (the hints behind P2, paper §6.2); ``None`` = hint absent (the spec
    default then applies)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None

    def effective(self, hint: str) -> bool:
        """The value of ``hint`` (``readOnlyHint``, ...) with the spec default when absent."""
        attr = dict((j, a) for a, j in _HINTS)[hint]
        value: bool | None = getattr(self, attr)
        return HINT_DEFAULTS[hint] if value is None else value

    def to_json(self) -> dict[str, Any]:
        """The MCP JSON object (absent hints omitted)."""
        out: dict[str, Any] = {}
        if self.title is not None:
            out["title"] = self.title
        for attr, key in _HINTS:
            value = getattr(self, attr)
            if value is not None:
                out[key] = value
        return out

    @staticmethod
    def from_json(obj: Any, path: str = "annotations") -> Annotations:
        """Parse an MCP ``annotations`` object; raises :class:`ToolsListError`."""
        if not isinstance(obj, Mapping):
            raise ToolsListError(path, "expected an object")
        values: dict[str, Any] = {}
        for attr, key in _HINTS:
            v = obj.get(key)
            if v is not None and not isinstance(v, bool):
                raise ToolsListError(f"{path}.{key}", "expected a boolean")
            values[attr] = v
        title = obj.get("title")
        if title is not None and not isinstance(title, str):
            raise ToolsListError(f"{path}.title", "expected a string")
        return Annotations(title=title, **values)


@dataclass(frozen=True, slots=True)
class Tool:
    """``Tool⟨n, d, schema⟩`` (paper §3.2.1), with MCP's optional annotations and output
    schema."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Annotations | None = None
    output_schema: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """A ``tools/list`` entry."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
        }
        if self.output_schema is not None:
            out["outputSchema"] = dict(self.output_schema)
        if self.annotations is not None:
            out["annotations"] = self.annotations.to_json()
        return out


@dataclass(frozen=True, slots=True)
class ToolPlus:
    """``Tool⟨n, d, schema⟩⁺[meta]`` (paper §7.1) with the five metadata fields; a field that is
    ``None`` is not declared (or not known to the caller, see :func:`caller_view`)."""

    name: str
    description: str | None
    input_schema: Mapping[str, Any] | None
    side_effects: SideEffect | None = None
    requires_approval: bool | None = None
    failure_modes: tuple[FailureMode, ...] | None = None
    summary: str | None = None
    dependencies: tuple[Dependency, ...] | None = None
    annotations: Annotations | None = None
    output_schema: Mapping[str, Any] | None = None

    @property
    def tool(self) -> Tool:
        """The plain MCP projection (paper §7: forget the metadata)."""
        return Tool(
            self.name,
            self.description or "",
            self.input_schema if self.input_schema is not None else {"type": "object"},
            self.annotations,
            self.output_schema,
        )

    @staticmethod
    def from_tool(tool: Tool) -> ToolPlus:
        """A plain MCP tool as an MCP⁺ descriptor with no metadata declared."""
        return ToolPlus(
            tool.name,
            tool.description,
            tool.input_schema,
            annotations=tool.annotations,
            output_schema=tool.output_schema,
        )

    def meta(self) -> dict[str, Any]:
        """The declared metadata in the scenario / ``_meta["protomesh/mcp-plus"]`` shape."""
        out: dict[str, Any] = {}
        if self.side_effects is not None:
            out["side_effects"] = self.side_effects.value
        if self.requires_approval is not None:
            out["requires_approval"] = self.requires_approval
        if self.failure_modes is not None:
            out["failure_modes"] = [
                {"error": fm.error, "recovery": _recovery_json(fm.recovery)}
                for fm in self.failure_modes
            ]
        if self.dependencies is not None:
            out["dependencies"] = [
                {"tool": d.tool, "relation": d.relation.value} for d in self.dependencies
            ]
        if self.summary is not None:
            out["summary"] = self.summary
        return out

    def to_json(self) -> dict[str, Any]:
        """A ``tools/list`` entry with the metadata under ``_meta["protomesh/mcp-plus"]``."""
        out = self.tool.to_json()
        out["_meta"] = {MCP_PLUS_META: self.meta()}
        return out

    def to_mapping(self) -> dict[str, Any]:
        """The scenario's tool-entry shape (SPEC §1 ``tools:``), declared fields only."""
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.input_schema is not None:
            out["input_schema"] = dict(self.input_schema)
        out.update(self.meta())
        if self.annotations is not None:
            out["annotations"] = self.annotations.to_json()
        return out


def _recovery_json(r: RecoveryStrategy) -> dict[str, Any]:
    match r:
        case Retry(n):
            return {"retry": n}
        case Fallback(tool):
            return {"fallback": tool}
        case UserPrompt(message):
            return {"prompt": message}
        case Abort():
            return {"abort": True}
