"""Reading MCP and MCP⁺ descriptors from JSON (paper §3.2 ``ToolsList``, §7.1): ``tools/list``
results, their ``_meta["protomesh/mcp-plus"]`` metadata (the legacy key ``protomesh/mcp-plus`` is
read too) and the scenario's tool entries (SPEC §1).
Every error is a :class:`ToolsListError` naming the JSON path of the bad field."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sim.calculus.mcp.model import (
    MCP_PLUS_META,
    MCP_PLUS_META_LEGACY,
    Abort,
    Annotations,
    Dependency,
    FailureMode,
    Fallback,
    RecoveryStrategy,
    Relation,
    Retry,
    SideEffect,
    Tool,
    ToolPlus,
    ToolsListError,
    UserPrompt,
)

__all__ = [
    "load_tools",
    "mcp_plus_key",
    "tool_plus_from_mapping",
    "tools_from_list",
    "tools_to_list",
]


def tool_plus_from_mapping(d: Mapping[str, Any], path: str = "$") -> ToolPlus:
    """A :class:`ToolPlus` (paper §7.1) from the scenario's tool-entry shape (SPEC §1) or a
    ``tools/list`` entry merged with its MCP⁺ ``_meta`` (see :meth:`ToolPlus.from_mapping`)."""
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


def mcp_plus_key(meta: Mapping[str, Any]) -> str | None:
    """The ``_meta`` key holding MCP⁺ metadata (paper §7.1) in ``meta``: :data:`MCP_PLUS_META`,
    else the legacy :data:`MCP_PLUS_META_LEGACY`, else ``None`` (a plain MCP tool)."""
    for key in (MCP_PLUS_META, MCP_PLUS_META_LEGACY):
        if key in meta and meta[key] is not None:
            return key
    return None


def tools_from_list(data: Any, path: str = "$") -> tuple[Tool | ToolPlus, ...]:
    """Parse an MCP ``tools/list`` result ``{"tools": [...]}`` (paper §3.2 ``ToolsList``):
    entries with ``_meta["protomesh/mcp-plus"]`` (or the legacy ``protomesh/mcp-plus``) become
    :class:`ToolPlus`, others :class:`Tool`."""
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
        key = mcp_plus_key(meta)
        if key is not None:
            plus = meta[key]
            if not isinstance(plus, Mapping):
                raise ToolsListError(f"{p}._meta.{key}", "expected an object")
            merged = {k: v for k, v in entry.items() if k != "_meta"}
            merged.update(plus)
            out.append(tool_plus_from_mapping(merged, p))
        else:
            tp = tool_plus_from_mapping({k: v for k, v in entry.items() if k != "_meta"}, p)
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
