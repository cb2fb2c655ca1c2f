"""Distribution parameters past their bounds are errors at load time
(sim/scenario/rules/ranges.py), so no draw or mean overflows in a replication."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import Diagnostic, ScenarioError, parse_scenario
from sim.scenario.model import Law
from sim.scenario.rules.ranges import MAX_SECONDS, MAX_SIGMA

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = (ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text()
READ = "    side_effects: read\n"
SIGMA = (
    "must be ≤ 10: a lognormal's mean is exp(sigma²/2) times its median, and larger draws "
    "overflow (got {got})"
)


def _service_time(dist: str) -> str:
    """The minimal scenario with ``lookup``'s service time on line 25 (its mapping at column 19)."""
    assert MINIMAL.count(READ) == 1
    return MINIMAL.replace(READ, f"{READ}    service_time: {dist}\n")


def _errors(text: str) -> list[Diagnostic]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    return list(info.value.errors)


def test_the_bound_is_where_the_float_would_overflow() -> None:
    with pytest.raises(OverflowError):
        Law("lognormal", 0.1, 1000.0).mean()
    assert Law("lognormal", MAX_SECONDS, MAX_SIGMA).mean() < 1e40


@pytest.mark.parametrize(
    ("dist", "column", "key", "message"),
    [
        ("{dist: lognormal, median: 0.1, sigma: 1000}", 57, "sigma", SIGMA.format(got=1000)),
        ("{dist: lognormal, median: 0.1, sigma: 10.5}", 57, "sigma", SIGMA.format(got=10.5)),
        (
            "{dist: exponential, mean: 1e12}",
            45,
            "mean",
            "must be ≤ 1e+09 s (about 32 years) (got 1e+12)",
        ),
        (
            "{dist: lognormal, median: 2e9, sigma: 1}",
            45,
            "median",
            "must be ≤ 1e+09 s (about 32 years) (got 2e+09)",
        ),
        (
            "{dist: uniform, low: 0, high: 1e10}",
            49,
            "high",
            "must be ≤ 1e+09 s (about 32 years) (got 1e+10)",
        ),
    ],
)
def test_a_parameter_past_its_bound_is_located(
    dist: str, column: int, key: str, message: str
) -> None:
    errors = _errors(_service_time(dist))
    assert [(e.line, e.column, e.field, e.message) for e in errors] == [
        (25, column, f"tools[0].service_time.{key}", message)
    ]


def test_the_approval_latency_is_bounded_too() -> None:
    text = MINIMAL.replace(
        "duration: 100\n",
        "duration: 100\napproval: {latency: {dist: constant, value: 5e9}}\n",
    )
    errors = _errors(text)
    assert [(e.line, e.column, e.field) for e in errors] == [(5, 45, "approval.latency.value")]


def test_parameters_at_the_bounds_load() -> None:
    scenario, _ = parse_scenario(
        _service_time(f"{{dist: lognormal, median: {MAX_SECONDS:g}, sigma: {MAX_SIGMA:g}}}"),
        "s.yaml",
    )
    assert scenario.tools[0].service_time.sigma == MAX_SIGMA
