"""YAML with line marks → a validated :class:`~sim.scenario.model.Scenario`.

Loading runs in three passes, and every pass reports all it finds:

1. YAML is composed into nodes (:mod:`sim.scenario.compose`); each value and each
   mapping key keeps its mark (line, column). Malformed YAML, duplicate keys, an empty
   file, a document that is not a mapping, and input past the size, depth and alias
   bounds stop here.
2. The pydantic models check the shape of every field (:mod:`sim.scenario.salvage`
   turns their errors into diagnostics and keeps what validates).
3. :mod:`sim.scenario.rules` checks the cross-references, on the items that passed
   pass 2 (so one bad agent does not hide a bad link).

Each problem becomes a :class:`Diagnostic` naming file, line, column and field path.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sim.longlived import long_lived
from sim.scenario.compose import EXTENSION_PREFIX, MAX_BYTES, Document, parse_yaml, too_large
from sim.scenario.diagnostics import Diagnostic, ScenarioError, format_path
from sim.scenario.model import Scenario
from sim.scenario.overrides import REMOVE, Override, apply_override, with_overrides
from sim.scenario.properties import within_scalar
from sim.scenario.rules import Finding, KnownNames, Rule, check_rules
from sim.scenario.salvage import (
    Origin,
    misspelt_elsewhere,
    pydantic_diagnostic,
    remap,
    salvage_model,
)

__all__ = [
    "EXTENSION_PREFIX",
    "REMOVE",
    "Override",
    "load_scenario",
    "load_scenario_with_warnings",
    "parse_scenario",
]


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


def _raw_tasks(data: Mapping[str, Any]) -> dict[str, set[str]]:
    """Task ids by workflow name, as the file gives them (invalid tasks included)."""
    out: dict[str, set[str]] = {}
    workflows = data.get("workflows")
    for wf in workflows if isinstance(workflows, list) else ():
        if isinstance(wf, dict) and isinstance(wf.get("name"), str):
            tasks = wf.get("tasks")
            ids = out.setdefault(wf["name"], set())
            for task in tasks if isinstance(tasks, list) else ():
                if isinstance(task, dict) and isinstance(task.get("id"), str):
                    ids.add(task["id"])
    return out


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
    """The sections given as lists: names they declare can be checked as known or not.

    An absent ``tools:`` declares none (every tool, generated placements included, is
    declared there), so a task's tool is then certainly unknown; absent ``agents:`` or
    ``protocols:`` may still be generated or built in."""
    given = {k for k in ("agents", "tools", "protocols") if isinstance(data.get(k), list)}
    if "tools" not in data:
        given.add("tools")
    return frozenset(given)


def parse_scenario(
    text: str,
    file: str = "<string>",
    overrides: Sequence[Override] = (),
    rules: Sequence[Rule] = (),
) -> tuple[Scenario, list[Diagnostic]]:
    """Parse and check scenario YAML ``text``; return it with its warnings.

    ``overrides`` are applied to the document (in order) before it is checked; ``rules``
    are the rules of the layers above, run and located with this layer's
    (:data:`sim.admission.RULES`: router and approval plug-ins, capability matching).
    Raises :class:`ScenarioError` listing every error, located in ``file``.
    """
    with long_lived():
        return _parse(text, file, overrides, rules)


def _parse(
    text: str, file: str, overrides: Sequence[Override], rules: Sequence[Rule]
) -> tuple[Scenario, list[Diagnostic]]:
    doc = Document(file)
    data = parse_yaml(text, doc)
    if data is None or doc.problems:
        raise ScenarioError(doc.problems)
    if overrides:
        data = copy.deepcopy(data)
        problems: list[Diagnostic] = []
        for ov in overrides:
            reason = apply_override(data, ov, doc)
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
    topology_valid = True
    try:
        scenario = Scenario.model_validate(data)
        origin: Origin = {}
    except ValidationError as exc:
        details = exc.errors()
        topology_valid = not any(err["loc"][:1] == ("topology",) for err in details)
        errors.extend(
            pydantic_diagnostic(err, doc, ())
            for err in details
            if not misspelt_elsewhere(err, details)
        )
        origin = {}
        salvaged = salvage_model(Scenario, data, (), origin)[1]
    known = KnownNames(
        agents=_raw_names(data, "agents", "id"),
        tools=_raw_names(data, "tools", "name"),
        protocols=_raw_names(data, "protocols", "name"),
        speaks=_raw_speaks(data),
        sections=_raw_sections(data),
        hosted=_raw_hosted(data),
        tasks=_raw_tasks(data),
    )
    checked = scenario if scenario is not None else salvaged
    n_agents, n_links = len(checked.agents), len(checked.links)
    if not topology_valid:
        # a block with its own errors is not expanded (what salvage kept of it is not a
        # valid block, or nothing when a required field is wrong, a misspelt generator):
        # references to the agents it would make are not checked either
        known = dataclasses.replace(known, sections=known.sections - {"agents"})
    elif checked.topology is not None:
        from sim.scenario.generate import GenerationError  # the generators: only for topologies
        from sim.scenario.generate import expand as expand_topology

        try:
            generated = expand_topology(checked.topology, checked.seed, checked.agents)
        except GenerationError as exc:
            errors.append(doc.diagnostic(("topology", *exc.where), str(exc)))
            known = dataclasses.replace(known, sections=known.sections - {"agents"})
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
    for finding in check_rules(checked, known, rules):
        finding = _generated_finding(finding, checked, n_agents, n_links)
        path = remap(finding.path, origin)
        message = finding.message
        if finding.first is not None:
            message += f" (first at line {doc.locate(remap(finding.first, origin))[0]})"
        diag = doc.diagnostic(path, message, at_key=finding.at_key, warning=finding.warning)
        if finding.inner is not None:  # a formula error: at its token inside the string
            diag = within_scalar(diag, text, *finding.inner)
        (warnings if finding.warning else errors).append(diag)
    if overrides:
        errors = with_overrides(errors, overrides, doc)
        warnings = with_overrides(warnings, overrides, doc)
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
    path: str | Path, overrides: Sequence[Override] = (), rules: Sequence[Rule] = ()
) -> tuple[Scenario, list[Diagnostic]]:
    """Load the scenario file at ``path`` (with ``overrides``, checked by this layer's
    rules and ``rules``, as :func:`parse_scenario`); return it with its warnings.

    Raises :class:`ScenarioError` (every error, located) on a bad scenario, including
    a file that cannot be read.
    """
    file = str(path)
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_BYTES + 1)  # bounded: /dev/zero is refused, not read
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ScenarioError([Diagnostic(file, 1, 1, "<root>", f"cannot read: {reason}")]) from None
    if len(raw) > MAX_BYTES:
        raise ScenarioError([too_large(file)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            [Diagnostic(file, 1, 1, "<root>", f"not UTF-8 text: {exc.reason}")]
        ) from None
    return parse_scenario(text, file, overrides, rules)


def load_scenario(path: str | Path, rules: Sequence[Rule] = ()) -> Scenario:
    """Load and validate the scenario file at ``path`` (``rules`` as :func:`parse_scenario`).

    Raises :class:`ScenarioError` whose ``errors`` name file, line, column and field.
    """
    scenario, _ = load_scenario_with_warnings(path, (), rules)
    return scenario
