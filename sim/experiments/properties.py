"""The scenario's properties (SPEC §9) as figures of a run: ``metrics.json``'s
``properties`` block, written by the runner after the conformance pass that monitored
them (``run`` and ``compare``).

Per property: its scope and formula, the scopes examined and violated, violations per
1,000 scopes (the summary's ``property_violations_per_1000.<name>``, with its CI over
replications) and the first counterexample's message and ``seq``\\ s. A trace with no
event (level ``off``) checks nothing: counts and rate are null, never "holds".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sim.properties import Monitor
    from sim.scenario.model import Scenario
    from sim.vocabulary.verdicts import Verdict


def property_monitor(scenario: Scenario) -> Monitor:
    """A monitor of every property of ``scenario`` (``properties:``)."""
    from sim.properties import Monitor
    from sim.scenario.properties import compile_properties, tool_attributes

    return Monitor(compile_properties(scenario.properties, scenario), tool_attributes(scenario))


def property_metrics(verdicts: Sequence[Verdict], checked: bool) -> dict[str, dict[str, Any]]:
    """``{name: {scope, formula, examined, violations, violations_per_1000_scopes[,
    first]}}`` from the verdicts of a monitor fed a whole trace (``Monitor.finish()``;
    ``checked`` False: the trace was empty)."""
    out: dict[str, dict[str, Any]] = {}
    for v in verdicts:
        entry: dict[str, Any] = {"scope": v.scope, "formula": v.formula}
        if not checked:
            entry |= {"examined": 0, "violations": None, "violations_per_1000_scopes": None}
        else:
            rate = round(1000.0 * v.violations / v.examined, 6) if v.examined else None
            entry |= {
                "examined": v.examined,
                "violations": v.violations,
                "violations_per_1000_scopes": rate,
            }
            if v.violations:
                seqs = [e.get("seq") for e in v.counterexample]
                entry["first"] = {"message": v.message, "seqs": seqs}
        out[v.name] = entry
    return out
