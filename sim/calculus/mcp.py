"""The MCP and MCP⁺ calculi (paper §3.2, §6, §7.1): tools, their metadata, and their LTSs.

A tool invocation (paper §3.2.3 and §6.3 ``Tool_robust``, SPEC §4) is::

    call(n) . τ(validate) . [approve(n) | deny(n)] . execute(n) .
        (result(n) | error(n,t) . recovery)

with ``error(n,ValidationError)`` instead of the τ when the schema has required inputs, the
approval gate only when the caller's view asks for approval, one error branch per error type,
and recovery ``retry(n)`` (back to the gate: an approval is consumed by one execute, at most
``k`` times, then ``abort``), ``fallback(n,tool)``, ``prompt(n)`` or ``abort(n)``; an error
type without a declared strategy aborts (SPEC §2).

The same invocation issued in SGD (``dialect="sgd"``, SPEC §4's intent shape) is::

    invoke(n) . collect(r1)? ... collect(rk)? . [approve(n) | deny(n)] . execute(n) .
        (result(n) | error(n,t) . recovery)

one optional ``collect(ri)`` per required input, in the schema's ``required`` order (the
caller asks the user for the slots its arguments lack; any in-order subset is a trace), no
validation τ (collected slots cannot fail validation), and SGD's ``confirm`` traced as
``approve`` (SPEC §5 has no ``confirm`` label). Recovery is the MCP dialect's.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, get_args

from sim.calculus.lts import LTS, TAU, label
from sim.calculus.sgd import EXECUTION_ERROR

__all__ = [
    "ALL_FIELDS",
    "MCP_PLUS_META",
    "PROTOCOL_FIELDS",
    "VALIDATION_ERROR",
    "Abort",
    "Annotations",
    "Dependency",
    "DescriptorField",
    "Dialect",
    "FailureMode",
    "Fallback",
    "RecoveryStrategy",
    "Relation",
    "Retry",
    "SideEffect",
    "Tool",
    "ToolPlus",
    "ToolView",
    "ToolsListError",
    "UserPrompt",
    "caller_view",
    "load_tools",
    "tool_lts",
    "tools_from_list",
    "tools_to_list",
]

MCP_PLUS_META = "protomesh/mcp+"
"""The ``_meta`` key under which a ``tools/list`` entry carries MCP⁺ metadata."""
Dialect = Literal["mcp", "sgd"]
"""The shape of an invocation: issued in MCP/MCP⁺/A2A/ANP (``call``) or in SGD (``invoke``)."""
VALIDATION_ERROR = "ValidationError"
"""The MCP error of a failed input validation (paper §4.4, MCP-Validate-Err)."""

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
        """The declared metadata in the scenario / ``_meta["protomesh/mcp+"]`` shape."""
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
        """A ``tools/list`` entry with the metadata under ``_meta["protomesh/mcp+"]``."""
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

    @staticmethod
    def from_mapping(d: Mapping[str, Any], path: str = "$") -> ToolPlus:
        """Build from the scenario's tool-entry shape (SPEC §1 ``tools:``; also the content of
        ``_meta["protomesh/mcp+"]`` merged with a ``tools/list`` entry). Keys this calculus does
        not model (``service_time``, ``errors``...) are ignored; ``inputSchema`` is accepted for
        ``input_schema``. Raises :class:`ToolsListError` naming the JSON path."""
        if not isinstance(d, Mapping):
            raise ToolsListError(path, "expected an object")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise ToolsListError(f"{path}.name", "expected a non-empty string")
        description = _opt_str(d, "description", path)
        schema_key = "input_schema" if "input_schema" in d else "inputSchema"
        input_schema = _opt_schema(d, schema_key, path)
        output_key = "output_schema" if "output_schema" in d else "outputSchema"
        output_schema = _opt_schema(d, output_key, path)
        side = d.get("side_effects")
        side = getattr(side, "value", side)
        side_effects: SideEffect | None = None
        if side is not None:
            try:
                side_effects = SideEffect(side)
            except ValueError:
                raise ToolsListError(
                    f"{path}.side_effects", f"expected none|read|write|delete, got {side!r}"
                ) from None
        approval = d.get("requires_approval")
        if approval is not None and not isinstance(approval, bool):
            raise ToolsListError(f"{path}.requires_approval", "expected a boolean")
        failure_modes = None
        if d.get("failure_modes") is not None:
            failure_modes = _failure_modes(d["failure_modes"], f"{path}.failure_modes")
        dependencies = None
        if d.get("dependencies") is not None:
            dependencies = _dependencies(d["dependencies"], f"{path}.dependencies")
        annotations = None
        if d.get("annotations") is not None:
            annotations = Annotations.from_json(d["annotations"], f"{path}.annotations")
        return ToolPlus(
            name,
            description,
            input_schema,
            side_effects,
            approval,
            failure_modes,
            _opt_str(d, "summary", path),
            dependencies,
            annotations,
            output_schema,
        )


def _opt_str(d: Mapping[str, Any], key: str, path: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise ToolsListError(f"{path}.{key}", "expected a string")
    return value


def _opt_schema(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
    value = d.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ToolsListError(f"{path}.{key}", "expected a JSON Schema object")
    if value.get("type", "object") != "object":
        raise ToolsListError(f"{path}.{key}.type", "expected 'object'")
    props = value.get("properties", {})
    if not isinstance(props, Mapping):
        raise ToolsListError(f"{path}.{key}.properties", "expected an object")
    req = value.get("required", [])
    if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
        raise ToolsListError(f"{path}.{key}.required", "expected a list of strings")
    return value


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


def _recovery(obj: Any, path: str) -> RecoveryStrategy:
    if not isinstance(obj, Mapping) or len(obj) != 1:
        raise ToolsListError(path, "expected one of {retry: n}, {fallback: tool}, {prompt: m}, ...")
    ((key, value),) = obj.items()
    if key == "retry" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Retry(value)
    if key == "fallback" and isinstance(value, str) and value:
        return Fallback(value)
    if key == "prompt" and isinstance(value, str):
        return UserPrompt(value)
    if key == "abort" and value is True:
        return Abort()
    raise ToolsListError(f"{path}.{key}", f"bad recovery {key}: {value!r}")


def _failure_modes(obj: Any, path: str) -> tuple[FailureMode, ...]:
    if not isinstance(obj, list):
        raise ToolsListError(path, "expected a list")
    out: list[FailureMode] = []
    for i, fm in enumerate(obj):
        p = f"{path}[{i}]"
        if not isinstance(fm, Mapping):
            raise ToolsListError(p, "expected an object {error, recovery}")
        err = fm.get("error")
        if not isinstance(err, str) or not err:
            raise ToolsListError(f"{p}.error", "expected an error type name")
        out.append(FailureMode(err, _recovery(fm.get("recovery"), f"{p}.recovery")))
    return tuple(out)


def _dependencies(obj: Any, path: str) -> tuple[Dependency, ...]:
    if not isinstance(obj, list):
        raise ToolsListError(path, "expected a list")
    out: list[Dependency] = []
    for i, dep in enumerate(obj):
        p = f"{path}[{i}]"
        if not isinstance(dep, Mapping):
            raise ToolsListError(p, "expected an object {tool, relation}")
        tool = dep.get("tool")
        if not isinstance(tool, str) or not tool:
            raise ToolsListError(f"{p}.tool", "expected a tool name")
        try:
            rel = Relation(str(getattr(dep.get("relation"), "value", dep.get("relation"))))
        except ValueError:
            raise ToolsListError(
                f"{p}.relation", "expected Requires|ProducesInputFor|ExclusiveWith"
            ) from None
        out.append(Dependency(tool, rel))
    return tuple(out)


def tools_from_list(data: Any, path: str = "$") -> tuple[Tool | ToolPlus, ...]:
    """Parse an MCP ``tools/list`` result ``{"tools": [...]}`` (paper §3.2 ``ToolsList``):
    entries with ``_meta["protomesh/mcp+"]`` become :class:`ToolPlus`, others :class:`Tool`."""
    if not isinstance(data, Mapping) or not isinstance(data.get("tools"), list):
        raise ToolsListError(path, 'expected a tools/list result {"tools": [...]}')
    out: list[Tool | ToolPlus] = []
    for i, entry in enumerate(data["tools"]):
        p = f"{path}.tools[{i}]"
        if not isinstance(entry, Mapping):
            raise ToolsListError(p, "expected an object")
        if "inputSchema" not in entry:
            raise ToolsListError(f"{p}.inputSchema", "missing (required by MCP)")
        meta = entry.get("_meta") or {}
        if not isinstance(meta, Mapping):
            raise ToolsListError(f"{p}._meta", "expected an object")
        plus = meta.get(MCP_PLUS_META)
        if plus is not None:
            if not isinstance(plus, Mapping):
                raise ToolsListError(f"{p}._meta.{MCP_PLUS_META}", "expected an object")
            merged = {k: v for k, v in entry.items() if k != "_meta"}
            merged.update(plus)
            out.append(ToolPlus.from_mapping(merged, p))
        else:
            tp = ToolPlus.from_mapping({k: v for k, v in entry.items() if k != "_meta"}, p)
            out.append(tp.tool)
    return tuple(out)


def tools_to_list(tools: Sequence[Tool | ToolPlus]) -> dict[str, Any]:
    """A ``tools/list`` result (paper §3.2 ``ToolsList``) for ``tools``, MCP⁺ metadata (§7.1)
    under ``_meta``."""
    return {"tools": [t.to_json() for t in tools]}


def load_tools(path: str | Path) -> tuple[Tool | ToolPlus, ...]:
    """Load a saved ``tools/list`` result (paper §3.2 ``ToolsList``); raises ``OSError``,
    ``json.JSONDecodeError`` or :class:`ToolsListError`."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return tools_from_list(data)


@dataclass(frozen=True, slots=True)
class ToolView:
    """What a caller knows of a tool (SPEC §2): the descriptor projected to ``fields`` and the
    approval decision (paper §6.2 WriteApproval, as far as the caller can apply it)."""

    descriptor: ToolPlus
    fields: frozenset[str]
    approval: bool
    approval_reason: str = field(default="")


def caller_view(
    tool: Tool | ToolPlus, fields: Collection[str] = ALL_FIELDS, mcp_policy: str = "hints"
) -> ToolView:
    """Project ``tool`` to ``fields`` and decide the approval gate as SPEC §2 prescribes:
    ``requires_approval`` if known; else ``side_effects`` (ask for write or delete); else
    ``mcp_policy``: ``hints`` (ask unless ``readOnlyHint`` is true, an absent hint taking the
    MCP default false), ``never`` or ``always``."""
    if mcp_policy not in ("hints", "never", "always"):
        raise ValueError(f"mcp_policy must be hints|never|always, not {mcp_policy!r}")
    full = ToolPlus.from_tool(tool) if isinstance(tool, Tool) else tool
    keep = frozenset(fields)
    unknown = sorted(keep - ALL_FIELDS)
    if unknown:
        raise ValueError(f"unknown descriptor fields: {', '.join(unknown)}")

    def pick(name: str, value: Any) -> Any:
        return value if name in keep else None

    d = ToolPlus(
        full.name,
        pick("description", full.description),
        pick("input_schema", full.input_schema),
        pick("side_effects", full.side_effects),
        pick("requires_approval", full.requires_approval),
        pick("failure_modes", full.failure_modes),
        pick("summary", full.summary),
        pick("dependencies", full.dependencies),
        pick("annotations", full.annotations),
        full.output_schema if "input_schema" in keep else None,
    )
    if d.requires_approval is not None:
        return ToolView(d, keep, d.requires_approval, "requires_approval")
    if d.side_effects is not None:
        ask = d.side_effects in (SideEffect.WRITE, SideEffect.DELETE)
        return ToolView(d, keep, ask, f"side_effects={d.side_effects.value}")
    if mcp_policy == "hints":
        read_only = (d.annotations or Annotations()).effective("readOnlyHint")
        return ToolView(d, keep, not read_only, f"mcp_policy=hints, readOnlyHint={read_only}")
    return ToolView(d, keep, mcp_policy == "always", f"mcp_policy={mcp_policy}")


def tool_lts(
    tool: Tool | ToolPlus | ToolView,
    *,
    approval: bool | None = None,
    error_types: Sequence[str] = (EXECUTION_ERROR,),
    dialect: Dialect = "mcp",
) -> LTS:
    """The LTS of one invocation of ``tool`` (paper §3.2.3, §6.2 ``Tool_write``, §6.3
    ``Tool_robust``; SPEC §4).

    The approval gate follows ``approval`` if given, else the view's decision, else
    ``requires_approval is True`` (a plain :class:`Tool` has none). Errors after ``execute``:
    each declared failure mode's type plus ``error_types`` (undeclared ones abort). A
    ``ValidationError`` branch replaces nothing: it is offered beside the τ whenever the schema
    has required inputs or the failure modes declare it. State names show the phase and the
    retries used.

    ``dialect="sgd"``: ``invoke(n)`` opens, then the collecting states ``collect_i`` (``i``
    the next position in the schema's ``required`` list) where ``collect(r_j)`` for any
    ``j ≥ i`` leads to ``collect_{j+1}`` and the gate (or ``execute``) is enabled too: any
    in-order subset of the required inputs is collected, with no τ (a weak-trace equivalent
    of "``collect(r_i)`` or a τ skip" at each position, without silent steps for the engine
    to take or the ``lts`` check to close over). No validation phase; ``retry`` goes back to
    the gate as in the MCP dialect.
    """
    if dialect not in ("mcp", "sgd"):
        raise ValueError(f"dialect must be mcp|sgd, not {dialect!r}")
    sgd = dialect == "sgd"
    if isinstance(tool, ToolView):
        desc, gate = tool.descriptor, tool.approval
    elif isinstance(tool, Tool):
        desc, gate = ToolPlus.from_tool(tool), False
    else:
        desc, gate = tool, tool.requires_approval is True
    if approval is not None:
        gate = approval
    n = desc.name
    modes: dict[str, RecoveryStrategy] = {}
    for fm in desc.failure_modes or ():
        modes.setdefault(fm.error, fm.recovery)
    schema = desc.input_schema or {}
    slots: tuple[str, ...] = tuple(schema.get("required", ()) or ()) if sgd else ()
    collect_labels = [label("collect", r) for r in slots]
    validation_fails = not sgd and (bool(schema.get("required")) or VALIDATION_ERROR in modes)
    exec_errors = [e for e in modes if e != VALIDATION_ERROR]
    exec_errors.extend(e for e in error_types if e not in modes and e != VALIDATION_ERROR)
    retried = sorted(e for e, r in modes.items() if isinstance(r, Retry))
    slot = {e: i for i, e in enumerate(retried)}

    # state key: (phase, error type or "", retries used per retried error type)
    Key = tuple[str, str, tuple[int, ...]]
    start: Key = ("idle", "", tuple(0 for _ in retried))
    number: dict[Key, int] = {start: 0}
    order: list[Key] = [start]
    trans: list[tuple[int, str, int]] = []
    queue: deque[Key] = deque([start])

    def go(src: int, lab: str, key: Key) -> None:
        dst = number.get(key)
        if dst is None:
            dst = number[key] = len(order)
            order.append(key)
            queue.append(key)
        trans.append((src, lab, dst))

    done: Key = ("done", "", ())

    def gate_from(src: int, used: tuple[int, ...]) -> None:
        if gate:
            go(src, label("approve", n), ("approved", "", used))
            go(src, label("deny", n), done)
        else:
            go(src, label("execute", n), ("executing", "", used))

    while queue:
        key = queue.popleft()
        phase, err, used = key
        src = number[key]
        if phase == "idle":
            if not sgd:
                go(src, label("call", n), ("validating", "", used))
            else:
                go(src, label("invoke", n), ("collect_0" if slots else "ready", "", used))
        elif phase.startswith("collect_"):
            for j in range(int(phase[8:]), len(slots)):
                nxt = f"collect_{j + 1}" if j + 1 < len(slots) else "ready"
                go(src, collect_labels[j], (nxt, "", used))
            gate_from(src, used)
        elif phase == "validating":
            go(src, TAU, ("ready", "", used))
            if validation_fails:
                go(src, label("error", n, VALIDATION_ERROR), ("failed", VALIDATION_ERROR, used))
        elif phase == "ready":
            gate_from(src, used)
        elif phase == "approved":
            go(src, label("execute", n), ("executing", "", used))
        elif phase == "executing":
            go(src, label("result", n), done)
            for e in exec_errors:
                go(src, label("error", n, e), ("failed", e, used))
        elif phase == "failed":
            rec = modes.get(err, Abort())
            if isinstance(rec, Retry) and used[slot[err]] < rec.n:
                more = list(used)
                more[slot[err]] += 1
                back = "validating" if err == VALIDATION_ERROR else "ready"
                go(src, label("retry", n), (back, "", tuple(more)))
            elif isinstance(rec, Fallback):
                go(src, label("fallback", n, rec.tool), done)
            elif isinstance(rec, UserPrompt):
                go(src, label("prompt", n), done)
            else:
                go(src, label("abort", n), done)

    def show(key: Key) -> str:
        phase, err, used = key
        text = f"{phase}:{err}" if err else phase
        if any(used):
            text += "[" + ",".join(f"{e}={used[slot[e]]}" for e in retried) + "]"
        return text

    return LTS(len(order), 0, trans, [show(k) for k in order])
