"""The cross-field rules of SPEC §1, checked after every field has its shape, one module
per section they are about.

Each rule yields :class:`Finding` objects with a field path; the loader turns the path
into file, line and column. Rules never stop at the first problem. :func:`check_rules`
runs them in a fixed order: :mod:`.protocols` (and translations), :mod:`.agents` (agents,
links, the topology block), :mod:`.tools`, :mod:`.workflows`, :mod:`.faults` (failures
and faults), :mod:`.plugins` (the approval policy and routers named), :mod:`.sweep`,
:mod:`.ranges` (times and distribution parameters within bounds) and
:mod:`.properties` (formulas), then the rules of the layers above.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.scenario.findings import Finding, KnownNames, Rule, find_cycle
from sim.scenario.model import Scenario
from sim.scenario.rules.agents import agent_findings, link_findings, topology_findings
from sim.scenario.rules.faults import failure_findings, fault_findings
from sim.scenario.rules.plugins import approval_findings, router_findings
from sim.scenario.rules.properties import property_findings
from sim.scenario.rules.protocols import protocol_findings
from sim.scenario.rules.ranges import range_findings
from sim.scenario.rules.sweep import sweep_findings
from sim.scenario.rules.tools import tool_findings
from sim.scenario.rules.workflows import workflow_findings

__all__ = ["Finding", "KnownNames", "Rule", "check_rules", "find_cycle"]

#: The scenario's own rules, in the order their findings are reported (the loader sorts
#: by position; this order breaks ties).
SCENARIO_RULES: tuple[Rule, ...] = (
    protocol_findings,
    agent_findings,
    link_findings,
    tool_findings,
    workflow_findings,
    failure_findings,
    approval_findings,
    topology_findings,
    sweep_findings,
    range_findings,
    router_findings,
    property_findings,
)


def check_rules(scenario: Scenario, known: KnownNames, rules: Sequence[Rule] = ()) -> list[Finding]:
    """Every cross-field rule of SPEC §1 on ``scenario`` (:data:`SCENARIO_RULES`), then
    ``rules`` (those of the layers above: :data:`sim.admission.RULES`), then the
    ``faults:`` entries' (:func:`~sim.scenario.rules.faults.fault_findings`), in a
    deterministic order."""
    findings: list[Finding] = []
    for rule in (*SCENARIO_RULES, *rules, fault_findings):
        findings.extend(rule(scenario, known))
    return findings
