"""Scenario tools → an MCP ``tools/list`` result with MCP⁺ metadata (``export mcp``).

Each tool becomes a spec-valid (2025-11-25) ``Tool``: ``name``, ``description``,
``inputSchema`` verbatim, ``annotations``, and the declared MCP⁺ fields under
``_meta["protomesh/mcp-plus"]`` (:meth:`sim.calculus.ToolPlus.to_json`). The same object
carries what a simulation needs to come back whole through ``serve``/``import``
(:mod:`sim.interop.plus_meta`): ``service_time``, ``errors`` and the scenario's ``protocols``.

Annotations (docs/interop.md §Decisions): when ``side_effects`` is known, ``readOnlyHint`` and
``destructiveHint`` are derived from it (none/read → readOnlyHint true; write → readOnlyHint
false, destructiveHint false; delete → readOnlyHint false, destructiveHint true) and a declared
hint that says otherwise is overridden with a note; ``title``, ``idempotentHint`` and
``openWorldHint`` are kept as declared. A field a fragment marked as guessed (``x-mcp``) and
that still holds its guess is unknown: it is left out of ``_meta``, and with an unknown
``side_effects`` the declared hints go out unchanged. MCP fields kept under ``x-mcp`` (title,
outputSchema, ...) are restored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from sim.calculus.mcp import (
    MCP_PLUS_META,
    Annotations,
    SideEffect,
    ToolsListError,
    tool_plus_from_mapping,
)
from sim.interop.errors import InteropError
from sim.interop.fragments import EXTENSION_KEY, GUESSABLE
from sim.interop.plus_meta import protocol_entries, simulation_keys
from sim.scenario.compose import plain_data
from sim.scenario.model import Scenario, ToolSpec

__all__ = [
    "Export",
    "derived_annotations",
    "read_extension",
    "scenario_extension",
    "scenario_tools_list",
    "spec_errors",
]


def scenario_extension(path: str | Path, key: str) -> Any:
    """The top-level ``key`` (an ``x-`` extension) of a scenario file, or None; the loader
    ignores ``x-`` keys, so this reads the YAML again (:class:`InteropError` if it cannot)."""
    try:
        data = plain_data(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:  # the scenario loader reported these already
        raise InteropError(f"{path}: cannot read: {exc}") from None
    return data.get(key) if isinstance(data, Mapping) else None


def read_extension(path: str | Path) -> Mapping[str, Any]:
    """The ``x-mcp`` extension of a scenario file (``{}`` if none). Raises
    :class:`InteropError` on a bad shape."""
    ext = scenario_extension(path, EXTENSION_KEY)
    if ext is None:
        return {}
    tools = ext.get("tools", {}) if isinstance(ext, Mapping) else None
    if not isinstance(tools, Mapping) or not all(isinstance(v, Mapping) for v in tools.values()):
        raise InteropError(f"{path}: {EXTENSION_KEY}.tools: expected a mapping of tool names")
    return tools


def derived_annotations(
    side: SideEffect, declared: Annotations | None
) -> tuple[Annotations, tuple[str, ...]]:
    """MCP hints derived from a known side effect, the declared ones kept where they do not
    conflict; the notes name every declared hint that was overridden."""
    d = declared or Annotations()
    read_only = side in (SideEffect.NONE, SideEffect.READ)
    destructive: bool | None = None if read_only else side is SideEffect.DELETE
    if read_only:
        destructive = d.destructive  # meaningful only when readOnlyHint is false: keep as is
    notes: list[str] = []
    if d.read_only is not None and d.read_only != read_only:
        notes.append(
            f"declared readOnlyHint={str(d.read_only).lower()} contradicts "
            f"side_effects={side.value}; exported {str(read_only).lower()}"
        )
    if not read_only and d.destructive is not None and d.destructive != destructive:
        notes.append(
            f"declared destructiveHint={str(d.destructive).lower()} contradicts "
            f"side_effects={side.value}; exported {str(destructive).lower()}"
        )
    ann = Annotations(read_only, destructive, d.idempotent, d.open_world, d.title)
    return ann, tuple(notes)


@dataclass(frozen=True, slots=True)
class Export:
    """A ``tools/list`` result and the notes about it (overridden hints, unknown fields)."""

    data: dict[str, Any]
    notes: tuple[str, ...]
    unknown: Mapping[str, tuple[str, ...]]


def _still_guessed(spec_data: Mapping[str, Any], guessed: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f for f in GUESSABLE if f in guessed and spec_data.get(f) == guessed[f])


def _entry(
    spec: ToolSpec, ext: Mapping[str, Any], protocols: Sequence[Any]
) -> tuple[dict[str, Any], list[str], tuple[str, ...]]:
    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not data.get("annotations"):
        data.pop("annotations", None)
    guessed = ext.get("guessed") or {}
    extras = dict(ext.get("mcp") or {})
    unknown = _still_guessed(data, guessed) if isinstance(guessed, Mapping) else ()
    try:
        tp = tool_plus_from_mapping(data, f"tools[{spec.name}]")
    except ToolsListError as exc:
        raise InteropError(str(exc)) from None
    tp = replace(
        tp,
        side_effects=None if "side_effects" in unknown else tp.side_effects,
        requires_approval=None if "requires_approval" in unknown else tp.requires_approval,
        failure_modes=None if "failure_modes" in unknown else tp.failure_modes,
        dependencies=None if "dependencies" in unknown else tp.dependencies,
    )
    held = ext.get("withheld") or {}
    if isinstance(held, Mapping) and held:
        try:
            back = tool_plus_from_mapping(
                {"name": spec.name, **held}, f"{EXTENSION_KEY}.tools.{spec.name}.withheld"
            )
        except ToolsListError as exc:
            raise InteropError(str(exc)) from None
        if back.dependencies and tp.dependencies is not None:
            extra = tuple(d for d in back.dependencies if d not in tp.dependencies)
            tp = replace(tp, dependencies=tp.dependencies + extra)
        if back.failure_modes and tp.failure_modes is not None:
            more = tuple(m for m in back.failure_modes if m not in tp.failure_modes)
            tp = replace(tp, failure_modes=tp.failure_modes + more)
    notes: list[str] = []
    if tp.side_effects is not None:
        ann, why = derived_annotations(tp.side_effects, tp.annotations)
        tp = replace(tp, annotations=ann)
        notes.extend(f"{spec.name}: {n}" for n in why)
    entry = tp.to_json()
    meta = entry.pop("_meta")
    plus = meta[MCP_PLUS_META]
    plus.update(simulation_keys(spec))
    extra_plus = extras.pop("mcp_plus", None)
    if isinstance(extra_plus, Mapping):
        plus.update({k: v for k, v in extra_plus.items() if k not in plus})
    if plus:
        plus["protocols"] = list(protocols)
    else:
        del meta[MCP_PLUS_META]
    if "description" in extras and extras.pop("description") is None:
        entry.pop("description", None)
    extra_ann = extras.pop("annotations", None)
    if isinstance(extra_ann, Mapping):
        entry["annotations"] = {**entry.get("annotations", {}), **extra_ann}
    extra_meta = extras.pop("_meta", None)
    if isinstance(extra_meta, Mapping):
        meta = {**extra_meta, **meta}
    entry.update(extras)
    if meta:
        entry["_meta"] = meta
    return entry, notes, unknown


def scenario_tools_list(
    scenario: Scenario, extension: Mapping[str, Any] | None = None, tools: Sequence[str] = ()
) -> Export:
    """The scenario's tools (or only ``tools``) as a ``tools/list`` result, in scenario
    order. Raises :class:`InteropError` for an unknown tool name."""
    ext = extension or {}
    specs = list(scenario.tools)
    if tools:
        names = {s.name for s in specs}
        missing = [t for t in tools if t not in names]
        if missing:
            raise InteropError(f"no tool {missing[0]!r} in scenario {scenario.name!r}")
        specs = [s for s in specs if s.name in set(tools)]
    entries: list[dict[str, Any]] = []
    notes: list[str] = []
    unknown: dict[str, tuple[str, ...]] = {}
    protocols = protocol_entries(scenario)
    for spec in specs:
        item = ext.get(spec.name) or {}
        entry, why, unk = _entry(spec, item if isinstance(item, Mapping) else {}, protocols)
        entries.append(entry)
        notes.extend(why)
        if unk:
            unknown[spec.name] = unk
    return Export({"tools": entries}, tuple(notes), unknown)


def spec_errors(
    data: Any, spec: Mapping[str, Any], definition: str = "ListToolsResult"
) -> list[str]:
    """Validation errors of ``data`` against ``definition`` of the MCP specification's JSON
    Schema ``spec`` (``$defs``, draft 2020-12); empty when valid."""
    from jsonschema import Draft202012Validator

    defs_key = "$defs" if "$defs" in spec else "definitions"
    schema = {
        "$schema": spec.get("$schema", "https://json-schema.org/draft/2020-12/schema"),
        "$ref": f"#/{defs_key}/{definition}",
        defs_key: spec[defs_key],
    }
    validator = Draft202012Validator(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '$'}: {e.message}"
        for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path)))
    ]
