"""The SGD calculus (paper §3.1): slots, intents, services, and the LTS of an intent.

An intent invocation (paper §3.1.3, SPEC §4) is::

    invoke(n) . collect(r1) ... collect(rk) . [confirm(n) | deny(n)] . execute(n) .
        (result(n) | error(n,ExecutionError) . abort(n))

with ``error(n,MissingSlots) . abort(n)`` possible while required slots are still missing,
``collect(o)`` self-loops for optional slots, and the confirmation only when the intent is
transactional. ``n`` is the service-qualified name ``Service__Intent`` (intent names repeat
across services).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.calculus.lts import LTS, is_label_argument, label

__all__ = [
    "DONTCARE",
    "EXECUTION_ERROR",
    "MISSING_SLOTS",
    "SERVICE_SEPARATOR",
    "Intent",
    "SchemaError",
    "Service",
    "Slot",
    "intent_lts",
    "load_schema",
    "services_from_json",
    "services_to_json",
]

SERVICE_SEPARATOR = "__"
"""Joins service and intent names into a tool name (``Banks_1__CheckBalance``)."""
DONTCARE = "dontcare"
"""SGD's optional-slot value meaning "no constraint": not a default value."""
MISSING_SLOTS = "MissingSlots"
"""The SGD error type of paper §4.4, Case 2."""
EXECUTION_ERROR = "ExecutionError"
"""A failed service call (SGD ``NOTIFY_FAILURE``; an MCP result with ``isError``)."""


class SchemaError(ValueError):
    """A malformed SGD ``schema.json`` (paper §3.1.1 syntax); ``path`` is the JSON path of the bad
    field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass(frozen=True, slots=True)
class Slot:
    """``Slot⟨name, type, values⟩`` (paper §3.1.1). SGD slot values are strings; only a
    categorical slot has a closed value set (``possible_values`` of a non-categorical slot are
    examples)."""

    name: str
    description: str
    is_categorical: bool = False
    possible_values: tuple[str, ...] = ()

    @property
    def type(self) -> str:
        """The slot's value type: always ``string`` in SGD."""
        return "string"


@dataclass(frozen=True, slots=True)
class Intent:
    """``Intent⟨n, d, R, O, t⟩`` (paper §3.1.1), plus the SGD schema's optional-slot defaults
    (``dontcare`` is not a default and is not stored), result slots, and its service."""

    name: str
    description: str
    required: tuple[Slot, ...]
    optional: tuple[Slot, ...]
    transactional: bool
    defaults: tuple[tuple[str, str], ...] = ()
    result_slots: tuple[Slot, ...] = ()
    service: str = ""

    @property
    def qualified_name(self) -> str:
        """``Service__Intent`` (intent names repeat across services), or the bare name."""
        return f"{self.service}{SERVICE_SEPARATOR}{self.name}" if self.service else self.name

    def default(self, slot: str) -> str | None:
        """The default value of optional slot ``slot``, if it has a real one."""
        return dict(self.defaults).get(slot)


@dataclass(frozen=True, slots=True)
class Service:
    """An SGD service (paper §3.1): a named, described set of slots and the intents over them."""

    name: str
    description: str
    slots: tuple[Slot, ...]
    intents: tuple[Intent, ...]


def _str(obj: Mapping[str, Any], key: str, path: str) -> str:
    value = obj.get(key)
    unknown = obj.get("unknown")
    if value is None and isinstance(unknown, list) and key in unknown:
        return ""  # reported unknown by Φ⁻¹ (``unphi``): empty, and still listed as unknown
    if not isinstance(value, str):
        raise SchemaError(f"{path}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def _list(obj: Mapping[str, Any], key: str, path: str) -> list[Any]:
    value = obj.get(key)
    if not isinstance(value, list):
        raise SchemaError(f"{path}.{key}", f"expected a list, got {type(value).__name__}")
    return value


def _name(obj: Mapping[str, Any], key: str, path: str) -> str:
    """A service, intent or slot name: it becomes a label argument (``invoke(S__I)``,
    ``collect(slot)``), so it must be one (paper §3.3 label grammar)."""
    value = _str(obj, key, path)
    if not is_label_argument(value):
        raise SchemaError(
            f"{path}.{key}",
            f"{value!r} cannot name a label argument (no spaces, commas, parentheses or quotes)",
        )
    return value


def services_from_json(data: Any) -> tuple[Service, ...]:
    """Services (paper §3.1.1) from a parsed SGD ``schema.json`` (a list of services); raises
    :class:`SchemaError` with the JSON path of the first bad field (names must be label
    arguments, paper §3.3)."""
    if not isinstance(data, list):
        raise SchemaError("$", "expected a list of services")
    services: list[Service] = []
    for i, raw in enumerate(data):
        path = f"$[{i}]"
        if not isinstance(raw, Mapping):
            raise SchemaError(path, "expected an object")
        sname = _name(raw, "service_name", path)
        slots: dict[str, Slot] = {}
        for j, rs in enumerate(_list(raw, "slots", path)):
            spath = f"{path}.slots[{j}]"
            if not isinstance(rs, Mapping):
                raise SchemaError(spath, "expected an object")
            values = rs.get("possible_values", [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise SchemaError(f"{spath}.possible_values", "expected a list of strings")
            cat = rs.get("is_categorical", False)
            if not isinstance(cat, bool):
                raise SchemaError(f"{spath}.is_categorical", "expected a boolean")
            slot = Slot(
                _name(rs, "name", spath), _str(rs, "description", spath), cat, tuple(values)
            )
            slots[slot.name] = slot
        intents: list[Intent] = []
        for j, ri in enumerate(_list(raw, "intents", path)):
            ipath = f"{path}.intents[{j}]"
            if not isinstance(ri, Mapping):
                raise SchemaError(ipath, "expected an object")

            def resolve(name: Any, where: str, slots: Mapping[str, Slot] = slots) -> Slot:
                if not isinstance(name, str) or name not in slots:
                    raise SchemaError(where, f"unknown slot {name!r}")
                return slots[name]

            required = tuple(
                resolve(n, f"{ipath}.required_slots[{k}]")
                for k, n in enumerate(_list(ri, "required_slots", ipath))
            )
            opt_raw = ri.get("optional_slots", {})
            if not isinstance(opt_raw, Mapping):
                raise SchemaError(f"{ipath}.optional_slots", "expected an object")
            optional = tuple(resolve(n, f"{ipath}.optional_slots.{n}") for n in opt_raw)
            for n, v in opt_raw.items():
                if not isinstance(v, str):
                    raise SchemaError(f"{ipath}.optional_slots.{n}", "slot values are strings")
            defaults = tuple((n, v) for n, v in opt_raw.items() if v != DONTCARE)
            results = tuple(
                resolve(n, f"{ipath}.result_slots[{k}]")
                for k, n in enumerate(
                    _list(ri, "result_slots", ipath) if "result_slots" in ri else []
                )
            )
            trans = ri.get("is_transactional", False)
            if not isinstance(trans, bool):
                raise SchemaError(f"{ipath}.is_transactional", "expected a boolean")
            intents.append(
                Intent(
                    _name(ri, "name", ipath),
                    _str(ri, "description", ipath),
                    required,
                    optional,
                    trans,
                    defaults,
                    results,
                    sname,
                )
            )
        services.append(
            Service(sname, _str(raw, "description", path), tuple(slots.values()), tuple(intents))
        )
    return tuple(services)


def load_schema(path: str | Path) -> tuple[Service, ...]:
    """Load an SGD ``schema.json`` (the services of the SGD dataset, paper §3.1)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return services_from_json(data)


def services_to_json(services: Sequence[Service]) -> list[dict[str, Any]]:
    """The ``schema.json`` shape of ``services`` (paper §3.1.1; inverse of
    :func:`services_from_json`)."""
    out: list[dict[str, Any]] = []
    for svc in services:
        out.append(
            {
                "service_name": svc.name,
                "description": svc.description,
                "slots": [
                    {
                        "name": s.name,
                        "description": s.description,
                        "is_categorical": s.is_categorical,
                        "possible_values": list(s.possible_values),
                    }
                    for s in svc.slots
                ],
                "intents": [
                    {
                        "name": it.name,
                        "description": it.description,
                        "is_transactional": it.transactional,
                        "required_slots": [s.name for s in it.required],
                        "optional_slots": {
                            s.name: it.default(s.name) or DONTCARE for s in it.optional
                        },
                        "result_slots": [s.name for s in it.result_slots],
                    }
                    for it in svc.intents
                ],
            }
        )
    return out


def intent_lts(intent: Intent) -> LTS:
    """The LTS of one invocation of ``intent`` (paper §3.1.3 and §3.3, SPEC §4).

    States: ``idle``, ``collect_i`` (``i`` required slots collected), ``ready``, ``approved``
    (transactional only), ``executing``, ``failed_*``, ``done``. ``error(n,MissingSlots)``
    leaves every ``collect_i`` with ``i < k``; ``collect(o)`` loops on every collecting state
    for each optional slot ``o``.
    """
    n = intent.qualified_name
    k = len(intent.required)
    names: list[str] = []
    trans: list[tuple[int, str, int]] = []

    def state(name: str) -> int:
        names.append(name)
        return len(names) - 1

    idle = state("idle")
    collecting = [state(f"collect_{i}") for i in range(k + 1)]  # collect_k = ready
    names[collecting[-1]] = "ready"
    ready = collecting[-1]
    approved = state("approved") if intent.transactional else ready
    executing = state("executing")
    failed_missing = state("failed_missing") if k else -1
    failed_exec = state("failed_exec")
    done = state("done")
    trans.append((idle, label("invoke", n), collecting[0]))
    for i, slot in enumerate(intent.required):
        trans.append((collecting[i], label("collect", slot.name), collecting[i + 1]))
        trans.append((collecting[i], label("error", n, MISSING_SLOTS), failed_missing))
    for c in collecting:
        for slot in intent.optional:
            trans.append((c, label("collect", slot.name), c))
    if k:
        trans.append((failed_missing, label("abort", n), done))
    if intent.transactional:
        trans.append((ready, label("confirm", n), approved))
        trans.append((ready, label("deny", n), done))
    trans.append((approved, label("execute", n), executing))
    trans.append((executing, label("result", n), done))
    trans.append((executing, label("error", n, EXECUTION_ERROR), failed_exec))
    trans.append((failed_exec, label("abort", n), done))
    return LTS(len(names), idle, trans, names)
