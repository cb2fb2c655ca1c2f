"""How a decoded trace line departs from the vocabulary (for tests and readers).

:func:`line_problems` takes one line as a dict (``json.loads`` of it) and returns what
is wrong with it, each problem naming the field or detail key; ``[]`` for a line the
vocabulary declares. Types: ``float`` accepts a JSON integer, ``int`` never a bool.
"""

from __future__ import annotations

from typing import Any

from sim.vocabulary.labels import FIELD_NAMES, FIELDS, LABELS, STRINGS

#: The fields each scope fills (non-null); the others of wf..proto must be null.
_FILLED: dict[str, frozenset[str]] = {
    "element": frozenset(),
    "instance": frozenset(("wf", "inst")),
    "task": frozenset(("wf", "inst", "task", "tool")),
    "invocation": frozenset(("wf", "inst", "task", "inv", "tool", "proto")),
    "message": frozenset(("wf", "inst", "task", "inv", "tool", "proto")),
}
_OWNER_FIELDS = ("wf", "inst", "task", "inv", "tool", "proto")


def has_type(value: Any, declared: object) -> bool:
    """Whether a decoded JSON ``value`` has the ``declared`` vocabulary type."""
    if declared is bool:
        return isinstance(value, bool)
    if declared is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if declared is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if declared is str:
        return isinstance(value, str)
    if declared == STRINGS:
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    if declared is dict:
        return isinstance(value, dict)
    raise ValueError(f"not a vocabulary type: {declared!r}")


def line_problems(line: dict[str, Any], *, source: str = "engine") -> list[str]:
    """What in ``line`` the vocabulary does not declare (fields, order, types, keys).

    ``source="engine"`` also requires the engine's key order and scope (which fields are
    null); ``source="live"`` the same, and allows the live mesh's ``wall``; dialogue lines
    (``source="dialogue"``) may carry the dialogue keys."""
    problems: list[str] = []
    if tuple(line) != FIELD_NAMES:
        problems.append(f"fields {list(line)} are not {list(FIELD_NAMES)}")
    name = line.get("label")
    spec = LABELS.get(name) if isinstance(name, str) else None
    if spec is None:
        return [*problems, f"label: {name!r} is not a trace label (docs/reference/trace.md)"]
    for field in FIELDS:
        value = line.get(field.name)
        if value is None:
            if not field.nullable:
                problems.append(f"{field.name}: missing or null")
        elif not has_type(value, field.type):
            problems.append(f"{field.name}: {value!r} is not of type {field.type!r}")
    ordered = source in ("engine", "live")
    if ordered:
        filled = _FILLED[spec.scope]
        for f in _OWNER_FIELDS:
            if (line.get(f) is not None) != (f in filled):
                state = "null" if line.get(f) is None else "set"
                problems.append(f"{f}: {state} for a {name} (scope {spec.scope})")
    detail = line.get("detail")
    if not isinstance(detail, dict):
        return problems
    allowed = [
        k
        for k in spec.keys
        if source == "dialogue" or k.source == source or (source == "live" and k.source == "engine")
    ]
    names = [k.name for k in allowed]
    for key, value in detail.items():
        if key not in names:
            problems.append(f"detail.{key}: not declared for {name}")
        elif not has_type(value, (declared := allowed[names.index(key)]).type):
            problems.append(f"detail.{key}: {value!r} is not of type {declared.type!r}")
        elif declared.values and value not in declared.values:
            problems.append(f"detail.{key}: {value!r} is not one of {list(declared.values)}")
    for k in allowed:
        if k.required and k.name not in detail:
            problems.append(f"detail.{k.name}: required for {name}, missing")
    order = [k for k in detail if k in names]
    if ordered and order != sorted(order, key=names.index):
        problems.append(f"detail keys {order} are not in the declared order {names}")
    return problems
