"""A distribution's sampler draws what ``random.Random``'s own method would draw from the
same stream (``sim.scenario.model.distribution.Law.sampler``): the exponential one
inlines ``expovariate``'s body, so it must stay bit for bit the same."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

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
