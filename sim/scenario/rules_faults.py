"""The cross-field rules of the ``faults:`` entries: every agent and link an entry names
(:meth:`~sim.scenario.model.faults.FaultSpec.nodes_named`, ``links_named``) exists,
whatever the entry's kind."""

from __future__ import annotations

from collections.abc import Iterator

from sim.scenario.findings import Finding, KnownNames, unknown
from sim.scenario.model import Scenario


def fault_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """The unknown agents and missing links of ``scn.faults``, in the file's order."""
    links = {frozenset(link.between) for link in scn.links}
    for i, fault in enumerate(scn.faults):
        for where, node in fault.nodes_named():
            if known.lacks("agents", node):
                yield Finding(("faults", i, *where), unknown("agent", node, known.agents))
        for where, (a, b) in fault.links_named():
            path = ("faults", i, *where)
            missing = [j for j, end in enumerate((a, b)) if known.lacks("agents", end)]
            for j in missing:
                yield Finding((*path, j), unknown("agent", (a, b)[j], known.agents))
            if not missing and "agents" in known.sections and frozenset((a, b)) not in links:
                yield Finding(path, f"there is no link between '{a}' and '{b}'")
