"""Values set by field path on top of a scenario file (``--set``, sweep points)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sim.scenario.compose import Document, kind_of
from sim.scenario.diagnostics import Diagnostic, FieldPath, format_path

#: An :class:`Override` value that removes the field (e.g. a sweep point drops ``sweep:``).
REMOVE: Any = object()


@dataclass(frozen=True, slots=True)
class Override:
    """A value set by field path on top of the file (``--set``, a sweep point).

    ``label`` says where it came from (``--set routing.loss_penalty=0.5``) and is added
    to every diagnostic about the field; ``at``, if given, is the field of the file the
    diagnostic points at (a sweep block's value), else the overridden field (or its
    nearest ancestor present in the file).
    """

    path: FieldPath
    value: Any
    label: str
    at: FieldPath | None = None


def apply_override(data: dict[str, Any], override: Override, doc: Document) -> str | None:
    """Set ``override`` in ``data``; return why it cannot be applied, or None."""
    path = override.path
    if not path:
        return "an override needs a field path"
    node: Any = data
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        shown = format_path(path[:depth]) or "the scenario"
        if isinstance(node, list):
            if not isinstance(part, int):
                return f"{shown} is a list: index it with a number, not '{part}'"
            if not -len(node) <= part < len(node):
                return f"{shown} has {len(node)} item(s): index {part} is out of range"
            if last:
                if override.value is REMOVE:
                    del node[part]
                else:
                    node[part] = override.value
                return None
            node = node[part]
        elif isinstance(node, dict):
            key = str(part)
            if last:
                if override.value is REMOVE:
                    node.pop(key, None)
                else:
                    node[key] = override.value
                return None
            if key not in node or node[key] is None:
                if override.value is REMOVE:
                    return None
                node[key] = [] if isinstance(path[depth + 1], int) else {}
            node = node[key]
        else:
            return (
                f"{shown} is {kind_of(node)}, not a mapping or list: cannot set {format_path(path)}"
            )
    return None


def _related(field: str, path: FieldPath) -> bool:
    """True when the diagnostic ``field`` is ``path``, inside it, or one of its parents."""
    target = format_path(path)
    if field == target:
        return True
    return any(
        a.startswith(b) and a[len(b) : len(b) + 1] in (".", "[")
        for a, b in ((field, target), (target, field))
    )


def with_overrides(
    diagnostics: list[Diagnostic], overrides: Sequence[Override], doc: Document
) -> list[Diagnostic]:
    """Name the override behind each diagnostic about an overridden field (and point at it)."""
    out: list[Diagnostic] = []
    for diag in diagnostics:
        for ov in overrides:
            if ov.value is not REMOVE and _related(diag.field, ov.path) and diag.field != "<root>":
                line, column = doc.locate(ov.at) if ov.at is not None else (diag.line, diag.column)
                diag = Diagnostic(
                    diag.file,
                    line,
                    column,
                    diag.field,
                    f"{diag.message} (with {ov.label})",
                    diag.severity,
                )
                break
        out.append(diag)
    return out
