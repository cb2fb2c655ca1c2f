"""The rules on ``tools:``: each entry readable as the engine and the checks read it
(the calculus's tool descriptor: an ``input_schema`` of type object, ``properties`` a
mapping, ``required`` a list of strings), names fit for trace labels, recoveries and
dependencies that resolve and do not loop, approval on writes (P2)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sim.calculus.lts import is_label_argument
from sim.calculus.mcp import ToolsListError, tool_plus_from_mapping
from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import Finding, KnownNames, duplicates, find_cycle, unknown
from sim.scenario.model import Scenario, SideEffects

_LABEL_SAFE = "no commas, parentheses, double quotes or spaces: it appears in trace labels"


def _label_safe(scn: Scenario) -> Iterator[Finding]:
    """Names that become label arguments (``call(n)``, ``error(n,t)``, ``collect(s)``)."""
    for i, tool in enumerate(scn.tools):
        if not is_label_argument(tool.name):
            yield Finding(("tools", i, "name"), f"tool name '{tool.name}': {_LABEL_SAFE}")
        for error in tool.errors:
            if not is_label_argument(error):
                yield Finding(
                    ("tools", i, "errors", error),
                    f"error type '{error}': {_LABEL_SAFE}",
                    at_key=True,
                )
        for j, mode in enumerate(tool.failure_modes):
            if not is_label_argument(mode.error):
                yield Finding(
                    ("tools", i, "failure_modes", j, "error"),
                    f"error type '{mode.error}': {_LABEL_SAFE}",
                )
        required = tool.input_schema.get("required", [])
        for j, slot in enumerate(required if isinstance(required, list) else []):
            if isinstance(slot, str) and not is_label_argument(slot):
                yield Finding(
                    ("tools", i, "input_schema", "required", j),
                    f"required input {slot!r}: {_LABEL_SAFE} (collect(s) of SGD callers)",
                )


_JSON_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _field_path(json_path: str, base: FieldPath) -> FieldPath:
    """``$.input_schema.required`` (a :class:`ToolsListError` path) under ``base``."""
    steps: list[str | int] = []
    for key, index in _JSON_STEP.findall(json_path.removeprefix("$")):
        steps.append(int(index) if index else key)
    return (*base, *steps)


def _descriptors(scn: Scenario) -> Iterator[Finding]:
    """Each tool's ``input_schema`` as the calculus reads it (what a replication and
    ``check`` build from the scenario; the models check the other fields): a shape it
    refuses would fail every replication at t = 0."""
    for i, tool in enumerate(scn.tools):
        try:
            tool_plus_from_mapping({"name": tool.name, "input_schema": tool.input_schema})
        except ToolsListError as exc:
            reason = str(exc).removeprefix(f"{exc.path}: ")
            yield Finding(
                _field_path(exc.path, ("tools", i)), f"{reason}, as in an MCP tool descriptor"
            )


def tool_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from duplicates("tools", "name", [t.name for t in scn.tools])
    yield from _descriptors(scn)
    yield from _label_safe(scn)
    requires: dict[str, list[str]] = {t.name: [] for t in scn.tools}
    for i, tool in enumerate(scn.tools):
        for j, mode in enumerate(tool.failure_modes):
            target = mode.recovery.fallback
            if target is not None and known.lacks("tools", target):
                yield Finding(
                    ("tools", i, "failure_modes", j, "recovery", "fallback"),
                    unknown("fallback tool", target, known.tools),
                )
        first_mode: dict[str, int] = {}
        for j, mode in enumerate(tool.failure_modes):
            if mode.error in first_mode:
                yield Finding(
                    ("tools", i, "failure_modes", j, "error"),
                    f"error '{mode.error}' already has a recovery; give one per error type",
                    first=("tools", i, "failure_modes", first_mode[mode.error], "error"),
                )
            first_mode.setdefault(mode.error, j)
        for j, dep in enumerate(tool.dependencies):
            if known.lacks("tools", dep.tool):
                yield Finding(
                    ("tools", i, "dependencies", j, "tool"), unknown("tool", dep.tool, known.tools)
                )
            elif dep.tool == tool.name:
                yield Finding(
                    ("tools", i, "dependencies", j, "tool"), "a tool cannot depend on itself"
                )
            elif dep.relation.value in ("Requires", "ProducesInputFor"):
                requires[tool.name].append(dep.tool)
        if (
            tool.side_effects in (SideEffects.WRITE, SideEffects.DELETE)
            and not tool.requires_approval
        ):
            yield Finding(
                ("tools", i, "requires_approval"),
                f"a {tool.side_effects.value} tool without requires_approval violates P2 "
                "(WriteApproval); callers may execute it unapproved",
                warning=True,
            )
    cycle = find_cycle(requires)
    if cycle is not None:
        index = next(i for i, t in enumerate(scn.tools) if t.name == cycle[0])
        yield Finding(
            ("tools", index, "dependencies"),
            "tool dependencies form a cycle: " + " -> ".join(cycle),
        )
