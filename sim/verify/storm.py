"""Storm decides a generated PRISM program (issue 35): is ``"violation"`` reachable, and
with what probability at least and at most over the MDP's schedulers.

stormpy is the optional extra ``protomesh[storm]`` (:data:`EXTRA`); without it
:func:`require` raises :class:`StormMissing`, whose message names it. Engines: Storm's
sparse engine (explicit matrices, floating point for the verdict, exact rationals for
``probability``) or, ``symbolic``, its decision-diagram engine (Sylvan BDDs/MTBDDs; the
probability by value iteration, to Storm's default precision).

The verdict: the property holds iff Pmax[F violation] = 0, which Storm's graph
precomputation (the states that reach the label with probability 0 under every
scheduler) decides exactly; the probabilities are reported only when asked.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

#: The pip extra that installs stormpy.
EXTRA = "protomesh[storm]"


class StormMissing(RuntimeError):
    """stormpy is not installed: ``--engine storm`` cannot run (exit 2)."""


def require() -> ModuleType:
    """The stormpy module, or :class:`StormMissing` naming the extra that installs it."""
    try:
        import stormpy
    except ImportError as exc:
        raise StormMissing(
            f"--engine storm needs stormpy, which is not installed: pip install '{EXTRA}' "
            f"(or make install) ({exc})"
        ) from None
    from stormpy import developer

    # Storm's own warnings (a solver method switched) are not the user's business
    developer.set_log_level(developer._core.LogLevel.ERR)
    module: ModuleType = stormpy
    return module


@dataclass
class StormOutcome:
    """What Storm found: the model's size, whether the violation is reachable, and the
    probabilities (None unless asked; equal when the model has no nondeterminism)."""

    states: int
    transitions: int
    reachable: bool
    probability_min: float | None = None
    probability_max: float | None = None
    deterministic: bool = False
    exact: str = ""


def decide(text: str, symbolic: bool = False, probability: bool = False) -> StormOutcome:
    """Build the PRISM program ``text`` with Storm and check it (see the module)."""
    stormpy = require()
    with tempfile.TemporaryDirectory(prefix="protomesh-storm-") as tmp:
        path = Path(tmp) / "model.prism"
        path.write_text(text, encoding="utf-8")
        prog = stormpy.parse_prism_program(str(path))
    formulas = 'Pmax=? [F "violation"]; Pmin=? [F "violation"]'
    props = stormpy.parse_properties(formulas, prog)
    if symbolic:
        return _symbolic(stormpy, prog, props, probability)
    model = stormpy.build_model(prog, props)
    initial = model.initial_states[0]
    pmax = _value(stormpy, model, props[0], initial)
    out = StormOutcome(model.nr_states, model.nr_transitions, pmax > 0)
    out.deterministic = model.nr_choices == model.nr_states
    if probability:
        exact_model = stormpy.build_model[stormpy.Rational](prog, props)
        start = exact_model.initial_states[0]
        hi = stormpy.model_checking(exact_model, props[0], only_initial_states=True)
        lo = stormpy.model_checking(exact_model, props[1], only_initial_states=True)
        top, bottom = hi.get_value(start), lo.get_value(start)
        out.probability_max, out.probability_min = float(top), float(bottom)
        out.exact = str(top) if str(top) == str(bottom) else f"[{bottom}, {top}]"
    return out


def _value(stormpy: Any, model: Any, prop: Any, state: int) -> float:
    result = stormpy.model_checking(model, prop, only_initial_states=True)
    return float(result.get_value(state))


#: Sylvan's memory (MiB) and worker threads for the decision-diagram engine: one thread,
#: so that the CPU time is one core's, and a bound well below a shared machine's memory.
SYLVAN_MEMORY_MIB = 1024
SYLVAN_THREADS = 1


def _symbolic(stormpy: Any, prog: Any, props: Any, probability: bool) -> StormOutcome:
    from stormpy import environments

    env = environments.Environment()
    env.dd().sylvan().maximal_memory = SYLVAN_MEMORY_MIB
    env.dd().sylvan().number_of_threads = SYLVAN_THREADS
    model = stormpy.build_model(prog, props, engine=stormpy.Engine.DD, environment=env)
    initial = stormpy.create_filter_initial_states(model)

    def at_start(prop: Any) -> float:
        result = stormpy.model_checking(model, prop, only_initial_states=True, environment=env)
        result.filter(initial)
        return float(result.get_max())

    pmax = at_start(props[0])
    out = StormOutcome(model.nr_states, model.nr_transitions, pmax > 0)
    if probability:
        out.probability_max, out.probability_min = pmax, at_start(props[1])
    return out
