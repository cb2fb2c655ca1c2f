"""The rules on what strikes the mesh: ``failures:`` (the outages: their agents and
links exist, random ones name some, an outage starts within the run) and ``faults:``
(every agent and link an entry names, :meth:`~sim.scenario.model.faults.FaultSpec.nodes_named`
and ``links_named``, exists, whatever the entry's kind)."""

from __future__ import annotations

from collections.abc import Iterator

from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import Finding, KnownNames, unknown
from sim.scenario.model import Scenario


def failure_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    links = {frozenset(link.between) for link in scn.links}

    def check_link(path: FieldPath, pair: list[str]) -> Iterator[Finding]:
        if len(pair) != 2:
            yield Finding(path, "a link is a pair of agent ids")
            return
        missing = False
        for j, end in enumerate(pair):
            if known.lacks("agents", end):
                missing = True
                yield Finding((*path, j), unknown("agent", end, known.agents))
        if not missing and "agents" in known.sections and frozenset(pair) not in links:
            yield Finding(path, f"there is no link between '{pair[0]}' and '{pair[1]}'")

    for i, failure in enumerate(scn.failures):
        if failure.node is not None and known.lacks("agents", failure.node):
            yield Finding(("failures", i, "node"), unknown("agent", failure.node, known.agents))
        if failure.link is not None:
            yield from check_link(("failures", i, "link"), failure.link)
        if failure.random is not None:
            rnd = failure.random
            if not rnd.nodes and not rnd.links:
                yield Finding(("failures", i, "random"), "random failures need nodes or links")
            for j, node in enumerate(rnd.nodes):
                if known.lacks("agents", node):
                    yield Finding(
                        ("failures", i, "random", "nodes", j), unknown("agent", node, known.agents)
                    )
            for j, pair in enumerate(rnd.links):
                yield from check_link(("failures", i, "random", "links", j), pair)
        if failure.at is not None and failure.at > scn.duration:
            yield Finding(
                ("failures", i, "at"),
                f"the outage starts at {failure.at:g} s, after the run's duration "
                f"({scn.duration:g} s)",
                warning=True,
            )


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
