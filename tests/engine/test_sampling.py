"""The compiled engine's samplers (``sim.engine.sampling``) draw what the scenario's law
draws (``Law.sampler``, the one definition): the same values and the same stream state
after, on every family; the exponential law is drawn natively."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from sim.engine.sampling import Exponential, sampler_of
from sim.scenario.model.distribution import Law

SECONDS = st.floats(0.0, 1e6) | st.sampled_from([0.0, 0.05, 1.0, 30.0])
POINTS = st.lists(st.floats(0.0, 1e3), min_size=1, max_size=6)


@st.composite
def quantiles(draw: st.DrawFn) -> Law:
    """An empirical law of quantiles: levels from 0 to 1, durations not decreasing."""
    inner = sorted(draw(st.lists(st.floats(0.01, 0.99), max_size=4, unique=True)))
    levels = (0.0, *inner, 1.0)
    points = sorted(draw(st.lists(st.floats(0.0, 1e3), min_size=len(levels), max_size=len(levels))))
    return Law("empirical", points=tuple(points), levels=levels)


LAWS = st.one_of(
    st.builds(Law, st.just("constant"), SECONDS),
    st.builds(Law, st.just("exponential"), SECONDS),
    st.builds(Law, st.just("gamma"), SECONDS, SECONDS),
    st.builds(Law, st.just("lognormal"), SECONDS, st.floats(0.0, 3.0)),
    st.builds(Law, st.just("uniform"), SECONDS, SECONDS).map(
        lambda law: Law("uniform", min(law.a, law.b), max(law.a, law.b))
    ),
    st.builds(lambda p: Law("empirical", points=tuple(p)), POINTS),
    quantiles(),
)


@given(law=LAWS, seed=st.integers(0, 2**64))
def test_the_engine_draws_what_the_law_draws(law: Law, seed: int) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    engine, scenario = sampler_of(law, ours), law.sampler(theirs)
    assert [engine() for _ in range(12)] == [scenario() for _ in range(12)]
    assert ours.getstate() == theirs.getstate()  # the same draws, no more


def test_the_exponential_law_is_drawn_natively_and_a_zero_mean_draws_nothing() -> None:
    rng = random.Random(5)
    assert isinstance(sampler_of(Law("exponential", 0.05), rng), Exponential)
    zero = sampler_of(Law("exponential", 0.0), rng)
    assert not isinstance(zero, Exponential) and zero() == 0.0
    assert rng.random() == random.Random(5).random()
