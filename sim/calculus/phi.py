"""The mappings Φ (paper §4.1) and Φ⁺ (paper §7.2) from SGD intents to MCP tools.

Φ follows Definition 4.1, with three choices where the data demand one (docs/calculus.md):
tool names are ``Service__Intent``; an optional slot's real default becomes JSON Schema
``default`` (``dontcare`` is not a default); a non-categorical slot's example values become
``examples`` (only categorical slots get ``enum``); result slots become ``outputSchema``.
The inverses are :mod:`sim.calculus.unphi`, the theorems :mod:`sim.calculus.theorems`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sim.calculus.mcp import (
    VALIDATION_ERROR,
    Abort,
    Annotations,
    Dependency,
    FailureMode,
    Relation,
    SideEffect,
    Tool,
    ToolPlus,
)
from sim.calculus.sgd import EXECUTION_ERROR, Intent, Service, Slot

__all__ = [
    "extract_deps",
    "extract_errors",
    "first_sentence",
    "phi",
    "phi_annotated",
    "phi_plus",
    "phi_services",
    "schema",
]


def _prop(slot: Slot, default: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": slot.type, "description": slot.description}
    if slot.is_categorical and slot.possible_values:
        out["enum"] = list(slot.possible_values)
    elif slot.possible_values:
        out["examples"] = list(slot.possible_values)
    if default is not None:
        out["default"] = default
    return out


def schema(intent: Intent) -> dict[str, Any]:
    """``schema(R, O)`` of paper §4.1: required = R's names, properties = ``prop(s)`` for
    ``s ∈ R ∪ O``, ``enum`` for categorical slots only, ``default`` for real defaults."""
    props = {s.name: _prop(s) for s in intent.required}
    props.update({s.name: _prop(s, intent.default(s.name)) for s in intent.optional})
    return {
        "type": "object",
        "required": [s.name for s in intent.required],
        "properties": props,
    }


def _output_schema(intent: Intent) -> dict[str, Any] | None:
    if not intent.result_slots:
        return None
    return {"type": "object", "properties": {s.name: _prop(s) for s in intent.result_slots}}


def phi(intent: Intent) -> Tool:
    """Φ(Intent⟨n, d, R, O, t⟩) = Tool⟨n, d, schema(R, O)⟩ (paper §4.1, Definition 4.1):
    ``t`` is dropped."""
    return Tool(
        intent.qualified_name, intent.description, schema(intent), None, _output_schema(intent)
    )


def phi_annotated(intent: Intent) -> Tool:
    """Φ with MCP annotations: a transactional intent gets ``readOnlyHint: false,
    destructiveHint: false, idempotentHint: false``, any other ``readOnlyHint: true``. Not in the
    paper: it measures how much the (untrusted) hints of MCP recover of ``t`` (§5.4)."""
    if intent.transactional:
        ann = Annotations(read_only=False, destructive=False, idempotent=False)
    else:
        ann = Annotations(read_only=True)
    return replace(phi(intent), annotations=ann)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """``first_sentence(d)`` of paper §7.2: up to the first ``.``, ``!`` or ``?`` + space."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def extract_errors(intent: Intent) -> tuple[FailureMode, ...]:
    """``extract_errors(Intent)`` of paper §7.2: the SGD semantics' errors with their recovery.

    SGD's ``Error⟨t, m⟩`` ends the invocation (a new attempt needs a new invocation and, for
    a transactional intent, a new confirmation), so each error type recovers by ``Abort``:
    ``ValidationError`` (the MCP name of ``MissingSlots``, §4.4 Case 2) when there are
    required slots, and ``ExecutionError`` (a failed service call) always.
    """
    modes = [FailureMode(VALIDATION_ERROR, Abort())] if intent.required else []
    modes.append(FailureMode(EXECUTION_ERROR, Abort()))
    return tuple(modes)


def _new_outputs(intent: Intent) -> set[str]:
    inputs = {s.name for s in intent.required} | {s.name for s in intent.optional}
    return {s.name for s in intent.result_slots} - inputs


def extract_deps(intent: Intent, service: Service | None) -> tuple[Dependency, ...]:
    """``extract_deps(Intent)`` of paper §7.2: ``(J, ProducesInputFor)`` for every other intent
    ``J`` of the same service with a required slot that ``intent`` produces as a result
    without taking it as input (e.g. ``SearchHotel`` produces ``hotel_name`` for
    ``ReserveHotel``). Without a service there are none."""
    if service is None:
        return ()
    produced = _new_outputs(intent)
    deps: list[Dependency] = []
    for other in service.intents:
        if other.name == intent.name:
            continue
        if produced & {s.name for s in other.required}:
            deps.append(Dependency(other.qualified_name, Relation.PRODUCES_INPUT_FOR))
    return tuple(deps)


def phi_plus(intent: Intent, service: Service | None = None) -> ToolPlus:
    """Φ⁺(Intent⟨n, d, R, O, t⟩) = Tool⟨n, d, schema(R, O)⟩⁺[meta] (paper §7.2) with
    side_effects = t ? write : read, requires_approval = t, failure_modes = extract_errors,
    summary = first_sentence(d), dependencies = extract_deps (within ``service``)."""
    base = phi(intent)
    return ToolPlus(
        base.name,
        base.description,
        base.input_schema,
        SideEffect.WRITE if intent.transactional else SideEffect.READ,
        intent.transactional,
        extract_errors(intent),
        first_sentence(intent.description),
        extract_deps(intent, service),
        None,
        base.output_schema,
    )


def phi_services(
    services: Sequence[Service], *, plus: bool = False, annotations: bool = False
) -> tuple[Tool | ToolPlus, ...]:
    """Φ (or Φ⁺ with ``plus``; Φ with annotations with ``annotations``) of every intent of
    ``services``, in schema order (paper §4.1 and §7.2, lifted to ``S1 | S2``)."""
    out: list[Tool | ToolPlus] = []
    for svc in services:
        for intent in svc.intents:
            if plus:
                tp = phi_plus(intent, svc)
                if annotations:
                    tp = replace(tp, annotations=phi_annotated(intent).annotations)
                out.append(tp)
            else:
                out.append(phi_annotated(intent) if annotations else phi(intent))
    return tuple(out)
