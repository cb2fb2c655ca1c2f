"""Exhaustive verification of the untimed model (SPEC §11): every execution of one
instance per workflow, each property decided (holds, violated with a shortest
counterexample, undecided at the state bound, or not decidable untimed).

Depends on calculus, mesh, scenario, properties (and the conformance checks that have
no formula); never on the engine, so that it can disagree with it.
"""

from sim.verify.knowledge import MAX_SUSPECT_SETS
from sim.verify.verdicts import (
    MAX_STATES,
    PropertyVerdict,
    UnknownProperty,
    WorkflowVerdict,
    decide,
    selected,
)

__all__ = [
    "MAX_STATES",
    "MAX_SUSPECT_SETS",
    "PropertyVerdict",
    "UnknownProperty",
    "WorkflowVerdict",
    "decide",
    "selected",
]
