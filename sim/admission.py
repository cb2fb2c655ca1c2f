"""A scenario admitted to run: loaded and checked by every layer that owns a rule on it.

The scenario layer checks shapes and cross-references; the layers above it own the
rules that need their classes (SPEC §12): the mesh a router plug-in and capability
matching (:mod:`sim.mesh.rules`), :mod:`sim.approval` an approval policy plug-in. The
scenario layer cannot import them, so this module hands them to its loader, which runs
them in its one pass and locates their findings like its own (``FILE:L:C:
routers[1].plugin: ...``). Every command (but ``check``, which builds no router) and the
public API load through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sim.approval import policy_findings
from sim.mesh.rules import capability_findings, router_findings
from sim.scenario import load as scenario_load
from sim.scenario.diagnostics import Diagnostic
from sim.scenario.model import Scenario
from sim.scenario.overrides import Override
from sim.scenario.rules import Rule

#: The rules of the layers above the scenario, in the order their findings were made.
RULES: tuple[Rule, ...] = (policy_findings, router_findings, capability_findings)


def parse_scenario(
    text: str, file: str = "<string>", overrides: Sequence[Override] = ()
) -> tuple[Scenario, list[Diagnostic]]:
    """:func:`sim.scenario.parse_scenario` with :data:`RULES`: the scenario and its warnings."""
    return scenario_load.parse_scenario(text, file, overrides, RULES)


def load_scenario_with_warnings(
    path: str | Path, overrides: Sequence[Override] = ()
) -> tuple[Scenario, list[Diagnostic]]:
    """:func:`sim.scenario.load_scenario_with_warnings` with :data:`RULES`."""
    return scenario_load.load_scenario_with_warnings(path, overrides, RULES)


def load_scenario(path: str | Path) -> Scenario:
    """The scenario file at ``path``, checked by every layer; a located
    :class:`~sim.scenario.ScenarioError` otherwise."""
    return scenario_load.load_scenario(path, RULES)


def admitted(scenario: Scenario | str | Path) -> Scenario:
    """A loaded scenario as it is; a file loaded by :func:`load_scenario` (the API's
    functions take either)."""
    return load_scenario(scenario) if isinstance(scenario, str | Path) else scenario
