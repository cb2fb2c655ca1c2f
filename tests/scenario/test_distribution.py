"""A distribution's sampler draws what ``random.Random``'s own method would draw from the
same stream (``sim.scenario.model.distribution.Law.sampler``): the exponential one
inlines ``expovariate``'s body, so it must stay bit for bit the same; the gamma's is
``gammavariate`` of its shape and scale; an empirical one resamples by a uniform index or
interpolates its quantiles (monotone); every family's mean is exact."""

from __future__ import annotations

import math
import random
import statistics

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sim.scenario.model import Distribution
from sim.scenario.model.distribution import Law

MEANS = st.floats(1e-9, 1e9) | st.sampled_from([0.05, 1.0, 30.0])


@given(seed=st.integers(0, 2**64), mean=MEANS)
def test_the_exponential_sampler_is_expovariate(seed: int, mean: float) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    draw = Law("exponential", mean).sampler(ours)
    expected = [theirs.expovariate(1.0 / mean) for _ in range(20)]
    assert [draw() for _ in range(20)] == expected
    assert ours.random() == theirs.random()  # one uniform per draw, no more


def test_a_zero_mean_draws_nothing() -> None:
    rng = random.Random(3)
    assert Law("exponential", 0.0).sampler(rng)() == 0.0
    assert rng.random() == random.Random(3).random()


# --- gamma and empirical ---------------------------------------------------------------------


@given(seed=st.integers(0, 2**64), mean=st.floats(1e-3, 1e3), cv=st.floats(0.05, 5.0))
def test_the_gamma_sampler_is_gammavariate_of_its_shape_and_scale(
    seed: int, mean: float, cv: float
) -> None:
    sd = mean * cv
    ours, theirs = random.Random(seed), random.Random(seed)
    draw = Law("gamma", mean, sd).sampler(ours)
    shape, scale = (mean / sd) ** 2, sd * sd / mean
    assert [draw() for _ in range(10)] == [theirs.gammavariate(shape, scale) for _ in range(10)]


def test_the_gamma_law_has_its_mean_and_sd() -> None:
    law = Distribution(dist="gamma", mean=0.2, sd=0.05).law()
    assert (law.family, law.a, law.b, law.mean()) == ("gamma", 0.2, 0.05, 0.2)
    sampler = law.sampler(random.Random(9))
    draws = [sampler() for _ in range(40_000)]
    assert abs(statistics.fmean(draws) - 0.2) < 5 * 0.05 / 200
    assert abs(statistics.stdev(draws) - 0.05) < 0.002


class _Fixed:
    """A stand-in for ``random.Random`` whose ``random()`` returns the given uniforms."""

    def __init__(self, *us: float) -> None:
        self.us = list(us)

    def random(self) -> float:
        return self.us.pop(0)


QUANTILES = st.lists(
    st.tuples(st.floats(0.001, 0.999), st.floats(0.0, 100.0)), max_size=8, unique_by=lambda t: t[0]
).map(lambda inner: sorted([(0.0, 0.0), *inner, (1.0, 0.0)]))


def _quantile_law(pairs: list[tuple[float, float]]) -> Law:
    """The law of ``pairs`` (probability, any value) with the values made non-decreasing."""
    values, total = [], 0.0
    for _, v in pairs:
        total += v
        values.append(total)
    return Law("empirical", points=tuple(values), levels=tuple(p for p, _ in pairs))


@given(
    pairs=QUANTILES,
    u=st.floats(0.0, 1.0, exclude_max=True),
    w=st.floats(0.0, 1.0, exclude_max=True),
)
def test_the_quantile_sampler_is_monotone(
    pairs: list[tuple[float, float]], u: float, w: float
) -> None:
    law = _quantile_law(pairs)
    low, high = sorted((u, w))
    draw = law.sampler(_Fixed(low, high))  # type: ignore[arg-type]
    first, second = draw(), draw()
    assert law.points[0] <= first <= second <= law.points[-1]


@given(pairs=QUANTILES)
def test_the_quantile_sampler_passes_through_its_quantiles(
    pairs: list[tuple[float, float]],
) -> None:
    law = _quantile_law(pairs)
    inner = [(p, v) for p, v in zip(law.levels, law.points, strict=True) if p < 1.0]
    draw = law.sampler(_Fixed(*(p for p, _ in inner)))  # type: ignore[arg-type]
    for _, v in inner:
        assert draw() == pytest.approx(v, abs=1e-9)


@given(pairs=QUANTILES)
def test_the_quantile_mean_is_the_integral_of_the_sampler(pairs: list[tuple[float, float]]) -> None:
    law = _quantile_law(pairs)
    n = 4000
    draw = law.sampler(_Fixed(*((i + 0.5) / n for i in range(n))))  # type: ignore[arg-type]
    riemann = statistics.fmean(draw() for _ in range(n))
    assert law.mean() == pytest.approx(riemann, abs=1e-3 * (law.points[-1] + 1))


def test_quantiles_interpolate_linearly() -> None:
    law = Distribution(dist="empirical", quantiles={"0": 1.0, "0.5": 2.0, "1": 4.0}).law()
    draw = law.sampler(_Fixed(0.0, 0.25, 0.5, 0.75))  # type: ignore[arg-type]
    assert [draw() for _ in range(4)] == [1.0, 1.5, 2.0, 3.0]
    assert law.mean() == 0.5 * 1.5 + 0.5 * 3.0


@given(seed=st.integers(0, 2**64), samples=st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_samples_are_resampled_by_a_uniform_index(seed: int, samples: list[float]) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    draw = Distribution(dist="empirical", samples=samples).law().sampler(ours)
    assert [draw() for _ in range(20)] == [
        samples[theirs.randrange(len(samples))] for _ in range(20)
    ]


@given(samples=st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_the_samples_mean_is_exact(samples: list[float]) -> None:
    assert Distribution(dist="empirical", samples=samples).law().mean() == math.fsum(samples) / len(
        samples
    )


def test_every_family_s_mean() -> None:
    cases = {
        "{dist: constant, value: 2}": 2.0,
        "{dist: exponential, mean: 3}": 3.0,
        "{dist: gamma, mean: 4, sd: 1}": 4.0,
        "{dist: lognormal, median: 1, sigma: 1}": math.exp(0.5),
        "{dist: uniform, low: 1, high: 2}": 1.5,
        "{dist: empirical, samples: [1, 2, 6]}": 3.0,
        "{dist: empirical, quantiles: {0: 0, 1: 1}}": 0.5,
    }
    for text, mean in cases.items():
        assert Distribution.model_validate(yaml.safe_load(text)).law().mean() == pytest.approx(mean)
