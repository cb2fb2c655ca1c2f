"""Choosing a law for a sample (``sim/calibrate/fit.py``): each family's maximum
likelihood on synthetic samples, the KS choice, and the constant, zero-valued, nested
and no-fit cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from sim.calibrate.fit import KS_ALPHA, LEVELS, LR_CRITICAL, fit, gamma_shape, significant
from sim.scenario.model import Distribution

POSITIVE = st.lists(st.floats(1e-4, 1e4), min_size=2, max_size=60).filter(
    lambda xs: max(xs) - min(xs) > 1e-3
)


def _family(result_families: tuple[object, ...], name: str) -> object:
    return next(f for f in result_families if getattr(f, "family", None) == name)


@settings(max_examples=60, deadline=None)
@given(samples=POSITIVE)
def test_the_exponential_mle_is_the_sample_mean(samples: list[float]) -> None:
    exp = _family(fit(samples).families, "exponential")
    assert exp.params == {"mean": significant(float(np.mean(samples)))}  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(samples=POSITIVE)
def test_the_lognormal_mle_is_the_logs_mean_and_population_sd(samples: list[float]) -> None:
    logs = np.log(samples)
    params = _family(fit(samples).families, "lognormal").params  # type: ignore[attr-defined]
    assert params == {
        "median": significant(math.exp(logs.mean())),
        "sigma": significant(float(logs.std())),
    }


@settings(max_examples=60, deadline=None)
@given(samples=POSITIVE)
def test_the_gamma_shape_solves_its_likelihood_equation(samples: list[float]) -> None:
    x = np.asarray(samples)
    k = gamma_shape(x)
    s = math.log(x.mean()) - float(np.log(x).mean())
    assert math.log(k) - float(special.digamma(k)) == pytest.approx(s, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("family", "draw", "truth"),
    [
        (
            "lognormal",
            lambda r: r.lognormal(math.log(0.1), 0.5, 3000),
            {"median": 0.1, "sigma": 0.5},
        ),
        ("gamma", lambda r: r.gamma(4.0, 0.025, 3000), {"mean": 0.1, "sd": 0.05}),
        ("exponential", lambda r: r.exponential(0.2, 3000), {"mean": 0.2}),
    ],
)
def test_each_family_is_recovered(family: str, draw: object, truth: dict[str, float]) -> None:
    samples = draw(np.random.default_rng(42))  # type: ignore[operator]
    result = fit(list(samples))
    assert result.chosen == family, result.reason
    assert result.entry["dist"] == family
    for key, value in truth.items():
        assert result.entry[key] == pytest.approx(value, rel=0.05)
    Distribution.model_validate(result.entry)  # the entry loads as it is written


def test_an_exponential_sample_is_not_called_a_gamma() -> None:
    """Exponential draws where the gamma (one parameter more) fits a little closer by KS:
    the likelihood ratio does not tell its shape from 1, so the exponential is chosen."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        samples = rng.exponential(0.1, 500)
        result = fit(list(samples))
        gamma = _family(result.families, "gamma")
        exp = _family(result.families, "exponential")
        if gamma.ks < exp.ks:  # type: ignore[attr-defined]
            break
    else:
        pytest.fail("no sample where the gamma's KS distance is the lower")
    ratio = 2 * (gamma.loglik - exp.loglik)  # type: ignore[attr-defined]
    assert ratio < LR_CRITICAL
    assert result.chosen == "exponential"
    assert "not told from 1" in result.reason


def test_a_sample_no_family_fits_is_written_as_its_quantiles() -> None:
    rng = np.random.default_rng(5)
    bimodal = np.concatenate([rng.normal(0.01, 0.0005, 2000), rng.normal(0.05, 0.001, 2000)])
    result = fit(list(bimodal))
    assert result.chosen == "empirical"
    assert all((f.p or 0.0) < KS_ALPHA for f in result.families)
    quantiles = result.entry["quantiles"]
    assert list(quantiles) == list(LEVELS)
    assert quantiles[0.0] == significant(float(bimodal.min()))
    assert quantiles[1.0] == significant(float(bimodal.max()))
    law = Distribution.model_validate(result.entry).law()
    assert law.levels == LEVELS


@pytest.mark.parametrize(
    ("samples", "value"),
    [
        ([0.005] * 40, 0.005),
        ([0.004999, 0.005, 0.005001] * 20, 0.005),  # times rounded to µs: ±1 µs apart
        ([0.0] * 40, 0.0),
        ([1000.0, 1000.0 + 1e-7] * 20, 1000.0),  # sd/mean below 1e-6
    ],
)
def test_a_constant_sample_is_a_constant(samples: list[float], value: float) -> None:
    result = fit(samples)
    assert (result.chosen, result.entry, result.families) == (
        "constant",
        {"dist": "constant", "value": value},
        (),
    )


def test_zero_samples_leave_out_the_families_that_need_positive_ones() -> None:
    rng = np.random.default_rng(8)
    samples = [0.0, 0.0, *rng.exponential(0.1, 200)]
    result = fit(samples)
    notes = {f.family: f.note for f in result.families if not f.fitted}
    assert notes == {
        "lognormal": "not fitted: it needs every sample > 0 (2 of 202 are 0)",
        "gamma": "not fitted: it needs every sample > 0 (2 of 202 are 0)",
    }
    assert result.chosen == "exponential"


def test_likelihoods_and_ks_are_the_written_law_s() -> None:
    from scipy import stats

    samples = list(np.random.default_rng(1).lognormal(0.0, 1.0, 400))
    result = fit(samples)
    logn = _family(result.families, "lognormal")
    law = stats.lognorm(s=logn.params["sigma"], scale=logn.params["median"])  # type: ignore[attr-defined]
    assert logn.loglik == pytest.approx(float(np.sum(law.logpdf(samples))))  # type: ignore[attr-defined]
    assert logn.ks == pytest.approx(stats.kstest(samples, law.cdf).statistic)  # type: ignore[attr-defined]
