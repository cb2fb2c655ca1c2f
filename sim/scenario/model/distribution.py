"""Random durations: the scenario's ``{dist: ...}`` entry and its law (one type for
every sampler: the engine, the topology generator and ``serve mcp``)."""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from sim.scenario.model.base import NonNegative, Spec, SpecError

_DIST_ORDER: tuple[str, ...] = (
    "value",
    "mean",
    "sd",
    "median",
    "sigma",
    "low",
    "high",
    "samples",
    "quantiles",
)

_DIST_PARAMS: dict[str, tuple[str, ...]] = {
    "constant": ("value",),
    "exponential": ("mean",),
    "gamma": ("mean", "sd"),
    "lognormal": ("median", "sigma"),
    "uniform": ("low", "high"),
    "empirical": ("samples", "quantiles"),  # exactly one of the two
}

#: The most samples an empirical distribution may list.
MAX_SAMPLES = 100_000


def _quantile_keys(value: Any) -> Any:
    """YAML reads ``0.5:`` as a number and the loader makes mapping keys strings; a
    mapping built in Python may use numbers: both become the key's text."""
    if isinstance(value, dict):
        return {
            (str(k) if isinstance(k, int | float) and not isinstance(k, bool) else k): v
            for k, v in value.items()
        }
    return value


#: ``{probability: seconds}``: keys are the probabilities' text (located by the loader).
Quantiles = Annotated[dict[str, NonNegative], BeforeValidator(_quantile_keys)]


class Distribution(Spec):
    """A non-negative random duration in seconds.

    ``constant`` {value}; ``exponential`` {mean}; ``gamma`` {mean, sd} (both > 0);
    ``lognormal`` {median, sigma} (sigma of the underlying normal); ``uniform`` {low,
    high}; ``empirical`` {samples} (resampled) or {quantiles} (interpolated).
    """

    dist: Literal["constant", "exponential", "gamma", "lognormal", "uniform", "empirical"] = Field(
        description="Distribution family: constant | exponential | gamma | lognormal | "
        "uniform | empirical."
    )
    value: NonNegative | None = Field(None, description="constant: the value, seconds.")
    mean: NonNegative | None = Field(None, description="exponential, gamma: the mean, seconds.")
    sd: NonNegative | None = Field(
        None, description="gamma: the standard deviation, seconds (> 0)."
    )
    median: NonNegative | None = Field(None, description="lognormal: the median, seconds.")
    sigma: NonNegative | None = Field(
        None, description="lognormal: standard deviation of log(duration), dimensionless."
    )
    low: NonNegative | None = Field(None, description="uniform: lower bound, seconds.")
    high: NonNegative | None = Field(None, description="uniform: upper bound, seconds.")
    samples: list[NonNegative] | None = Field(
        None,
        description="empirical: observed durations, seconds (1 to 100,000), each drawn "
        "with equal probability.",
    )
    quantiles: Quantiles | None = Field(
        None,
        description="empirical: probability in [0, 1] -> duration, seconds; includes 0 and "
        "1, durations non-decreasing; drawn by linear interpolation between them.",
    )

    @model_validator(mode="after")
    def _parameters_match_family(self) -> Distribution:
        needed = _DIST_PARAMS[self.dist]
        given = {k for k in _DIST_ORDER if getattr(self, k) is not None}
        if self.dist == "empirical":
            self._empirical_parameters(given)
            return self
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
        if self.dist == "gamma":
            for key in ("mean", "sd"):
                if not getattr(self, key):
                    raise SpecError(
                        f"a gamma distribution needs {key} > 0 (got 0); a duration that "
                        "never varies is {dist: constant, value}",
                        key,
                    )
        return self

    def _empirical_parameters(self, given: set[str]) -> None:
        extra = [k for k in _DIST_ORDER if k in given and k not in _DIST_PARAMS["empirical"]]
        if extra:
            raise SpecError(
                f"an empirical distribution takes samples or quantiles, not {', '.join(extra)}",
                extra[0],
            )
        if self.samples is not None and self.quantiles is not None:
            raise SpecError(
                "an empirical distribution takes samples or quantiles, not both", "quantiles"
            )
        if self.samples is not None:
            if not self.samples:
                raise SpecError("an empirical distribution needs at least one sample", "samples")
            if len(self.samples) > MAX_SAMPLES:
                raise SpecError(
                    f"an empirical distribution takes at most {MAX_SAMPLES:,} samples "
                    f"(got {len(self.samples):,}); give quantiles instead",
                    "samples",
                )
        elif self.quantiles is not None:
            levels(self.quantiles)
        else:
            raise SpecError(
                "an empirical distribution takes samples or quantiles (missing: samples or "
                "quantiles)",
                "dist",
            )

    def law(self) -> Law:
        """The plain law of this entry (what the samplers and means use)."""
        family = self.dist
        if family == "constant":
            return Law(family, float(self.value or 0.0))
        if family == "exponential":
            return Law(family, float(self.mean or 0.0))
        if family == "gamma":
            return Law(family, float(self.mean or 0.0), float(self.sd or 0.0))
        if family == "lognormal":
            return Law(family, float(self.median or 0.0), float(self.sigma or 0.0))
        if family == "empirical":
            if self.samples is not None:
                return Law(family, points=tuple(float(x) for x in self.samples))
            pairs = levels(self.quantiles or {})
            return Law(
                family,
                points=tuple(v for _, v in pairs),
                levels=tuple(p for p, _ in pairs),
            )
        return Law(family, float(self.low or 0.0), float(self.high or 0.0))


def levels(quantiles: dict[str, float]) -> list[tuple[float, float]]:
    """The ``(probability, seconds)`` pairs of a ``quantiles`` mapping, by probability;
    :class:`SpecError` at the key that is not a probability, repeats one, or whose
    duration is below the one before, or when 0 or 1 is missing."""
    seen: dict[float, str] = {}
    for key in quantiles:
        try:
            p = float(key)
        except ValueError:
            raise SpecError(
                f"quantile key '{key}' is not a probability (a number in [0, 1])", "quantiles", key
            ) from None
        if not 0.0 <= p <= 1.0:
            raise SpecError(f"quantile key {key} is outside [0, 1]", "quantiles", key)
        if p in seen:
            raise SpecError(f"quantile {key} is given twice (also as {seen[p]})", "quantiles", key)
        seen[p] = key
    absent = [name for p, name in ((0.0, "0"), (1.0, "1")) if p not in seen]
    if absent:
        raise SpecError(
            "quantiles must include 0 and 1 (the least and the greatest duration; missing: "
            f"{', '.join(absent)})",
            "quantiles",
        )
    pairs = sorted((p, float(quantiles[key])) for p, key in seen.items())
    for (p0, v0), (p1, v1) in itertools.pairwise(pairs):
        if v1 < v0:
            raise SpecError(
                f"quantiles must not decrease: {v1:g} s at {p1:g} is below {v0:g} s at {p0:g}",
                "quantiles",
                seen[p1],
            )
    return pairs


Sampler = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Law:
    """A non-negative random duration (seconds): its family, two parameters, and the
    points of an empirical one.

    constant (value, -); exponential (mean, -); gamma (mean, sd), shape (mean/sd)² and
    scale sd²/mean; lognormal (median, sigma), the median being ``exp(mu)`` of the
    underlying normal; uniform (low, high); empirical (``points``: the samples, each
    drawn with probability 1/n; with ``levels``, the quantiles at those probabilities,
    0 first and 1 last, interpolated linearly). The one sampler of scenario
    distributions: a zero mean or median gives 0 without a draw.
    """

    family: str
    a: float = 0.0
    b: float = 0.0
    points: tuple[float, ...] = ()
    levels: tuple[float, ...] = ()

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
        if self.family == "gamma":
            if a <= 0 or b <= 0:
                return lambda: a if a > 0 else 0.0
            shape, scale = (a / b) ** 2, b * b / a
            gam = rng.gammavariate
            return lambda: gam(shape, scale)
        if self.family == "lognormal":
            if a <= 0:
                return lambda: 0.0
            mu = math.log(a)
            logn = rng.lognormvariate
            return lambda: logn(mu, b)
        if self.family == "uniform":
            uni = rng.uniform
            return lambda: uni(a, b)
        if self.family == "empirical":
            return self._empirical(rng)
        raise ValueError(f"unknown distribution '{self.family}'")

    def _empirical(self, rng: random.Random) -> Sampler:
        points, probs = self.points, self.levels
        if not probs:  # the samples: a uniform index into them
            return lambda: rng.choice(points)
        uniform = rng.random
        last = len(probs) - 2

        def inverse() -> float:
            u = uniform()
            k = min(bisect_right(probs, u) - 1, last)
            p0, p1 = probs[k], probs[k + 1]
            v0 = points[k]
            return v0 + (points[k + 1] - v0) * (u - p0) / (p1 - p0)

        return inverse

    def draw(self, rng: random.Random) -> float:
        """One value drawn from ``rng`` (the same draws as :meth:`sampler`)."""
        return self.sampler(rng)()

    def mean(self) -> float:
        """The mean, seconds (exact for every family)."""
        if self.family == "lognormal":
            return self.a * math.exp(self.b**2 / 2)
        if self.family == "uniform":
            return (self.a + self.b) / 2
        if self.family == "empirical":
            points, probs = self.points, self.levels
            if not probs:
                return math.fsum(points) / len(points)
            return math.fsum(
                (probs[k + 1] - probs[k]) * (points[k] + points[k + 1]) / 2
                for k in range(len(probs) - 1)
            )
        return self.a
