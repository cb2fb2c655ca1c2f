"""YAML with line marks → a validated :class:`~sim.scenario.model.Scenario`.

Loading runs in three passes, and every pass reports all it finds:

1. YAML is composed into nodes; each value and each mapping key keeps its mark
   (line, column). Malformed YAML, duplicate keys, an empty file or a document that
   is not a mapping stop here.
2. The pydantic models check the shape of every field.
3. :mod:`sim.scenario.rules` checks the cross-references, on the items that passed
   pass 2 (so one bad agent does not hide a bad link).

Each problem becomes a :class:`Diagnostic` naming file, line, column and field path.
"""

from __future__ import annotations

import copy
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from sim.scenario.diagnostics import (
    Diagnostic,
    FieldPath,
    ScenarioError,
    did_you_mean,
    format_path,
)
from sim.scenario.model import Scenario, SpecError
from sim.scenario.properties_rules import within_scalar
from sim.scenario.rules import Finding, KnownNames, check_rules

Mark = tuple[int, int]  # 1-based (line, column)

#: Top-level keys with this prefix are ignored (a place for YAML anchors).
EXTENSION_PREFIX = "x-"


class _Document:
    """The plain data of a YAML document with the mark of every value and key."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.value_marks: dict[FieldPath, Mark] = {}
        self.key_marks: dict[FieldPath, Mark] = {}
        self.problems: list[Diagnostic] = []
        #: id of a flattened mapping node → how many of its pairs came from merge keys
        self.merged: dict[int, int] = {}

    def locate(self, path: FieldPath, *, at_key: bool = False) -> Mark:
        """The mark of ``path``, or of its nearest ancestor present in the file."""
        probe = path
        while probe:
            if at_key and probe in self.key_marks:
                return self.key_marks[probe]
            if probe in self.value_marks:
                return self.value_marks[probe]
            probe = probe[:-1]
        return self.value_marks.get((), (1, 1))

    def diagnostic(
        self, path: FieldPath, message: str, *, at_key: bool = False, warning: bool = False
    ) -> Diagnostic:
        line, column = self.locate(path, at_key=at_key)
        return Diagnostic(
            self.file,
            line,
            column,
            format_path(path),
            message,
            "warning" if warning else "error",
        )


def _mark(node: yaml.Node) -> Mark:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _construct(loader: yaml.SafeLoader, node: yaml.Node, path: FieldPath, doc: _Document) -> Any:
    doc.value_marks[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        if id(node) not in doc.merged:
            own = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            loader.flatten_mapping(node)
            doc.merged[id(node)] = len(node.value) - own
        n_merged = doc.merged[id(node)]
        result: dict[Any, Any] = {}
        own_keys: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) or key is None:
                line, column = _mark(key_node)
                doc.problems.append(
                    Diagnostic(doc.file, line, column, format_path(path), "keys must be scalars")
                )
                continue
            key = str(key) if not isinstance(key, str) else key
            if index < n_merged:  # from `<<: *anchor`: later merges and own keys win
                doc.key_marks[(*path, key)] = _mark(key_node)
                result[key] = _construct(loader, value_node, (*path, key), doc)
                continue
            if key in own_keys:
                line, column = _mark(key_node)
                first = doc.key_marks[(*path, key)]
                doc.problems.append(
                    Diagnostic(
                        doc.file,
                        line,
                        column,
                        format_path((*path, key)),
                        f"duplicate key '{key}' (first given at line {first[0]})",
                    )
                )
                continue
            own_keys.add(key)
            doc.key_marks[(*path, key)] = _mark(key_node)
            result[key] = _construct(loader, value_node, (*path, key), doc)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_construct(loader, item, (*path, i), doc) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def _parse_yaml(text: str, doc: _Document) -> Any:
    """Compose and construct ``text``; return the data or record why it cannot be read."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            doc.problems.append(
                Diagnostic(
                    doc.file,
                    1,
                    1,
                    "<root>",
                    "the file is empty; a scenario is a mapping with at least name, "
                    "protocols and agents",
                )
            )
            return None
        data = _construct(loader, node, (), doc)
    except yaml.MarkedYAMLError as exc:
        doc.problems.append(_yaml_diagnostic(exc, doc.file))
        return None
    except yaml.YAMLError as exc:
        doc.problems.append(Diagnostic(doc.file, 1, 1, "<root>", f"malformed YAML: {exc}"))
        return None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        doc.problems.append(
            doc.diagnostic((), f"a scenario is a mapping of fields, not {_kind(data)}")
        )
        return None
    return data


def _yaml_diagnostic(exc: yaml.MarkedYAMLError, file: str) -> Diagnostic:
    """PyYAML's error as a located diagnostic; a tab gets a hint, a context its start."""
    problem, context = exc.problem_mark, exc.context_mark
    mark = problem or context
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    message = f"malformed YAML: {exc.problem or 'cannot be parsed'}"
    if "'\\t'" in message:
        message += "; indent with spaces, not tabs"
    elif "expected <block end>" in message or "mapping values are not allowed" in message:
        message += "; check the indentation of this line"
    if exc.context:
        if context is not None and problem is not None and context.line != problem.line:
            where = f"line {context.line + 1}, column {context.column + 1}"
            message += f" ({exc.context} that starts at {where})"
        else:
            message += f" ({exc.context})"
    return Diagnostic(file, line, column, "<root>", message)


def _kind(value: Any) -> str:
    """``value``'s kind in YAML words: 'a list', 'a string', 'a number', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


# --- pydantic errors → diagnostics -------------------------------------------------------


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types inside Optional / Annotated / unions."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
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


def _pydantic_diagnostic(err: ErrorDetails, doc: _Document, base: FieldPath) -> Diagnostic:
    path: FieldPath = (*base, *err["loc"])
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
        message = f"must be {_TYPE_WORDS[kind]}, not {_kind(err['input'])}"
        if not isinstance(err["input"], dict | list):
            message += f" {_short(err['input'])}"
    elif not isinstance(err["input"], dict | list):
        message = f"{message}{got}"
    return doc.diagnostic(path, message)


def _misspelt_elsewhere(err: ErrorDetails, details: list[ErrorDetails]) -> bool:
    """A missing field whose misspelling is reported as an unknown key (one error, not two)."""
    if err["type"] != "missing" or not err["loc"]:
        return False
    parent, name = err["loc"][:-1], str(err["loc"][-1])
    model = _model_at(tuple(parent))
    if model is None:
        return False
    fields = _field_names(model)
    return any(
        other["type"] == "extra_forbidden"
        and other["loc"][:-1] == parent
        and did_you_mean(str(other["loc"][-1]), fields) == f" (did you mean '{name}'?)"
        for other in details
        if other["loc"]
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
                return _salvage_model(concrete, value, path, origin)
        elif kind is list and isinstance(value, list):
            item_type = typing.get_args(concrete)[0]
            kept: list[Any] = []
            indices: list[int] = []
            for i, item in enumerate(value):
                ok, result = _salvage_value(item_type, item, (*path, len(kept)), origin)
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


def _salvage_model(
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


def _remap(path: FieldPath, origin: Origin) -> FieldPath:
    """Map a path into the salvaged scenario back to the file's indices."""
    out: list[str | int] = []
    for k, part in enumerate(path):
        indices = origin.get(path[:k]) if isinstance(part, int) else None
        if isinstance(part, int) and indices is not None and part < len(indices):
            part = indices[part]
        out.append(part)
    return tuple(out)


def _raw_names(data: Mapping[str, Any], section: str, key: str) -> set[str]:
    raw = data.get(section)
    names: set[str] = set()
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, str) and section == "protocols":
                names.add(item)
            elif isinstance(item, dict) and isinstance(item.get(key), str):
                names.add(item[key])
    return names


def _raw_speaks(data: Mapping[str, Any]) -> dict[str, set[str]]:
    raw = data.get("agents")
    speaks: dict[str, set[str]] = {}
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            protocols = item.get("protocols")
            if isinstance(protocols, dict) and protocols:  # else its own error is enough
                speaks.setdefault(item["id"], set(map(str, protocols)))  # first of duplicates
    return speaks


def _raw_hosted(data: Mapping[str, Any]) -> set[str]:
    raw = data.get("agents")
    hosted: set[str] = set()
    for item in raw if isinstance(raw, list) else ():
        tools = item.get("tools") if isinstance(item, dict) else None
        if isinstance(tools, list):
            hosted.update(t for t in tools if isinstance(t, str))
    return hosted


def _raw_sections(data: Mapping[str, Any]) -> frozenset[str]:
    """The sections given as lists: names they declare can be checked as known or not."""
    return frozenset(k for k in ("agents", "tools", "protocols") if isinstance(data.get(k), list))


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


def _apply_override(data: dict[str, Any], override: Override, doc: _Document) -> str | None:
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
                f"{shown} is {_kind(node)}, not a mapping or list: cannot set {format_path(path)}"
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


def _with_overrides(
    diagnostics: list[Diagnostic], overrides: Sequence[Override], doc: _Document
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


def parse_scenario(
    text: str, file: str = "<string>", overrides: Sequence[Override] = ()
) -> tuple[Scenario, list[Diagnostic]]:
    """Parse and check scenario YAML ``text``; return it with its warnings.

    ``overrides`` are applied to the document (in order) before it is checked.
    Raises :class:`ScenarioError` listing every error, located in ``file``.
    """
    doc = _Document(file)
    data = _parse_yaml(text, doc)
    if data is None or doc.problems:
        raise ScenarioError(doc.problems)
    # Top-level `x-...` keys are free: a place for YAML anchors (`x-defaults: &d {...}`).
    data = {k: v for k, v in data.items() if not k.startswith(EXTENSION_PREFIX)}
    if overrides:
        data = copy.deepcopy(data)
        problems: list[Diagnostic] = []
        for ov in overrides:
            reason = _apply_override(data, ov, doc)
            if reason is not None:
                where = ov.at if ov.at is not None else ov.path
                line, column = doc.locate(where)
                problems.append(
                    Diagnostic(file, line, column, format_path(ov.path), f"{ov.label}: {reason}")
                )
        if problems:
            raise ScenarioError(problems)
    errors: list[Diagnostic] = []
    scenario: Scenario | None = None
    try:
        scenario = Scenario.model_validate(data)
        origin: Origin = {}
    except ValidationError as exc:
        details = exc.errors()
        errors.extend(
            _pydantic_diagnostic(err, doc, ())
            for err in details
            if not _misspelt_elsewhere(err, details)
        )
        origin = {}
        salvaged = _salvage_model(Scenario, data, (), origin)[1]
    known = KnownNames(
        agents=_raw_names(data, "agents", "id"),
        tools=_raw_names(data, "tools", "name"),
        protocols=_raw_names(data, "protocols", "name"),
        speaks=_raw_speaks(data),
        sections=_raw_sections(data),
        hosted=_raw_hosted(data),
    )
    checked = scenario if scenario is not None else salvaged
    n_agents, n_links = len(checked.agents), len(checked.links)
    if checked.topology is not None:
        from sim.scenario.generate import GenerationError  # networkx: only for topologies
        from sim.scenario.generate import expand as expand_topology

        try:
            generated = expand_topology(checked.topology, checked.seed, checked.agents)
        except GenerationError as exc:
            errors.append(doc.diagnostic(("topology", *exc.where), str(exc)))
        else:
            checked = checked.model_copy(
                update={
                    "agents": [*checked.agents, *generated.agents],
                    "links": [*checked.links, *generated.links],
                }
            )
            for agent in generated.agents:
                known.agents.add(agent.id)
                known.speaks.setdefault(agent.id, set(agent.protocols))
                if known.hosted is not None:
                    known.hosted.update(agent.tools)
    warnings: list[Diagnostic] = []
    for finding in check_rules(checked, known):
        finding = _generated_finding(finding, checked, n_agents, n_links)
        path = _remap(finding.path, origin)
        message = finding.message
        if finding.first is not None:
            message += f" (first at line {doc.locate(_remap(finding.first, origin))[0]})"
        diag = doc.diagnostic(path, message, at_key=finding.at_key, warning=finding.warning)
        if finding.inner is not None:  # a formula error: at its token inside the string
            diag = within_scalar(diag, text, *finding.inner)
        (warnings if finding.warning else errors).append(diag)
    if overrides:
        errors = _with_overrides(errors, overrides, doc)
        warnings = _with_overrides(warnings, overrides, doc)
    errors.sort(key=lambda d: (d.line, d.column, d.field))
    warnings.sort(key=lambda d: (d.line, d.column, d.field))
    if errors or scenario is None:
        raise ScenarioError(errors, warnings)
    return checked, warnings


def _generated_finding(finding: Finding, scn: Scenario, n_agents: int, n_links: int) -> Finding:
    """A finding about a generated agent or link, moved to the ``topology:`` block."""
    path = finding.path
    if len(path) < 2 or not isinstance(path[1], int):
        return finding
    if path[0] == "agents" and path[1] >= n_agents:
        what = f"generated agent '{scn.agents[path[1]].id}'"
    elif path[0] == "links" and path[1] >= n_links:
        a, b = scn.links[path[1]].between
        what = f"generated link between '{a}' and '{b}'"
    else:
        return finding
    inner = format_path(path[2:]) if len(path) > 2 else ""
    message = f"{what}{' ' + inner if inner else ''}: {finding.message}"
    return Finding(("topology",), message, finding.warning, False, None)


def load_scenario_with_warnings(
    path: str | Path, overrides: Sequence[Override] = ()
) -> tuple[Scenario, list[Diagnostic]]:
    """Load the scenario file at ``path`` (with ``overrides``); return it with its warnings.

    Raises :class:`ScenarioError` (every error, located) on a bad scenario, including
    a file that cannot be read.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ScenarioError([Diagnostic(file, 1, 1, "<root>", f"cannot read: {reason}")]) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            [Diagnostic(file, 1, 1, "<root>", f"not UTF-8 text: {exc.reason}")]
        ) from None
    return parse_scenario(text, file, overrides)


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate the scenario file at ``path``.

    Raises :class:`ScenarioError` whose ``errors`` name file, line, column and field.
    """
    scenario, _ = load_scenario_with_warnings(path)
    return scenario
