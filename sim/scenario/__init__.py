"""The scenario: the YAML contract of SPEC §1, loaded with located errors."""

from sim.scenario.diagnostics import Diagnostic, ScenarioError
from sim.scenario.load import load_scenario, load_scenario_with_warnings, parse_scenario
from sim.scenario.model import (
    AgentSpec,
    AgentType,
    Distribution,
    LinkSpec,
    Scenario,
    SideEffects,
    TaskSpec,
    ToolSpec,
    WorkflowSpec,
)

__all__ = [
    "AgentSpec",
    "AgentType",
    "Diagnostic",
    "Distribution",
    "LinkSpec",
    "Scenario",
    "ScenarioError",
    "SideEffects",
    "TaskSpec",
    "ToolSpec",
    "WorkflowSpec",
    "load_scenario",
    "load_scenario_with_warnings",
    "parse_scenario",
]
