"""The named properties of a JSON schema at every depth, for the lint rules (paper §6).

A *property* is an entry of a ``properties`` map: of the schema itself, of an object's
property, of an array's ``items`` (or ``prefixItems``), of a branch of ``anyOf``/``oneOf``/
``allOf``, or of a ``$defs``/``definitions`` entry. ``$ref`` is not followed (the definitions
are walked where they stand). Each is reported once with its path, e.g.
``inputSchema.properties.filter.properties.since`` or
``inputSchema.properties.edits.items.properties.oldText``. Time is linear in the size of
the schema; anything that is not a mapping is skipped, so any JSON value is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Property", "Walked", "properties", "walk"]

_BRANCHES = ("anyOf", "oneOf", "allOf")
_DEFINITIONS = ("$defs", "definitions")
_MAX_DEPTH = 32
"""Deeper schemas are cut there (a bound on recursion; real tool schemas nest 4 deep)."""


@dataclass(frozen=True, slots=True)
class Property:
    """One named property (checked by P1, paper §6.1): where it is (``path``), its name, its
    schema, and whether it is top-level (a direct input of the tool)."""

    path: str
    name: str
    schema: Mapping[str, Any]
    top: bool

    @property
    def description(self) -> str:
        """The property's description, ``""`` when it has none (or not a string)."""
        desc = self.schema.get("description")
        return desc if isinstance(desc, str) else ""


@dataclass(frozen=True, slots=True)
class Walked:
    """A tool's input and output properties, walked once for all the rules of paper §6."""

    inputs: list[Property]
    outputs: list[Property]

    @property
    def top_inputs(self) -> set[str]:
        """The names of the tool's direct inputs."""
        return {p.name for p in self.inputs if p.top}


def walk(input_schema: Any, output_schema: Any) -> Walked:
    """:func:`properties` of a tool's ``inputSchema`` and ``outputSchema`` (paper §6)."""
    return Walked(
        properties(input_schema, "inputSchema"), properties(output_schema, "outputSchema")
    )


def properties(schema: Any, root: str) -> list[Property]:
    """Every named property of ``schema`` (paper §6.1; the module docstring), depth first,
    in the order of the schema's own keys; ``root`` starts every path (``inputSchema``)."""
    out: list[Property] = []
    _walk(schema, root, True, 0, out)
    return out


def _mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _walk(schema: Any, path: str, top: bool, depth: int, out: list[Property]) -> None:
    if not _mapping(schema) or depth > _MAX_DEPTH:
        return
    props = schema.get("properties")
    if props and _mapping(props):
        for name, sub in props.items():
            where = f"{path}.properties.{name}"
            if _mapping(sub):
                out.append(Property(where, str(name), sub, top))
                _walk(sub, where, False, depth + 1, out)
    items = schema.get("items")
    if items and _mapping(items):
        _walk(items, f"{path}.items", False, depth + 1, out)
    for key in ("prefixItems", *_BRANCHES):
        branches = schema.get(key)
        if branches and isinstance(branches, list):
            for i, sub in enumerate(branches):
                _walk(sub, f"{path}.{key}[{i}]", top and key != "prefixItems", depth + 1, out)
    for key in _DEFINITIONS:
        defs = schema.get(key)
        if defs and _mapping(defs):
            for name, sub in defs.items():
                _walk(sub, f"{path}.{key}.{name}", False, depth + 1, out)
