"""The statistics of statistical model checking (SPEC §10): each replication is one
Bernoulli sample "the run satisfies the property".

- :func:`clopper_pearson`: the exact (Clopper–Pearson) interval for p after k successes
  in n runs; it covers p with probability ≥ the confidence for every p.
- :class:`Estimation`: sequential estimation, stopping when the interval's half-width
  (hi − lo) / 2 is ≤ the target width, or at the run budget.
- :class:`Sprt`: Wald's sequential probability ratio test of H0: p ≥ θ + δ against
  H1: p ≤ θ − δ, with α = P(accept H1 | H0) and β = P(accept H0 | H1).

Pure arithmetic on counts: the ``smc`` command feeds them the verdicts of in-process
monitored replications.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact two-sided interval for a binomial proportion: ``lo`` is the α/2 quantile
    of Beta(k, n−k+1) (0 when k = 0), ``hi`` the 1−α/2 quantile of Beta(k+1, n−k) (1 when
    k = n), α = 1 − confidence."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n and n ≥ 1 (got k={k}, n={n})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence})")
    from scipy.special import betaincinv

    alpha = 1.0 - confidence
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return lo, hi


def half_width(k: int, n: int, confidence: float) -> float:
    """Half the width of :func:`clopper_pearson`'s interval."""
    lo, hi = clopper_pearson(k, n, confidence)
    return (hi - lo) / 2


def planned_runs(p: float, width: float, confidence: float, limit: int = 10**7) -> int:
    """The runs :class:`Estimation` needs when the observed share stays at ``p``: the
    smallest n whose interval at k = round(p·n) has half-width ≤ ``width`` (searched
    from the normal approximation z²p(1−p)/w² downwards and upwards)."""
    from scipy.stats import norm

    z = float(norm.ppf(1 - (1 - confidence) / 2))
    n = max(1, int(z * z * p * (1 - p) / (width * width)))

    def fits(m: int) -> bool:
        return half_width(round(p * m), m, confidence) <= width

    while n > 1 and fits(n - 1):
        n -= 1
    while not fits(n):
        n += 1
        if n > limit:
            raise ValueError(f"more than {limit} runs needed")
    return n


@dataclass
class Estimation:
    """Sequential estimation of p: feed each run's verdict to :meth:`add`; it returns the
    stopping reason (``"width"`` or ``"max-runs"``) once the rule stops, else None."""

    width: float = 0.01
    confidence: float = 0.95
    max_runs: int | None = None
    #: runs before the width rule is consulted (the interval of a handful of runs is wide)
    min_runs: int = 2
    runs: int = 0
    satisfied: int = 0
    stopped: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.width < 0.5:
            raise ValueError(f"width must be in (0, 0.5) (got {self.width})")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1) (got {self.confidence})")

    def add(self, satisfied: bool) -> str | None:
        if self.stopped is not None:
            raise ValueError("the estimation has stopped")
        self.runs += 1
        self.satisfied += bool(satisfied)
        if self.runs >= self.min_runs and self.half_width <= self.width:
            self.stopped = "width"
        elif self.max_runs is not None and self.runs >= self.max_runs:
            self.stopped = "max-runs"
        return self.stopped

    @property
    def estimate(self) -> float:
        return self.satisfied / self.runs if self.runs else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return clopper_pearson(self.satisfied, self.runs, self.confidence)

    @property
    def half_width(self) -> float:
        lo, hi = self.interval
        return (hi - lo) / 2


@dataclass
class Sprt:
    """Wald's SPRT of "above" (p ≥ θ + δ) against "below" (p ≤ θ − δ); feed each run's
    verdict to :meth:`add`, which returns the decision once it is reached, else None."""

    threshold: float
    delta: float = 0.01
    alpha: float = 0.05
    beta: float = 0.05
    runs: int = 0
    satisfied: int = 0
    decision: str | None = None
    llr: float = 0.0  #: log of L(below) / L(above) so far

    def __post_init__(self) -> None:
        low, high = self.threshold - self.delta, self.threshold + self.delta
        if not (0 < low < high < 1):
            raise ValueError(f"need 0 < θ − δ < θ + δ < 1 (got θ={self.threshold}, δ={self.delta})")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(f"need α, β in (0, 1) with α + β < 1 (got {self.alpha}, {self.beta})")
        self._yes = math.log(low / high)
        self._no = math.log((1 - low) / (1 - high))
        self._accept_below = math.log((1 - self.beta) / self.alpha)
        self._accept_above = math.log(self.beta / (1 - self.alpha))

    def add(self, satisfied: bool) -> str | None:
        if self.decision is not None:
            raise ValueError("the test has decided")
        self.runs += 1
        self.satisfied += bool(satisfied)
        self.llr += self._yes if satisfied else self._no
        if self.llr >= self._accept_below:
            self.decision = "below"
        elif self.llr <= self._accept_above:
            self.decision = "above"
        return self.decision
