"""Sweeps: ``--set path=v1,v2`` on the command line and the scenario's ``sweep:`` block.

A *field path* names a field of the scenario document with dots, list items by index:
``routing.loss_penalty``, ``failures.0.for``, ``links.2.latency.MCP``. Values are read
as YAML (``0.5`` is a number, ``true`` a boolean, ``[a, b]`` a list); commas separate
values except inside brackets, braces or quotes.

Points: the file's ``sweep:`` gives a list of points (``mode: product`` the cross
product of its ``parameters``; ``mode: points`` their i-th values together, or the
mappings listed in ``points``); the ``--set`` options give the cross product of their
values; the experiment runs at every (file point × command-line point). A ``--set``
with one value is a plain override. Without any list there is one point and no point
directories.

Each point is checked by the scenario loader with its values applied (and the
``sweep:`` block removed), so a bad path or value is reported like any scenario
error, located at the ``sweep:`` value or naming the ``--set`` option (exit 2).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sim.admission import load_scenario_with_warnings
from sim.scenario import ScenarioError
from sim.scenario.compose import plain_data
from sim.scenario.diagnostics import Diagnostic, FieldPath
from sim.scenario.load import REMOVE, Override
from sim.scenario.model import Scenario


class SweepError(ValueError):
    """A ``--set`` option that cannot be read."""


def parse_path(text: str) -> FieldPath:
    """``failures.0.for`` → ``("failures", 0, "for")``."""
    parts: list[str | int] = []
    for raw in text.split("."):
        part = raw.strip()
        if not part:
            raise SweepError(f"bad field path '{text}': empty part")
        parts.append(int(part) if part.lstrip("-").isdigit() else part)
    return tuple(parts)


def split_values(text: str) -> list[str]:
    """Split on commas outside brackets, braces and quotes (in a double-quoted string a
    backslash escapes the next character, as in YAML: ``"a\\",b"`` is one value)."""
    out: list[str] = []
    depth = 0
    quote: str | None = None
    escaped = False
    current = ""
    for ch in text:
        if quote:
            current += ch
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(current)
            current = ""
            continue
        current += ch
    out.append(current)
    return out


@dataclass(frozen=True)
class Setting:
    """One ``--set path=v1,v2,...`` option."""

    text: str
    path: FieldPath
    values: tuple[Any, ...]


def parse_set(text: str) -> Setting:
    """Read one ``--set`` option; ``SweepError`` says what is wrong with it."""
    if "=" not in text:
        raise SweepError(f"--set {text}: expected PATH=VALUE[,VALUE...]")
    raw_path, raw_values = text.split("=", 1)
    path = parse_path(raw_path)
    values: list[Any] = []
    for piece in split_values(raw_values):
        if not piece.strip():
            raise SweepError(f"--set {text}: empty value")
        try:
            values.append(plain_data(piece))
        except yaml.YAMLError as exc:
            raise SweepError(f"--set {text}: cannot read value '{piece}': {exc}") from None
    return Setting(text, path, tuple(values))


def path_text(path: FieldPath) -> str:
    """``("failures", 0, "for")`` → ``failures.0.for`` (the form users write)."""
    return ".".join(str(p) for p in path)


@dataclass(frozen=True)
class SweepPoint:
    """One point: its id (``None`` when there is no sweep), values and overrides."""

    id: str | None
    params: dict[str, Any]
    overrides: tuple[Override, ...]


def _file_points(scenario: Scenario) -> list[list[Override]]:
    """The ``sweep:`` block's points as overrides located at their values in the file."""
    sweep = scenario.sweep
    if sweep is None:
        return [[]]
    if sweep.points:
        return [
            [
                Override(parse_path(name), value, f"sweep point {i}", ("sweep", "points", i, name))
                for name, value in point.items()
            ]
            for i, point in enumerate(sweep.points)
        ]
    names = list(sweep.parameters)
    columns = [
        [
            Override(
                parse_path(name),
                value,
                f"sweep {name}={value!r}",
                ("sweep", "parameters", name, k),
            )
            for k, value in enumerate(sweep.parameters[name])
        ]
        for name in names
    ]
    if sweep.mode == "points":
        return [list(row) for row in zip(*columns, strict=True)]
    return [list(row) for row in itertools.product(*columns)]


def _cli_points(settings: Sequence[Setting]) -> list[list[Override]]:
    columns = [
        [Override(s.path, value, f"--set {path_text(s.path)}={value!r}") for value in s.values]
        for s in settings
    ]
    return [list(row) for row in itertools.product(*columns)]


def expand(base: Scenario, settings: Sequence[Setting]) -> list[SweepPoint]:
    """The points of the experiment (file points × command-line points), in order."""
    file_points = _file_points(base)
    cli_points = _cli_points(settings)
    swept = base.sweep is not None or any(len(s.values) > 1 for s in settings)
    drop = [Override(("sweep",), REMOVE, "sweep")] if base.sweep is not None else []
    points: list[SweepPoint] = []
    for k, (fp, cp) in enumerate(itertools.product(file_points, cli_points)):
        overrides = (*drop, *fp, *cp)
        params = {path_text(o.path): o.value for o in (*fp, *cp)}
        if swept:
            # single-valued --set options are plain overrides, not parameters
            params = {
                path_text(o.path): o.value
                for o in (*fp, *cp)
                if not any(len(s.values) == 1 and s.path == o.path for s in settings)
            }
        points.append(SweepPoint(f"p{k}" if swept else None, params, overrides))
    return points


def load_points(
    file: str | Path, base: Scenario, points: Sequence[SweepPoint]
) -> tuple[list[tuple[SweepPoint, Scenario]], list[Diagnostic]]:
    """Load the scenario of every point; raise :class:`ScenarioError` with every error
    (all points' errors, each located and naming its value); return the warnings."""
    loaded: list[tuple[SweepPoint, Scenario]] = []
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    for point in points:
        if not point.overrides:
            loaded.append((point, base))
            continue
        try:
            scenario, found = load_scenario_with_warnings(file, point.overrides)
        except ScenarioError as exc:
            errors.extend(d for d in exc.errors if d not in errors)
            continue
        warnings.extend(d for d in found if d not in warnings)
        loaded.append((point, scenario))
    if errors:
        raise ScenarioError(errors, warnings)
    return loaded, warnings
