"""The statistics of ``smc``: the exact interval against scipy and published values, the
sequential stopping rule, and Wald's SPRT with its error rates."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim.experiments.smc import Estimation, Sprt, clopper_pearson, half_width, planned_runs


# Both bounds of every branch (k = 0, 0 < k < n, k = n) at once in the examples below;
# 100 drawings over n, the share and the level (make fuzz draws new ones each round).
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5000), st.floats(0, 1), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
@example(1, 0.0, 0.95).via("k = 0 of 1")
@example(1, 1.0, 0.99).via("k = n = 1")
@example(5000, 0.0002, 0.8).via("k = 1 of the largest n")
@example(5000, 0.9998, 0.9).via("k = n - 1 of the largest n")
def test_the_interval_is_scipys_exact_interval(n: int, share: float, confidence: float) -> None:
    from scipy.stats import binomtest  # a second of imports: not at collection

    k = round(share * n)
    oracle = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    lo, hi = clopper_pearson(k, n, confidence)
    assert lo == pytest.approx(oracle.low, abs=1e-12)
    assert hi == pytest.approx(oracle.high, abs=1e-12)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [  # R binom.test(k, n)$conf.int, 95 %
        (0, 10, 0.0, 0.3084971),
        (1, 10, 0.002528579, 0.4450161),
        (5, 10, 0.1870860, 0.8129140),
        (10, 10, 0.6915029, 1.0),
        (7, 20, 0.1539092, 0.5921885),
    ],
)
def test_published_values(k: int, n: int, lo: float, hi: float) -> None:
    got = clopper_pearson(k, n, 0.95)
    assert got == pytest.approx((lo, hi), abs=5e-7)


def test_bad_counts_are_refused() -> None:
    for k, n, c in ((3, 2, 0.95), (0, 0, 0.95), (1, 2, 1.0)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n, c)
    with pytest.raises(ValueError):
        Sprt(0.995, 0.01)
    with pytest.raises(ValueError):
        Estimation(width=0.0)


def test_estimation_stops_at_the_width_after_the_planned_runs() -> None:
    rng = random.Random(7)
    est = Estimation(width=0.02, confidence=0.99)
    widths = []
    while est.add(rng.random() < 0.7) is None:
        widths.append(est.half_width)
    assert est.stopped == "width" and est.half_width <= 0.02
    assert min(widths[1:]) > 0.02  # it stopped at the first run narrow enough
    lo, hi = est.interval
    assert lo <= 0.7 <= hi
    plan = planned_runs(0.7, 0.02, 0.99)
    assert 3300 <= plan <= 3700  # z² p (1 − p) / w² ≈ 3,484
    assert abs(est.runs - plan) / plan < 0.05
    assert half_width(round(0.7 * plan), plan, 0.99) <= 0.02
    assert half_width(round(0.7 * (plan - 1)), plan - 1, 0.99) > 0.02


def test_estimation_says_when_the_budget_ran_out() -> None:
    est = Estimation(width=0.001, max_runs=50)
    stops = [est.add(k % 2 == 0) for k in range(50)]
    assert stops[-1] == "max-runs" and stops[:-1] == [None] * 49
    with pytest.raises(ValueError):
        est.add(True)


def _sprt(p: float, theta: float, seed: int, **kw: float) -> Sprt:
    rng = random.Random(seed)
    test = Sprt(theta, **kw)
    while test.add(rng.random() < p) is None:
        pass
    return test


def test_sprt_accepts_above_and_below_after_far_fewer_runs_than_estimation() -> None:
    above = _sprt(0.7, 0.6, seed=1)
    below = _sprt(0.7, 0.8, seed=2)
    assert above.decision == "above" and below.decision == "below"
    plan = planned_runs(0.7, 0.02, 0.99)
    assert above.runs < plan / 5 and below.runs < plan / 5


def test_sprt_on_constant_streams_takes_walds_number_of_runs() -> None:
    test = Sprt(0.5, delta=0.1, alpha=0.05, beta=0.05)
    while test.add(True) is None:
        pass
    # each success adds log(0.4/0.6); "above" once the sum is ≤ log(0.05/0.95)

    assert test.runs == math.ceil(math.log(0.05 / 0.95) / math.log(0.4 / 0.6))
    assert test.decision == "above"


def test_sprt_error_rates_are_within_alpha_and_beta() -> None:
    alpha = beta = 0.1
    wrong_below = sum(
        _sprt(0.6, 0.5, seed, delta=0.1, alpha=alpha, beta=beta).decision == "below"
        for seed in range(400)
    )
    wrong_above = sum(
        _sprt(0.4, 0.5, 1000 + seed, delta=0.1, alpha=alpha, beta=beta).decision == "above"
        for seed in range(400)
    )
    # at the indifference boundaries Wald's bounds give P(error) ≤ α/(1−β) ≈ 0.11; with
    # 400 runs a share above 0.16 would be more than 3 standard errors off
    assert wrong_below / 400 <= 0.16 and wrong_above / 400 <= 0.16
