"""User properties in a scenario (``properties:``) or a separate file (``--properties``):
compiled, selected by name (``--property``) and loaded from a file.

The entry's shape is :class:`~sim.scenario.model.properties.PropertySpec` (name
``[a-z0-9-]+``, scope, formula), its rules :mod:`sim.scenario.rules.properties`. Its
formula is parsed by :mod:`sim.properties` against the SPEC §5 labels and the scenario's
tools; a formula error is located at file:line:col of the offending token: the position
of the formula's YAML scalar composed with the token's position inside it
(:func:`within_scalar`, which follows plain, quoted and block scalars).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from sim.scenario.compose import composed, reader_diagnostic
from sim.scenario.diagnostics import Diagnostic, FieldPath, ScenarioError, format_path
from sim.scenario.model.properties import PropertySpec

if TYPE_CHECKING:  # sim.properties is imported only when a scenario has properties
    from sim.properties import Property, ToolAttributes
    from sim.scenario.model import Scenario


def tool_attributes(scenario: Scenario) -> dict[str, ToolAttributes]:
    """The ground truth of each scenario tool that atoms may test."""
    from sim.properties import ToolAttributes

    return {
        t.name: ToolAttributes(str(t.side_effects.value), bool(t.requires_approval))
        for t in scenario.tools
    }


def compile_properties(specs: Sequence[PropertySpec], scenario: Scenario) -> list[Property]:
    """Validated specs as monitorable properties (their formulas parse: see the rules)."""
    from sim.properties import Property, parse

    tools = tool_attributes(scenario)
    return [Property(s.name, s.scope, parse(s.formula, tools=tools), s.formula) for s in specs]


class UnknownProperty(ValueError):
    """A ``--property`` name that no property (the scenario's, ``--properties``) or
    check has."""


def select_properties(
    scenario: Scenario,
    extra: Sequence[Property],
    names: Sequence[str] | None,
    checks: Sequence[str],
    every_check: bool,
) -> list[tuple[str, Property | None]]:
    """The properties ``--property NAME ...`` selects, in order, as (name, formula, or
    None for one of the ``checks``: the seven checks' names, passed in, since the
    scenario layer does not import the conformance checks; a check is its own
    definition, docs/properties.md): among the scenario's, the ``extra`` ones and the
    checks (user names have no ``_``, so they never clash). With no names: every user
    property, and the checks too when ``every_check``. Raises :class:`UnknownProperty`
    naming the unknown ones."""
    table: dict[str, Property | None] = {
        p.name: p for p in [*compile_properties(scenario.properties, scenario), *extra]
    }
    if not names and not every_check:
        return list(table.items())
    for name in checks:
        table.setdefault(name, None)
    if not names:
        return list(table.items())
    unknown = [n for n in names if n not in table]
    if unknown:
        raise UnknownProperty(f"unknown property {', '.join(unknown)} (known: {', '.join(table)})")
    return [(n, table[n]) for n in dict.fromkeys(names)]


def within_scalar(diag: Diagnostic, text: str, value: str, offset: int) -> Diagnostic:
    """``diag`` (at a YAML scalar whose parsed value is ``value``) moved to the source
    position of ``value[offset]``."""
    line, column = _scalar_position(text, diag.line, diag.column, value, offset)
    return replace(diag, line=line, column=column)


def _scalar_position(text: str, line: int, column: int, value: str, offset: int) -> tuple[int, int]:
    """Source (line, column), 1-based, of ``value[offset]`` in the YAML scalar that starts
    at (``line``, ``column``): source and value are walked in step; a source line break
    stands for a space or newline of the value (folding, block scalars), and indentation,
    escapes (``\\``) and doubled quotes are skipped; an ``offset`` at or past the value's
    end (an error at the end of a formula) is the column just after its last character.
    Falls back to ``column + offset`` on the scalar's line if they do not line up."""
    fallback = (line, column + offset)
    if offset >= len(value):
        if not value:
            return fallback
        last_line, last_column = _scalar_position(text, line, column, value, len(value) - 1)
        return last_line, last_column + 1
    lines = text.split("\n")
    row, col = line - 1, column - 1
    if row >= len(lines):
        return fallback
    lead = lines[row][col : col + 1]
    if lead in ("|", ">"):
        row, col = row + 1, 0
    elif lead in ('"', "'"):
        col += 1
    for vi in range(offset + 1):
        want = value[vi]
        while True:
            if row >= len(lines):
                return fallback
            src = lines[row]
            if col >= len(src):  # a line break
                at = (row + 1, col + 1)
                row, col = row + 1, 0
                if want in " \n":
                    break
                continue
            have = src[col]
            at = (row + 1, col + 1)
            col += 1
            if have == want:
                break
            if have not in " \t\\'":
                return fallback
        if vi == offset:
            return at
    return fallback


def load_properties(path: str | Path, scenario: Scenario) -> list[Property]:
    """The properties of a ``--properties`` file: a YAML list of {name, scope, formula}.

    Raises :class:`ScenarioError` with every problem located at file:line:col."""
    from sim.properties import FormulaError, Property, parse

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ScenarioError([Diagnostic(file, 1, 1, "<root>", f"cannot read: {reason}")]) from None
    try:
        root = composed(text)
    except yaml.reader.ReaderError as exc:  # a control character: where it stands
        raise ScenarioError([reader_diagnostic(exc, text, file)]) from None
    except yaml.YAMLError as exc:  # PyYAML's words, where it stopped (libyaml's if deeper)
        problem = getattr(exc, "problem_mark", None)
        line, col = (problem.line + 1, problem.column + 1) if problem else (1, 1)
        reason = str(exc.problem) if isinstance(exc, yaml.MarkedYAMLError) else str(exc)
        raise ScenarioError([Diagnostic(file, line, col, "<root>", reason)]) from None
    if not isinstance(root, yaml.SequenceNode):
        top = _at(root) if root is not None else (1, 1)
        message = "a properties file is a YAML list of {name, scope, formula}"
        raise ScenarioError([Diagnostic(file, *top, "<root>", message)])
    tools = tool_attributes(scenario)
    errors: list[Diagnostic] = []
    out: list[Property] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(root.value):
        marks: dict[FieldPath, tuple[int, int]] = {(i,): _at(item)}
        if isinstance(item, yaml.MappingNode):
            for key, val in item.value:
                marks[(i, key.value)] = _at(val)
                marks[(i, key.value, "<key>")] = _at(key)
        data = yaml.SafeLoader("").construct_document(item)
        try:
            spec = PropertySpec.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                where: FieldPath = (i, *err["loc"])
                at_key = err["type"] == "extra_forbidden"
                mark = marks.get((*where, "<key>") if at_key else where, marks[(i,)])
                message = "unknown key" if at_key else err["msg"]
                errors.append(Diagnostic(file, *mark, format_path(where), message))
            continue
        if spec.name in seen:
            first = marks.get((seen[spec.name], "name"), (1, 1))[0]
            errors.append(
                Diagnostic(
                    file,
                    *marks[(i, "name")],
                    format_path((i, "name")),
                    f"duplicate property name '{spec.name}' (first at line {first})",
                )
            )
        seen.setdefault(spec.name, i)
        try:
            out.append(
                Property(spec.name, spec.scope, parse(spec.formula, tools=tools), spec.formula)
            )
        except FormulaError as exc:
            diag = Diagnostic(
                file, *marks[(i, "formula")], format_path((i, "formula")), exc.located
            )
            errors.append(within_scalar(diag, text, spec.formula, exc.pos))
    if errors:
        raise ScenarioError(errors)
    return out


def _at(node: Any) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1
