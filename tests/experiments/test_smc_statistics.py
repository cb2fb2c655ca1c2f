"""The statistics on the engine, where the answer is known in closed form (slow).

One write behind an approval granted with probability g = 0.7 and nothing else random:
Pr[F execute(pay)] = 0.7; two sequential writes: 0.7² = 0.49. Repetitions are disjoint
runs of consecutive replications (independent streams): the Clopper–Pearson interval
of each sequential estimation must cover 0.7 in at least its nominal share of them
(one-sided binomial test at level 0.01), and Wald's SPRT at the boundary of each
hypothesis must err at most as often as α (resp. β) allows.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from sim.experiments.runner import fingerprint, make_executor
from sim.experiments.smc import Estimation, Sprt
from sim.experiments.smc_runner import Rule, SmcJob, estimate, run_batch
from sim.scenario import load_scenario
from sim.scenario.properties import compile_properties

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APPROVAL = ROOT / "scenarios" / "smc_approval.yaml"
TWO_WRITES = ROOT / "tests" / "fixtures" / "scenarios" / "smc_two_writes.yaml"
POOL = 24_000
REPETITIONS = 150


def _job(path: Path) -> SmcJob:
    scenario = load_scenario(path)
    props = tuple(compile_properties(scenario.properties[:1], scenario))
    return SmcJob(scenario, props, "protocol", f"{fingerprint(scenario)}:{path.name}")


@pytest.fixture(scope="module")
def paid() -> list[bool]:
    """Whether replication k (k < POOL) of smc_approval executes its write."""
    job = _job(APPROVAL)
    step = 1000
    with ProcessPoolExecutor(2) as pool:
        chunks = [
            pool.submit(run_batch, job, ("dijkstra",), a, a + step) for a in range(0, POOL, step)
        ]
        return [v[0] for f in chunks for v in f.result()["dijkstra"]]


def _repetitions(
    verdicts: list[bool], make: type[Estimation] | type[Sprt], **kw: float
) -> Iterator[Estimation | Sprt]:
    """REPETITIONS sequential rules, each fed the next replications until it stops."""
    it = iter(verdicts)
    for _ in range(REPETITIONS):
        rule = make(**kw)  # type: ignore[arg-type]
        while True:
            try:
                ok = next(it)
            except StopIteration:
                raise AssertionError(f"the pool of {POOL} replications ran out") from None
            if rule.add(ok) is not None:
                break
        yield rule


def test_the_pool_has_the_closed_form_share(paid: list[bool]) -> None:
    from scipy.stats import binomtest

    assert binomtest(sum(paid), len(paid), 0.7).pvalue > 0.001


def test_clopper_pearson_covers_at_least_its_nominal_share(paid: list[bool]) -> None:
    from scipy.stats import binomtest

    covers = 0
    for rule in _repetitions(paid, Estimation, width=0.1, confidence=0.9):
        assert isinstance(rule, Estimation) and rule.stopped == "width"
        assert rule.half_width <= 0.1
        lo, hi = rule.interval
        covers += lo <= 0.7 <= hi
    # H0: coverage ≥ 0.9; reject only on strong evidence of under-coverage
    assert binomtest(covers, REPETITIONS, 0.9, alternative="less").pvalue >= 0.01, covers


@pytest.mark.parametrize(
    ("threshold", "wrong", "bound"),
    [(0.6, "below", "alpha"), (0.8, "above", "beta")],
    ids=["p at θ+δ: P(below) ≤ α", "p at θ−δ: P(above) ≤ β"],
)
def test_sprt_errs_within_alpha_and_beta(
    paid: list[bool], threshold: float, wrong: str, bound: str
) -> None:
    from scipy.stats import binomtest

    level = 0.1
    kw = {"threshold": threshold, "delta": 0.1, "alpha": level, "beta": level}
    errors = sum(r.decision == wrong for r in _repetitions(paid, Sprt, **kw))
    # H0: error rate ≤ the bound; reject only on strong evidence of more errors
    assert binomtest(errors, REPETITIONS, level, alternative="greater").pvalue >= 0.01, errors


def test_two_sequential_writes_estimate_g_squared() -> None:
    pool = make_executor("local", 2)
    try:
        (o,) = estimate(_job(TWO_WRITES), ["dijkstra"], Rule(0.99, 0.03), pool)
    finally:
        pool.close()
    lo, hi = o.interval
    assert lo <= 0.49 <= hi and (hi - lo) / 2 <= 0.03 and o.stopped == "width"
