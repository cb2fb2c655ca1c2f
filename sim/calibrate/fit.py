"""A law for a sample of durations: each family fitted by maximum likelihood, the one
with the lowest Kolmogorov–Smirnov distance chosen (docs/calibrate.md, "The choice").

Families: ``exponential`` (mean = the sample mean), ``lognormal`` (median = exp of the
mean log, sigma = the population sd of the logs), ``gamma`` (shape by Newton's method on
log k − ψ(k) = log x̄ − mean log x, written as mean and sd). Rules, in order:

1. a (near-)constant sample (sd/mean below :data:`CONSTANT_CV`, or a range of at most
   :data:`RESOLUTION`: two times rounded to microseconds) is ``constant`` (its mean);
2. lognormal and gamma need every sample > 0 (else they are not fitted);
3. the lowest KS distance wins (ties: exponential, lognormal, gamma); a gamma whose
   likelihood ratio against the exponential (its shape-1 case) is below
   :data:`LR_CRITICAL` is the exponential;
4. if the winner's KS p-value is below :data:`KS_ALPHA`, no family fits: the sample's
   :data:`LEVELS` quantiles are written (``empirical``).

Parameters are written to 6 significant digits, and the likelihoods and KS statistics
are those of the written laws. scipy and numpy are imported here only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

#: The KS test's level: a family whose p-value is below it does not fit.
KS_ALPHA = 0.01
#: χ²(1) at 95 %: a gamma's likelihood gain over the exponential must exceed it.
LR_CRITICAL = 3.841
#: The probabilities of the quantiles written for an empirical law: every 5 % and the
#: 99th percentile (the tail a latency's p99 reads).
LEVELS: tuple[float, ...] = (*(round(i / 20, 2) for i in range(20)), 0.99, 1.0)
#: A sample whose sd/mean is below this is constant.
CONSTANT_CV = 1e-6
#: A sample whose range is at most this (seconds) is constant: the trace writes times to
#: microseconds, so a difference of two is known to ±1 µs.
RESOLUTION = 2e-6
#: The families fitted by maximum likelihood, in the order ties are broken.
FAMILIES: tuple[str, ...] = ("exponential", "lognormal", "gamma")


@dataclass(frozen=True, slots=True)
class FamilyFit:
    """One family's maximum-likelihood law: its written parameters, log-likelihood, KS
    distance and p-value (None, with ``note`` saying why, when it cannot be fitted)."""

    family: str
    params: dict[str, float]
    loglik: float | None
    ks: float | None
    p: float | None
    note: str = ""

    @property
    def fitted(self) -> bool:
        return self.ks is not None


@dataclass(frozen=True, slots=True)
class Fit:
    """The sample's size, each family's fit, the chosen family, why, and the
    distribution entry written to the scenario (``{dist: ..., ...}``)."""

    n: int
    families: tuple[FamilyFit, ...]
    chosen: str
    reason: str
    entry: dict[str, Any]


def significant(x: float) -> float:
    """``x`` to 6 significant digits."""
    return float(f"{x:.6g}")


def fit(samples: Sequence[float]) -> Fit:
    """The law of ``samples`` (seconds, ≥ 0, at least one) by the rules above."""
    x = np.asarray(samples, dtype=float)
    n = len(x)
    mean = float(x.mean())
    spread = float(x.max() - x.min())
    sd = float(x.std())
    cv = sd / mean if mean > 0 else 0.0
    if spread <= RESOLUTION * (1 + 1e-6) or cv < CONSTANT_CV:  # (a float's own error)
        value = significant(mean)
        reason = f"constant: the samples span {spread:.3g} s (sd/mean {cv:.3g})"
        return Fit(n, (), "constant", reason, {"dist": "constant", "value": value})
    families = (_exponential(x), _lognormal(x), _gamma(x))
    fitted = [f for f in families if f.fitted]
    best = min(fitted, key=lambda f: (f.ks, FAMILIES.index(f.family)))
    reason = f"lowest KS distance ({best.ks:.4g}, p = {best.p:.3g})"
    if best.family == "gamma":
        exp = families[0]
        ratio = 2 * ((best.loglik or 0.0) - (exp.loglik or 0.0))
        if ratio < LR_CRITICAL:
            reason = (
                f"gamma has the lowest KS distance but its shape is not told from 1 (likelihood "
                f"ratio {ratio:.3g} < {LR_CRITICAL}): the exponential, its shape-1 case"
            )
            best = exp
    if (best.p or 0.0) < KS_ALPHA:
        quantiles = np.quantile(x, LEVELS)
        entry: dict[str, Any] = {
            "dist": "empirical",
            "quantiles": {p: significant(float(v)) for p, v in zip(LEVELS, quantiles, strict=True)},
        }
        reason = (
            f"no family fits (best {best.family}: KS {best.ks:.4g}, p = {best.p:.3g} < "
            f"{KS_ALPHA}): the sample's {len(LEVELS)} quantiles"
        )
        return Fit(n, families, "empirical", reason, entry)
    return Fit(n, families, best.family, reason, {"dist": best.family, **best.params})


def _tested(family: str, params: dict[str, float], law: Any, x: np.ndarray) -> FamilyFit:
    """The family's fit with ``law`` (a frozen scipy distribution of the written
    parameters): its log-likelihood and KS test on ``x``."""
    loglik = float(np.sum(law.logpdf(x)))
    test = stats.kstest(x, law.cdf)
    return FamilyFit(
        family, params, loglik if math.isfinite(loglik) else None, float(test.statistic),
        float(test.pvalue),
    )  # fmt: skip


def _positive(family: str, x: np.ndarray) -> FamilyFit | None:
    zeros = int(np.sum(x <= 0))
    if zeros:
        note = f"not fitted: it needs every sample > 0 ({zeros} of {len(x)} are 0)"
        return FamilyFit(family, {}, None, None, None, note)
    return None


def _exponential(x: np.ndarray) -> FamilyFit:
    mean = significant(float(x.mean()))
    params = {"mean": mean}
    return _tested("exponential", params, frozen({"dist": "exponential", **params}), x)


def _lognormal(x: np.ndarray) -> FamilyFit:
    refused = _positive("lognormal", x)
    if refused is not None:
        return refused
    logs = np.log(x)
    median = significant(float(np.exp(logs.mean())))
    sigma = significant(float(logs.std()))
    if not 0 < sigma <= 10:
        return FamilyFit("lognormal", {}, None, None, None, f"not fitted: sigma {sigma:g}")
    params = {"median": median, "sigma": sigma}
    return _tested("lognormal", params, frozen({"dist": "lognormal", **params}), x)


def gamma_shape(x: np.ndarray) -> float:
    """The maximum-likelihood shape k of a gamma law for ``x`` (every sample > 0, not
    all equal): the root of log k − ψ(k) = log x̄ − mean log x, by Newton's method from
    Minka's approximation."""
    s = float(np.log(x.mean()) - np.log(x).mean())
    k = (3 - s + math.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)
    for _ in range(100):
        f = math.log(k) - float(special.digamma(k)) - s
        slope = 1 / k - float(special.polygamma(1, k))
        step = k - f / slope
        step = step if step > 0 else k / 2
        if abs(step - k) <= 1e-12 * k:
            return step
        k = step
    return k


def _gamma(x: np.ndarray) -> FamilyFit:
    refused = _positive("gamma", x)
    if refused is not None:
        return refused
    k = gamma_shape(x)
    mean = significant(float(x.mean()))
    sd = significant(mean / math.sqrt(k))
    if not 1e-6 * mean <= sd <= 1e3 * mean:
        return FamilyFit("gamma", {}, None, None, None, f"not fitted: shape {k:.3g}")
    params = {"mean": mean, "sd": sd}
    return _tested("gamma", params, frozen({"dist": "gamma", **params}), x)


def frozen(entry: dict[str, Any]) -> Any:
    """The scipy law of a parametric entry (exponential, lognormal, gamma), else None."""
    family = entry["dist"]
    if family == "exponential":
        return stats.expon(scale=entry["mean"])
    if family == "lognormal":
        return stats.lognorm(s=entry["sigma"], scale=entry["median"])
    if family == "gamma":
        mean, sd = entry["mean"], entry["sd"]
        return stats.gamma(a=(mean / sd) ** 2, scale=sd * sd / mean)
    return None


def cdf(entry: dict[str, Any], grid: np.ndarray) -> np.ndarray:
    """The entry's CDF at ``grid`` (seconds): a step at a constant, linear between an
    empirical law's quantiles."""
    law = frozen(entry)
    if law is not None:
        return np.asarray(law.cdf(grid))
    if entry["dist"] == "constant":
        return np.where(grid >= entry["value"], 1.0, 0.0)
    pairs = sorted((float(p), v) for p, v in entry["quantiles"].items())
    values = np.array([v for _, v in pairs])
    levels = np.array([p for p, _ in pairs])
    return np.asarray(np.interp(grid, values, levels, left=0.0, right=1.0))


def density(entry: dict[str, Any], grid: np.ndarray) -> np.ndarray | None:
    """The entry's density at ``grid`` (None for a constant or an empirical law)."""
    law = frozen(entry)
    return None if law is None else np.asarray(law.pdf(grid))
