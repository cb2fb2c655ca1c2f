"""``verify``'s decisions: each selected property on each selected workflow (SPEC §11).

Which properties: the scenario's own (``properties:``), those of a ``--properties``
file, and the seven checks of SPEC §6 under their names (``write_approval``,
``requires_order`` and ``exclusive`` by their formulas, :mod:`sim.properties.builtin`;
``recovery`` and ``lts`` by the checks themselves; ``conservation`` and
``route_validity`` are not decidable: the untimed model has no messages).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.properties import Monitor, Property
from sim.scenario.model import Scenario
from sim.verify.counterexample import render
from sim.verify.model import Model
from sim.verify.observe import (
    TRANSPORT_CHECKS,
    CheckTracker,
    FormulaTracker,
    Tracker,
    undecidable_reason,
)
from sim.verify.search import Outcome, explore

#: The default bound on the states of one search (SPEC §11).
MAX_STATES = 1_000_000
CHECK_ORDER = (
    "write_approval",
    "requires_order",
    "exclusive",
    "recovery",
    "lts",
    "conservation",
    "route_validity",
)


class UnknownProperty(ValueError):
    """A ``--property`` name that no property or check has."""


@dataclass
class PropertyVerdict:
    """One property on one workflow: the verdict, the search's size, and the
    counterexample (§5 events) when violated; ``note`` says why not decidable or how
    the search ran; ``path`` is where the counterexample was written."""

    name: str
    verdict: str
    states: int = 0
    transitions: int = 0
    events: list[dict[str, Any]] | None = None
    note: str = ""
    path: Path | None = None
    confirm: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict,
            "states": self.states,
            "transitions": self.transitions,
            "counterexample": str(self.path) if self.path is not None else None,
        }


@dataclass
class WorkflowVerdict:
    """The verdicts of every selected property on one workflow."""

    workflow: str
    router: str
    initiator: str
    properties: list[PropertyVerdict] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "workflow": self.workflow,
            "router": self.router,
            "properties": [p.to_json() for p in self.properties],
        }


def selected(
    scenario: Scenario, extra: list[Property], names: list[str] | None
) -> list[tuple[str, Property | None]]:
    """(name, formula property or None for a check without one), in order: the
    scenario's properties, the extra ones, then the seven checks."""
    from sim.scenario.properties_rules import builtin_for, compile_properties

    props = compile_properties(scenario.properties, scenario) + list(extra)
    builtin = {p.name: p for p in builtin_for(scenario)}
    table: dict[str, Property | None] = {p.name: p for p in props}
    for name in CHECK_ORDER:
        table.setdefault(name, builtin.get(name))
    if not names:
        return list(table.items())
    unknown = [n for n in names if n not in table]
    if unknown:
        raise UnknownProperty(f"unknown property {', '.join(unknown)} (known: {', '.join(table)})")
    return [(n, table[n]) for n in dict.fromkeys(names)]


def _tracker(name: str, prop: Property | None, scenario: Scenario) -> Tracker | str:
    """The tracker deciding ``name``, or why it is not decidable."""
    from sim.scenario.properties_rules import tool_attributes

    if prop is None:
        if name in TRANSPORT_CHECKS:
            return "the untimed model has no messages (a check on the transport)"
        return CheckTracker(name, scenario)
    why = undecidable_reason(prop)
    if why:
        return why
    return FormulaTracker(prop, Monitor([prop], tool_attributes(scenario)))


def decide(
    scenario: Scenario,
    workflow: str,
    router: str,
    properties: list[tuple[str, Property | None]],
    max_states: int = MAX_STATES,
    reduce: bool = True,
) -> WorkflowVerdict:
    """Decide each property on one instance of ``workflow`` under ``router``."""
    exact = Model(scenario, workflow, router, exact=True)
    loose: Model | None = None
    out = WorkflowVerdict(workflow, router, exact.initiator)
    for name, prop in properties:
        tracker = _tracker(name, prop, scenario)
        if isinstance(tracker, str):
            out.properties.append(PropertyVerdict(name, "not-decidable", note=tracker))
            continue
        if reduce and tracker.interleaving_free:
            if loose is None:
                loose = Model(scenario, workflow, router, exact=False)
            first = explore(loose, tracker, max_states, reduce=True)
            result, model, note = first, loose, "partial-order reduction"
            if first.verdict == "violated":
                plain = explore(exact, tracker, max_states, reduce=False)
                if plain.verdict == "violated":
                    result, model = plain, exact
                    note = "partial-order reduction; counterexample from the full search"
                else:
                    note = (
                        "partial-order reduction (the full search for a shortest one hit the bound)"
                    )
        else:
            result, model, note = explore(exact, tracker, max_states, reduce=False), exact, ""
        out.properties.append(_verdict(name, result, model, note))
    return out


def _verdict(name: str, result: Outcome, model: Model, note: str) -> PropertyVerdict:
    events = render(model, result.path) if result.verdict == "violated" else None
    return PropertyVerdict(name, result.verdict, result.states, result.transitions, events, note)
