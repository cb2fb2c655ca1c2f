"""Simulated ``structuredContent``: a small instance of a tool's ``outputSchema`` (any JSON
Schema 2020-12), built once per tool and validated with ``jsonschema`` (``$ref`` resolved by
the validator, local references followed here).

The schema is always served as given. When no instance built here validates, the reason is
kept (:func:`structured_output`) and the tool's calls say it (``serve`` returns an
``isError`` result naming it: a success without the structured content its schema promises
would break the MCP rule that a tool with an output schema returns conforming structured
results).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["minimal_instance", "structured_output"]

_FORMATS = {
    "date": "1970-01-01",
    "date-time": "1970-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
}
_DEPTH = 32


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    """The local target of ``ref`` (``#/$defs/X``, ``#/definitions/X``, ``#``), else None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def minimal_instance(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small value meant to satisfy ``schema`` (required properties only, first enum
    value, lower bounds, formats' examples, local ``$ref`` followed, ``allOf`` merged);
    the caller validates it."""
    root = schema if root is None else root
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return None
    if isinstance(schema.get("$ref"), str):
        target = _resolve(schema["$ref"], root)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if isinstance(target, Mapping):
            return minimal_instance({**target, **rest}, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, Mapping):
                for key, value in part.items():
                    if key in ("properties",) and isinstance(value, Mapping):
                        merged["properties"] = {**merged.get("properties", {}), **value}
                    elif key == "required" and isinstance(value, list):
                        merged["required"] = [*merged.get("required", []), *value]
                    else:
                        merged.setdefault(key, value)
        return minimal_instance(merged, root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return minimal_instance(schema[key][0], root, depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {
            k: minimal_instance(props.get(k, {}), root, depth + 1)
            for k in schema.get("required") or []
        }
    if kind == "array":
        count = int(schema.get("minItems", 0) or 0)
        return [minimal_instance(schema.get("items", {}), root, depth + 1) for _ in range(count)]
    if kind == "string":
        if schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        return "x" * int(schema.get("minLength", 0) or 0)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        if isinstance(low, int | float) and not isinstance(low, bool):
            value = low + (1 if "minimum" not in schema else 0)
            return int(value) if kind == "integer" else value
        return 0
    if kind == "boolean":
        return False
    return None


def structured_output(schema: Mapping[str, Any]) -> tuple[Any, str]:
    """``(instance, "")`` for an instance of ``schema`` that validates, else
    ``(None, why)`` naming the first violation of the best attempt."""
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError, best_match

    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
    except SchemaError as exc:
        return None, f"the outputSchema is not a valid JSON Schema: {exc.message}"
    value = minimal_instance(schema)
    err = best_match(validator.iter_errors(value))
    if err is None:
        return value, ""
    where = "/".join(str(p) for p in err.absolute_path) or "the top level"
    return None, f"no simple instance satisfies it ({err.message} at {where})"
