"""``verify --engine storm``: each property decided by Storm on the generated PRISM
program (:mod:`sim.verify.prism`), for every initiator model (issue 35).

The verdict is Storm's: ``holds`` iff the violation is unreachable under every
scheduler. A violated property gets its shortest counterexample from the explicit
search (:func:`sim.verify.verdicts._search`, the SPEC §5 trace ``check`` confirms); when
that search stops at its bound the verdict stays ``violated``, without a trace. The
sizes reported are Storm's model's (states, transitions; ``PropertyVerdict.model``),
and for a flat program also its exploration in Python (``PropertyVerdict.searched``),
summed over the initiator models; the probabilities (``probability``) are the smallest
minimum and the largest maximum over them. A property not decidable untimed stays
``not-decidable``, as with the explicit engine; a flat program over ``max_states``
states is ``undecided``.
"""

from __future__ import annotations

from collections.abc import Callable

from sim.properties import Property
from sim.scenario.model import Scenario
from sim.verify.knowledge import MAX_SUSPECT_SETS
from sim.verify.model import Model
from sim.verify.prism import Program, program
from sim.verify.storm import decide as storm_decide
from sim.verify.verdicts import (
    MAX_STATES,
    PropertyVerdict,
    WorkflowVerdict,
    _combined,
    _names_agents,
    _search,
    _tracker,
    initiator_groups,
    opened,
    suspicions_cut,
)

#: The engines of ``verify --engine``.
ENGINES = ("explicit", "storm")


def programs(
    scenario: Scenario,
    workflow: str,
    router: str,
    name: str,
    prop: Property | None,
    max_states: int = MAX_STATES,
    suspect_sets: int = MAX_SUSPECT_SETS,
) -> list[tuple[Model, Program]] | str:
    """The PRISM program of each initiator model of ``workflow`` × property ``name``, or
    why the property is not decidable untimed."""
    tracker = _tracker(name, prop, scenario)
    if isinstance(tracker, str):
        return tracker
    agents = frozenset(a.id for a in scenario.agents)
    groups = initiator_groups(scenario, workflow, router, _names_agents(prop, agents), suspect_sets)
    return [(model, program(model, tracker, max_states)) for model, _ in groups]


def decide_storm(
    scenario: Scenario,
    workflow: str,
    router: str,
    properties: list[tuple[str, Property | None]],
    max_states: int = MAX_STATES,
    suspect_sets: int = MAX_SUSPECT_SETS,
    symbolic: bool = False,
    probability: bool = False,
    give_up: Callable[[], bool] | None = None,
) -> WorkflowVerdict:
    """As :func:`sim.verify.verdicts.decide`, each property decided by Storm (see the
    module); ``symbolic``: Storm's decision-diagram engine; ``probability``: the
    minimum and maximum probability of a violation."""
    out, groups = opened(scenario, workflow, router, properties, suspect_sets)
    for name, prop in properties:
        tracker = _tracker(name, prop, scenario)
        if isinstance(tracker, str):
            out.properties.append(
                PropertyVerdict(name, "not-decidable", note=tracker, engine="storm")
            )
            continue
        found = []
        for model, _ in groups:
            prog = program(model, tracker, max_states)
            pv = _decided(name, model, prog, symbolic, probability)
            if pv.verdict == "violated":
                cx = _search(name, tracker, model, None, max_states, False, give_up)
                pv.events = cx.events
                if cx.verdict != "violated":
                    pv.note += "; no counterexample: the explicit search stopped undecided"
            found.append(pv)
        best = _combined(found, len(groups))
        if probability:
            lows = [p.probability[0] for p in found if p.probability is not None]
            highs = [p.probability[1] for p in found if p.probability is not None]
            if lows:
                best.probability = (min(lows), max(highs))
            best.deterministic = all(p.deterministic for p in found)
        out.properties.append(best)
    return out


def _decided(
    name: str, model: Model, prog: Program, symbolic: bool, probability: bool
) -> PropertyVerdict:
    """One property on one initiator's program, as Storm decides it."""
    how = "composed" if prog.construction == "composed" else f"flat: {prog.why_flat}"
    if not prog.complete:
        states, transitions = prog.explored
        note = f"storm, {how}: the flat product has more than {states:,} states (--max-states)"
        pv = PropertyVerdict(name, "undecided", states, transitions, None, note, model.initiator)
        pv.engine, pv.searched, pv.construction = "storm", prog.explored, prog.construction
        return pv
    found = storm_decide(prog.text, symbolic, probability)
    verdict = "violated" if found.reachable else "holds"
    note = f"storm {'dd' if symbolic else 'sparse'}, {how}"
    if verdict == "holds" and not model.suspicions.complete:
        verdict = "undecided"
        note += f"; {suspicions_cut(model)}"
    pv = PropertyVerdict(
        name, verdict, found.states, found.transitions, None, note, model.initiator
    )
    pv.engine, pv.searched, pv.construction = "storm", prog.explored, prog.construction
    pv.model = (found.states, found.transitions)
    if found.probability_min is not None and found.probability_max is not None:
        pv.probability = (found.probability_min, found.probability_max)
        pv.deterministic = found.deterministic
        pv.exact = found.exact
    return pv
