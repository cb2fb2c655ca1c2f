"""Exhaustive verification of the untimed model (SPEC §11): every execution of one
instance per workflow, each property decided (holds, violated with a shortest
counterexample, undecided at the state bound, or not decidable untimed).

Depends on calculus, mesh, scenario, properties and the conformance checks (their
cores, or the checks run on a path); never on the engine, so that it can disagree with
it.
"""

import sys
import types
from typing import Any

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


class _CallablePackage(types.ModuleType):
    """``sim.verify`` is this package and, called, the API function
    :func:`sim.verify.decisions.verify` (also :func:`sim.api.verify`)
    (docs/api.md): ``sim.verify(scenario)`` beside ``sim.compare`` and ``sim.smc``. The
    package's name is taken, so the function lives in the package's call."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from sim.verify.decisions import verify

        return verify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
