"""Pydantic's errors as located diagnostics, and the salvage of what validates.

When the scenario does not validate as a whole, :func:`salvage_model` keeps every item,
entry and field that validates on its own, so the cross-field rules still check them
(one bad agent does not hide a bad link); :func:`remap` maps paths into the salvage
back to the file's indices.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from sim.scenario.compose import Document, kind_of
from sim.scenario.diagnostics import Diagnostic, FieldPath
from sim.scenario.model import Scenario, SpecError
from sim.scenario.model.base import UNION_TAGS
from sim.spelling import did_you_mean


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types inside Optional / Annotated / unions."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _model_at(path: FieldPath) -> type[BaseModel] | None:
    """The model class whose fields live at ``path`` in a scenario document."""
    current: list[Any] = [Scenario]
    for part in path:
        following: list[Any] = []
        for tp in current:
            for concrete in _unwrap(tp):
                origin = typing.get_origin(concrete)
                if isinstance(part, int) and origin is list:
                    following.extend(_unwrap(typing.get_args(concrete)[0]))
                elif isinstance(part, str) and origin is dict:
                    following.extend(_unwrap(typing.get_args(concrete)[1]))
                elif (
                    isinstance(part, str)
                    and isinstance(concrete, type)
                    and issubclass(concrete, BaseModel)
                ):
                    for name, info in concrete.model_fields.items():
                        if (info.alias or name) == part:
                            following.extend(_unwrap(info.annotation))
        current = following
    for tp in current:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return tp
    return None


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_BOUNDS = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", "≥"),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "≤"),
}

_TYPE_WORDS = {
    "dict_type": "a mapping",
    "model_type": "a mapping of fields",
    "model_attributes_type": "a mapping of fields",
    "list_type": "a list",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
}


def _loc(err: ErrorDetails) -> FieldPath:
    """The error's location in the document (without the tags of union members)."""
    return tuple(part for part in err["loc"] if part not in UNION_TAGS)


def pydantic_diagnostic(err: ErrorDetails, doc: Document, base: FieldPath) -> Diagnostic:
    path: FieldPath = (*base, *_loc(err))
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = f" (got {_short(err['input'])})"
    if kind == "extra_forbidden":
        key = str(path[-1])
        model = _model_at(path[:-1])
        hint = did_you_mean(key, _field_names(model)) if model else ""
        if not hint and model:
            hint = f" (allowed: {', '.join(_field_names(model))})"
        return doc.diagnostic(path, f"unknown key '{key}'{hint}", at_key=True)
    if kind == "missing":
        return doc.diagnostic(path, f"missing required field '{path[-1]}'")
    message = err["msg"]
    if kind == "value_error":
        error = ctx.get("error")
        if isinstance(error, SpecError):
            path = (*path, *error.where)
        message = message.removeprefix("Value error, ")
    elif kind in ("literal_error", "enum"):
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        message = f"must be one of {', '.join(choices)}{got}"
        message += did_you_mean(str(err["input"]), choices)
    elif kind in _BOUNDS:
        key, sign = _BOUNDS[kind]
        bound = ctx.get(key)
        shown = f"{bound:g}" if isinstance(bound, int | float) else str(bound)
        message = f"must be {sign} {shown}{got}"
    elif kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        message = f"must match {pattern}{got}"
        if pattern == "^[a-z0-9-]+$":
            message = f"must be lower-case letters, digits and '-' only ([a-z0-9-]+){got}"
    elif kind == "too_short" and isinstance(err["input"], list | dict):
        entries = "item" if isinstance(err["input"], list) else "entry"
        need = ctx.get("min_length")
        message = f"must have at least {need} {entries}{'s' if need != 1 else ''} (got none)"
        if len(err["input"]):
            message = message.replace("(got none)", f"(got {len(err['input'])})")
    elif kind == "too_long" and isinstance(err["input"], list):
        need = ctx.get("max_length")
        message = f"must have at most {need} items (got {len(err['input'])})"
    elif kind == "string_too_short":
        message = "must not be empty"
    elif kind in _TYPE_WORDS:
        message = f"must be {_TYPE_WORDS[kind]}, not {kind_of(err['input'])}"
        if not isinstance(err["input"], dict | list):
            message += f" {_short(err['input'])}"
    elif not isinstance(err["input"], dict | list):
        message = f"{message}{got}"
    return doc.diagnostic(path, message)


def misspelt_elsewhere(err: ErrorDetails, details: list[ErrorDetails]) -> bool:
    """A missing field whose misspelling is reported as an unknown key (one error, not two)."""
    loc = _loc(err)
    if err["type"] != "missing" or not loc:
        return False
    parent, name = loc[:-1], str(loc[-1])
    model = _model_at(tuple(parent))
    if model is None:
        return False
    fields = _field_names(model)
    return any(
        other["type"] == "extra_forbidden"
        and _loc(other)[:-1] == parent
        and did_you_mean(str(_loc(other)[-1]), fields) == f" (did you mean '{name}'?)"
        for other in details
        if _loc(other)
    )


_ADAPTERS: dict[int, tuple[Any, TypeAdapter[Any]]] = {}


def _adapter(annotation: Any) -> TypeAdapter[Any]:
    """A cached TypeAdapter for ``annotation`` (kept alive so its id stays unique)."""
    hit = _ADAPTERS.get(id(annotation))
    if hit is None:
        hit = (annotation, TypeAdapter(annotation))
        _ADAPTERS[id(annotation)] = hit
    return hit[1]


_FIELD_TYPES: dict[tuple[type[BaseModel], str], Any] = {}


def _field_type(model: type[BaseModel], name: str) -> Any:
    key = (model, name)
    if key not in _FIELD_TYPES:
        info = model.model_fields[name]
        # The type with its constraints and validators (not the alias: that is the key).
        _FIELD_TYPES[key] = (
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        )
    return _FIELD_TYPES[key]


Origin = dict[FieldPath, list[int]]


def _salvage_value(
    annotation: Any, value: Any, path: FieldPath, origin: Origin
) -> tuple[bool, Any]:
    """Validate ``value``; on failure keep the parts that validate (items, entries, fields).

    Returns (usable, value). ``origin`` records, for each list that lost items, the
    original index of every kept item, so findings on the salvage map back to the file.
    """
    try:
        return True, _adapter(annotation).validate_python(value)
    except ValidationError:
        pass
    for concrete in _unwrap(annotation):
        kind = typing.get_origin(concrete)
        if isinstance(concrete, type) and issubclass(concrete, BaseModel):
            if isinstance(value, dict):
                return salvage_model(concrete, value, path, origin)
        elif kind is list and isinstance(value, list):
            item_type = typing.get_args(concrete)[0]
            kept: list[Any] = []
            indices: list[int] = []
            for i, item in enumerate(value):
                ok, result = _salvage_item(item_type, item, (*path, len(kept)), origin)
                if ok:
                    kept.append(result)
                    indices.append(i)
            origin[path] = indices
            return _container_fits(annotation, kept)
        elif kind is dict and isinstance(value, dict):
            value_type = typing.get_args(concrete)[1]
            entries = {}
            for key, item in value.items():
                ok, result = _salvage_value(value_type, item, (*path, key), origin)
                if ok:
                    entries[key] = result
            if len(entries) < len(value):
                # entries were dropped for their own (reported) errors: the mapping may now
                # be below its minimum size, but the rules can still check what is left
                # (a link whose only latency is negative still has two ends to check)
                return True, entries
            return _container_fits(annotation, entries)
    return False, None


def _salvage_item(item_type: Any, item: Any, path: FieldPath, origin: Origin) -> tuple[bool, Any]:
    """A list item as :func:`_salvage_value` keeps it, or unusable when what was kept of
    its fields fails its model's own validators (a scheduled failure whose negative `at`
    was dropped has no start, a task names both a tool and a capability): the list is
    validated again with its items, and one such item would otherwise take the whole
    list with it (a section, or a workflow's tasks and with them the workflow), hiding
    the errors of every other item. The names a dropped item declares still count as
    declared: the rules take them from the file (:class:`~sim.scenario.findings.KnownNames`)."""
    try:
        return True, _adapter(item_type).validate_python(item)
    except ValidationError:
        pass
    ok, result = _salvage_value(item_type, item, path, origin)
    if ok and isinstance(result, BaseModel):
        try:
            _adapter(item_type).validate_python(result)
        except ValidationError:
            for key in [key for key in origin if key[: len(path)] == path]:
                del origin[key]
            return False, None
    return ok, result


def _container_fits(annotation: Any, salvaged: Any) -> tuple[bool, Any]:
    """(usable, value) for a salvaged list or mapping: its own constraints must still hold.

    Salvaging checks items one by one; this checks the container itself (e.g. a link's
    ``between`` has exactly two ends, an agent speaks at least one protocol).
    """
    try:
        _adapter(annotation).validate_python(salvaged)
    except ValidationError:
        return False, None
    return True, salvaged


def salvage_model(
    model: type[BaseModel], data: dict[str, Any], path: FieldPath, origin: Origin
) -> tuple[bool, Any]:
    """A model of the fields that validate; unusable when a required one does not.

    The root (the scenario itself) is always usable: a bad required list becomes empty.
    """
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key in data:
            ok, result = _salvage_value(_field_type(model, name), data[key], (*path, key), origin)
            if ok:
                fields[name] = result
                continue
        if not path and typing.get_origin(info.annotation) is list:
            fields[name] = []
        elif info.is_required() and path:
            return False, None
    return True, model.model_construct(**fields)


def remap(path: FieldPath, origin: Origin) -> FieldPath:
    """Map a path into the salvaged scenario back to the file's indices."""
    out: list[str | int] = []
    for k, part in enumerate(path):
        indices = origin.get(path[:k]) if isinstance(part, int) else None
        if isinstance(part, int) and indices is not None and part < len(indices):
            part = indices[part]
        out.append(part)
    return tuple(out)
