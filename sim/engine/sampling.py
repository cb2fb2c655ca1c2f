"""The scenario's laws as the compiled engine draws them: a native sampler where a Python
function per draw costs more than the draw (the exponential law, the commonest: service
times, approval latencies), else the law's own sampler.

Each sampler makes the same ``random.Random`` calls in the same order and computes the
same value, operation for operation, as :meth:`sim.scenario.model.distribution.Law.sampler`
(the one definition of the laws; ``tests/engine/test_sampling.py`` holds them equal, the
draws and the stream's state after, on every family); only how a draw is called
changes: the compiled engine calls a native object instead of a Python lambda. Values in
seconds, ≥ 0.
"""

from __future__ import annotations

import random
from math import log

from sim.scenario.model.distribution import Law, Sampler


class Exponential:
    """``Exp(rate)``: ``-log(1 - u) / rate`` of one uniform ``u`` (``random.expovariate``'s
    body, as :meth:`Law.sampler` writes it)."""

    __slots__ = ("rate", "uniform")

    def __init__(self, rate: float, uniform: Sampler) -> None:
        self.rate = rate
        self.uniform = uniform

    def __call__(self) -> float:
        return -log(1.0 - self.uniform()) / self.rate


def sampler_of(law: Law, rng: random.Random) -> Sampler:
    """A function drawing one value of ``law`` from ``rng`` per call: the draws of
    ``law.sampler(rng)``, natively where the family allows."""
    if law.family == "exponential" and law.a > 0:
        return Exponential(1.0 / law.a, rng.random)
    return law.sampler(rng)
