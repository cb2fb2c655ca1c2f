"""Random durations: the scenario's ``{dist: ...}`` entry and its law (one type for
every sampler: the engine, the topology generator and ``serve mcp``)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from sim.scenario.model.base import NonNegative, Spec, SpecError

_DIST_ORDER: tuple[str, ...] = ("value", "mean", "median", "sigma", "low", "high")

_DIST_PARAMS: dict[str, tuple[str, ...]] = {
    "constant": ("value",),
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),
    "uniform": ("low", "high"),
}


class Distribution(Spec):
    """A non-negative random duration in seconds.

    ``constant`` {value}; ``exponential`` {mean}; ``lognormal`` {median, sigma}
    (sigma of the underlying normal); ``uniform`` {low, high}.
    """

    dist: Literal["constant", "exponential", "lognormal", "uniform"] = Field(
        description="Distribution family: constant | exponential | lognormal | uniform."
    )
    value: NonNegative | None = Field(None, description="constant: the value, seconds.")
    mean: NonNegative | None = Field(None, description="exponential: the mean, seconds.")
    median: NonNegative | None = Field(None, description="lognormal: the median, seconds.")
    sigma: NonNegative | None = Field(
        None, description="lognormal: standard deviation of log(duration), dimensionless."
    )
    low: NonNegative | None = Field(None, description="uniform: lower bound, seconds.")
    high: NonNegative | None = Field(None, description="uniform: upper bound, seconds.")

    @model_validator(mode="after")
    def _parameters_match_family(self) -> Distribution:
        needed = _DIST_PARAMS[self.dist]
        given = {k for k in _DIST_ORDER if getattr(self, k) is not None}
        missing = [k for k in needed if k not in given]
        extra = [k for k in _DIST_ORDER if k in given and k not in needed]
        if missing or extra:
            article = "an" if self.dist[0] in "aeiou" else "a"
            message = f"{article} {self.dist} distribution takes {', '.join(needed)}"
            if extra:
                message += f", not {', '.join(extra)}"
            if missing:
                message += f" (missing: {', '.join(missing)})"
            raise SpecError(message, *(extra[:1] or ["dist"]))
        if self.dist == "uniform" and (self.low or 0.0) > (self.high or 0.0):
            raise SpecError(
                f"uniform low ({self.low:g}) must not be above high ({self.high:g})", "low"
            )
        return self

    def law(self) -> Law:
        """The plain law of this entry (what the samplers and means use)."""
        family = self.dist
        if family == "constant":
            return Law(family, float(self.value or 0.0))
        if family == "exponential":
            return Law(family, float(self.mean or 0.0))
        if family == "lognormal":
            return Law(family, float(self.median or 0.0), float(self.sigma or 0.0))
        return Law(family, float(self.low or 0.0), float(self.high or 0.0))


Sampler = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Law:
    """A non-negative random duration (seconds): its family and two parameters.

    constant (value, -); exponential (mean, -); lognormal (median, sigma), the median
    being ``exp(mu)`` of the underlying normal; uniform (low, high). The one sampler of
    scenario distributions: a zero mean or median gives 0 without a draw.
    """

    family: str
    a: float
    b: float = 0.0

    def sampler(self, rng: random.Random) -> Sampler:
        """A function drawing one value from ``rng`` per call (``random.Random`` only)."""
        a, b = self.a, self.b
        if self.family == "constant":
            return lambda: a
        if self.family == "exponential":
            if a <= 0:
                return lambda: 0.0
            rate = 1.0 / a
            uniform, log = rng.random, math.log
            # random.expovariate(rate)'s body, one Python call less per draw (the hot path)
            return lambda: -log(1.0 - uniform()) / rate
        if self.family == "lognormal":
            if a <= 0:
                return lambda: 0.0
            mu = math.log(a)
            logn = rng.lognormvariate
            return lambda: logn(mu, b)
        if self.family == "uniform":
            uni = rng.uniform
            return lambda: uni(a, b)
        raise ValueError(f"unknown distribution '{self.family}'")

    def draw(self, rng: random.Random) -> float:
        """One value drawn from ``rng`` (the same draws as :meth:`sampler`)."""
        return self.sampler(rng)()

    def mean(self) -> float:
        """The mean, seconds."""
        if self.family == "lognormal":
            return self.a * math.exp(self.b**2 / 2)
        if self.family == "uniform":
            return (self.a + self.b) / 2
        return self.a
