"""``verify``'s decisions: each selected property on each selected workflow (SPEC §11).

Each workflow is decided for every initiator (:func:`decide`). Which properties: the
scenario's own (``properties:``), those of a ``--properties`` file, and the seven checks
of SPEC §6 under their names (``write_approval``, ``requires_order`` and ``exclusive``
by their checks' cores stepped in the search state, :class:`~sim.verify.observe.CoreTracker`;
``recovery`` and ``lts`` by the checks run on the path; ``conservation`` and
``route_validity`` are not decidable: the untimed model has no messages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.properties import Monitor, Property
from sim.properties.ast import atoms
from sim.scenario.model import Scenario
from sim.scenario.properties import UnknownProperty as UnknownProperty
from sim.verify.counterexample import render
from sim.verify.knowledge import MAX_SUSPECT_SETS
from sim.verify.model import Model
from sim.verify.observe import (
    TRANSPORT_CHECKS,
    CheckTracker,
    CoreTracker,
    FormulaTracker,
    Tracker,
    undecidable_reason,
)
from sim.verify.search import Outcome, explore

#: The default bound on the states of one search (SPEC §11).
MAX_STATES = 1_000_000
#: The note of a search stopped by its caller's ``give_up`` (``verify --max-seconds``).
GAVE_UP = "time bound reached (--max-seconds): the search stopped undecided"


@dataclass
class PropertyVerdict:
    """One property on one workflow: the verdict, the searches' size (summed over the
    initiators' models), and the counterexample (§5 events) when violated; ``note`` says
    why not decidable or how the search ran; ``initiator`` is the one whose model gave
    the verdict (the counterexample's); ``path`` is where the counterexample was written."""

    name: str
    verdict: str
    states: int = 0
    transitions: int = 0
    events: list[dict[str, Any]] | None = None
    note: str = ""
    initiator: str = ""
    path: Path | None = None
    confirm: str = ""
    #: who decided: ``explicit`` (the breadth-first search) or ``storm`` (issue 35)
    engine: str = "explicit"
    #: Storm's (min, max) probability of a violation over the schedulers, when asked
    probability: tuple[float, float] | None = None
    #: the model had no nondeterminism (one probability); ``exact``: Storm's rationals
    deterministic: bool = False
    exact: str = ""
    #: (states, transitions) of Storm's model (None: none built) and of the states a
    #: breadth-first search in Python stored (the explicit search, a flat program's
    #: exploration), summed over the initiator models; ``construction``: Storm's program
    model: tuple[int, int] | None = None
    searched: tuple[int, int] = (0, 0)
    construction: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "verdict": self.verdict,
            "engine": self.engine,
            "states": self.states,
            "transitions": self.transitions,
            "counterexample": str(self.path) if self.path is not None else None,
        }
        if self.model is not None:
            out["model"] = self.construction
            out["model_states"], out["model_transitions"] = self.model
        if self.engine == "explicit" or self.searched != (0, 0):
            out["searched_states"], out["searched_transitions"] = self.searched
        if self.probability is not None:
            if self.deterministic:
                out["probability"] = self.probability[1]
            else:
                out["probability_min"], out["probability_max"] = self.probability
        return out


@dataclass
class WorkflowVerdict:
    """The verdicts of every selected property on one workflow, decided for every
    initiator (``initiators``, in ``models`` distinct models; ``initiator``: the first)."""

    workflow: str
    router: str
    initiator: str
    properties: list[PropertyVerdict] = field(default_factory=list)
    initiators: tuple[str, ...] = ()
    models: int = 1

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
    scenario's properties, the extra ones, then the seven checks (all of them when no
    names are given)."""
    from sim.conformance.checks.families import CHECK_NAMES
    from sim.scenario.properties import select_properties

    return select_properties(scenario, extra, names, CHECK_NAMES, every_check=True)


def _tracker(name: str, prop: Property | None, scenario: Scenario) -> Tracker | str:
    """The tracker deciding ``name``, or why it is not decidable."""
    from sim.scenario.properties import tool_attributes

    if prop is None:
        if name in TRANSPORT_CHECKS:
            return "the untimed model has no messages (a check on the transport)"
        from sim.conformance.checks import CORES
        from sim.conformance.truth import from_scenario

        core_of = CORES.get(name)
        if core_of is not None:
            return CoreTracker(name, core_of(from_scenario(scenario)))
        return CheckTracker(name, scenario)
    why = undecidable_reason(prop)
    if why:
        return why
    return FormulaTracker(prop, Monitor([prop], tool_attributes(scenario)))


def _names_agents(prop: Property | None, agents: frozenset[str]) -> bool:
    """Whether ``prop``'s formula names an agent (a condition's value is one of
    ``agents``, whatever its key: ``agent``, ``detail.host``, ``detail.target``…):
    then the agents' names matter and initiators cannot share a search."""
    if prop is None:
        return False
    for atom in atoms(prop.formula):
        for c in atom.conditions:
            values = c.value if isinstance(c.value, frozenset) else {c.value}
            if any(isinstance(v, str) and v in agents for v in values):
                return True
    return False


def initiator_groups(
    scenario: Scenario,
    workflow: str,
    router: str,
    by_name: bool = False,
    suspect_sets: int = MAX_SUSPECT_SETS,
) -> list[tuple[Model, tuple[str, ...]]]:
    """The exact model of each distinct initiator of ``workflow``, with the initiators
    it stands for (those of the same :meth:`Model.signature`: the same state space up
    to renaming the agents; each its own with ``by_name``), in the scenario's initiator
    order."""
    first = Model(scenario, workflow, router, exact=True, suspect_sets=suspect_sets)
    wf = next(w for w in scenario.workflows if w.name == workflow)
    initiators = scenario.initiators_of(wf)
    if len(initiators) == 1:
        return [(first, (first.initiator,))]
    groups: dict[Any, tuple[Model, list[str]]] = {}
    for name in initiators:
        model = (
            first
            if name == first.initiator
            else Model(
                scenario, workflow, router, name, exact=True, mesh=first, suspect_sets=suspect_sets
            )
        )
        key = (name,) if by_name else model.signature()
        hit = groups.get(key)
        if hit is None:
            groups[key] = (model, [name])
        else:
            hit[1].append(name)
    return [(model, tuple(names)) for model, names in groups.values()]


def opened(
    scenario: Scenario,
    workflow: str,
    router: str,
    properties: list[tuple[str, Property | None]],
    suspect_sets: int = MAX_SUSPECT_SETS,
) -> tuple[WorkflowVerdict, list[tuple[Model, tuple[str, ...]]]]:
    """The workflow's verdict before any property is decided, and its initiator models
    (:func:`initiator_groups`; by agent name when a property names an agent): what every
    engine starts from."""
    agents = frozenset(a.id for a in scenario.agents)
    by_name = any(_names_agents(p, agents) for _, p in properties)
    groups = initiator_groups(scenario, workflow, router, by_name, suspect_sets)
    out = WorkflowVerdict(workflow, router, groups[0][0].initiator)
    out.initiators = tuple(n for _, names in groups for n in names)
    out.models = len(groups)
    return out, groups


def decide(
    scenario: Scenario,
    workflow: str,
    router: str,
    properties: list[tuple[str, Property | None]],
    max_states: int = MAX_STATES,
    reduce: bool = True,
    suspect_sets: int = MAX_SUSPECT_SETS,
    give_up: Callable[[], bool] | None = None,
) -> WorkflowVerdict:
    """Decide each property on one instance of ``workflow`` under ``router``, for every
    initiator: one search per distinct initiator model (:func:`initiator_groups`);
    violated if any is (the shortest counterexample, first initiator on a tie),
    else undecided if any is, else holds; states and transitions summed. ``give_up``
    (e.g. a time budget spent) makes every search still to run or running undecided."""
    out, groups = opened(scenario, workflow, router, properties, suspect_sets)
    loose: dict[int, Model] = {}
    for name, prop in properties:
        tracker = _tracker(name, prop, scenario)
        if isinstance(tracker, str):
            out.properties.append(PropertyVerdict(name, "not-decidable", note=tracker))
            continue
        found = []
        for k, (exact, _) in enumerate(groups):
            if reduce and tracker.interleaving_free and k not in loose:
                loose[k] = Model(
                    scenario, workflow, router, exact.initiator, exact=False, mesh=exact
                )
            found.append(_search(name, tracker, exact, loose.get(k), max_states, reduce, give_up))
        out.properties.append(_combined(found, len(groups)))
    return out


def _search(
    name: str,
    tracker: Tracker,
    exact: Model,
    loose: Model | None,
    max_states: int,
    reduce: bool,
    give_up: Callable[[], bool] | None = None,
) -> PropertyVerdict:
    """One property on one initiator's model (reduced search first where it may)."""
    if reduce and tracker.interleaving_free and loose is not None:
        first = explore(loose, tracker, max_states, reduce=True, give_up=give_up)
        result, model, note = first, loose, "partial-order reduction"
        if first.verdict == "violated":
            plain = explore(exact, tracker, max_states, reduce=False, give_up=give_up)
            if plain.verdict == "violated":
                result, model = plain, exact
                note = "partial-order reduction; counterexample from the full search"
            else:
                note = "partial-order reduction (the full search for a shortest one hit the bound)"
    else:
        result = explore(exact, tracker, max_states, reduce=False, give_up=give_up)
        model, note = exact, ""
    if result.stopped == "gave up":
        note = f"{note}; {GAVE_UP}" if note else GAVE_UP
    return _verdict(name, result, model, note)


def _combined(found: list[PropertyVerdict], models: int) -> PropertyVerdict:
    """One verdict over every initiator's: the shortest violation, else the first
    undecided, else holds; sizes summed over the searches."""
    violated = [p for p in found if p.verdict == "violated"]
    undecided = [p for p in found if p.verdict == "undecided"]
    if violated:
        best = min(violated, key=lambda p: len(p.events or ()))
    else:
        best = undecided[0] if undecided else found[0]
    best.states = sum(p.states for p in found)
    best.transitions = sum(p.transitions for p in found)
    best.searched = (sum(p.searched[0] for p in found), sum(p.searched[1] for p in found))
    built = [p.model for p in found if p.model is not None]
    best.model = (sum(m[0] for m in built), sum(m[1] for m in built)) if built else None
    if models > 1:
        about = f"{models} initiator models"
        if best.verdict != "holds":
            about += f", initiator {best.initiator}"
        best.note = f"{about}; {best.note}" if best.note else about
    return best


def suspicions_cut(model: Model) -> str:
    """Why a property that holds on ``model`` is only ``undecided``: its caller's suspect
    sets were cut at ``--suspect-sets``."""
    sets = len(model.suspicions.sets)
    return (
        f"{model.initiator}'s caller can suspect more than {sets} sets of "
        "nodes and links: routes under those only (--suspect-sets)"
    )


def _verdict(name: str, result: Outcome, model: Model, note: str) -> PropertyVerdict:
    events = render(model, result.path) if result.verdict == "violated" else None
    verdict = result.verdict
    if verdict == "holds" and not model.suspicions.complete:
        verdict = "undecided"
        cut = suspicions_cut(model)
        note = f"{note}; {cut}" if note else cut
    pv = PropertyVerdict(
        name, verdict, result.states, result.transitions, events, note, model.initiator
    )
    pv.searched = (result.states, result.transitions)
    return pv
