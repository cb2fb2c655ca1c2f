"""The gamma and empirical distributions and distribution-valued link latencies at load
time: every bad parameter is one located error with its exact message
(``sim/scenario/model/distribution.py``, ``mesh.py``, ``rules/ranges.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import Diagnostic, ScenarioError, parse_scenario
from sim.scenario.model import Distribution, LinkSpec

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = (ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text()
READ = "    side_effects: read\n"
LINK = "    latency: {MCP: 0.005}\n"


def _service_time(dist: str) -> str:
    """The minimal scenario with ``lookup``'s service time on line 25."""
    assert MINIMAL.count(READ) == 1
    return MINIMAL.replace(READ, f"{READ}    service_time: {dist}\n")


def _link(latency: str) -> str:
    """The minimal scenario with the gw-server link's ``latency:`` line (21) replaced."""
    assert MINIMAL.count(LINK) == 1
    return MINIMAL.replace(LINK, f"    {latency}\n")


def _errors(text: str) -> list[tuple[int, int, str, str]]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    return [(e.line, e.column, e.field, e.message) for e in info.value.errors]


def _only(errors: list[tuple[int, int, str, str]]) -> tuple[int, int, str, str]:
    assert len(errors) == 1, errors
    return errors[0]


ST = "tools[0].service_time"


@pytest.mark.parametrize(
    ("dist", "column", "field", "message"),
    [
        (
            "{dist: gamma, mean: 1}",
            19 + 7,
            "dist",
            "a gamma distribution takes mean, sd (missing: sd)",
        ),
        (
            "{dist: gamma, mean: 1, sd: 0}",
            19 + 27,
            "sd",
            "a gamma distribution needs sd > 0 (got 0); a duration that never varies is "
            "{dist: constant, value}",
        ),
        (
            "{dist: gamma, mean: 0, sd: 1}",
            19 + 20,
            "mean",
            "a gamma distribution needs mean > 0 (got 0); a duration that never varies is "
            "{dist: constant, value}",
        ),
        ("{dist: gamma, mean: 1, sd: -1}", 19 + 27, "sd", "must be ≥ 0 (got -1)"),
        (
            "{dist: gamma, mean: 1, sd: 1, median: 1}",
            19 + 38,
            "median",
            "a gamma distribution takes mean, sd, not median",
        ),
        (
            "{dist: gamma, mean: 1, sd: 1e-9}",
            19 + 27,
            "sd",
            "must be between 1e-06 and 1000 times the mean (got sd 1e-09, mean 1): the "
            "gamma's shape (mean/sd)² must be in [1e-06, 1e+12]",
        ),
        (
            "{dist: gamma, mean: 0.001, sd: 5}",
            19 + 31,
            "sd",
            "must be between 1e-06 and 1000 times the mean (got sd 5, mean 0.001): the "
            "gamma's shape (mean/sd)² must be in [1e-06, 1e+12]",
        ),
        (
            "{dist: empirical}",
            19 + 7,
            "dist",
            "an empirical distribution takes samples or quantiles (missing: samples or quantiles)",
        ),
        (
            "{dist: empirical, samples: []}",
            19 + 27,
            "samples",
            "an empirical distribution needs at least one sample",
        ),
        ("{dist: empirical, samples: [1, -2]}", 19 + 31, "samples[1]", "must be ≥ 0 (got -2)"),
        (
            "{dist: empirical, samples: [1, 2e9]}",
            19 + 31,
            "samples[1]",
            "must be ≤ 1e+09 s (about 32 years) (got 2e+09)",
        ),
        (
            "{dist: empirical, samples: [1], quantiles: {0: 1, 1: 2}}",
            19 + 43,
            "quantiles",
            "an empirical distribution takes samples or quantiles, not both",
        ),
        (
            "{dist: empirical, mean: 1, samples: [1]}",
            19 + 24,
            "mean",
            "an empirical distribution takes samples or quantiles, not mean",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, 0.5: 0.5, 1: 2}}",
            19 + 41,
            "quantiles.0.5",
            "quantiles must not decrease: 0.5 s at 0.5 is below 1 s at 0",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, 1.5: 2}}",
            19 + 41,
            "quantiles.1.5",
            "quantile key 1.5 is outside [0, 1]",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, 0.5: 2}}",
            19 + 29,
            "quantiles",
            "quantiles must include 0 and 1 (the least and the greatest duration; missing: 1)",
        ),
        (
            "{dist: empirical, quantiles: {0.2: 1, 1: 2}}",
            19 + 29,
            "quantiles",
            "quantiles must include 0 and 1 (the least and the greatest duration; missing: 0)",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, abc: 2, 1: 3}}",
            19 + 41,
            "quantiles.abc",
            "quantile key 'abc' is not a probability (a number in [0, 1])",
        ),
        (
            '{dist: empirical, quantiles: {0: 1, 0.5: 2, "0.50": 2, 1: 3}}',
            19 + 52,
            "quantiles.0.50",
            "quantile 0.50 is given twice (also as 0.5)",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, 1: -2}}",
            19 + 39,
            "quantiles.1",
            "must be ≥ 0 (got -2)",
        ),
        (
            "{dist: empirical, quantiles: {0: 1, 1: 2e9}}",
            19 + 39,
            "quantiles.1",
            "must be ≤ 1e+09 s (about 32 years) (got 2e+09)",
        ),
    ],
)
def test_a_bad_parameter_is_one_located_error(
    dist: str, column: int, field: str, message: str
) -> None:
    assert _only(_errors(_service_time(dist))) == (25, column, f"{ST}.{field}", message)


def test_too_many_samples_are_refused() -> None:
    samples = ", ".join(["1"] * 100_001)
    line = _only(_errors(_service_time(f"{{dist: empirical, samples: [{samples}]}}")))
    assert line == (
        25,
        46,
        f"{ST}.samples",
        "an empirical distribution takes at most 100,000 samples (got 100,001); give "
        "quantiles instead",
    )


def test_the_new_families_load() -> None:
    for dist in (
        "{dist: gamma, mean: 0.2, sd: 0.1}",
        "{dist: empirical, samples: [0.1, 0.2, 0.4]}",
        "{dist: empirical, quantiles: {0: 0.1, 0.5: 0.2, 1: 0.4}}",
    ):
        scenario, _ = parse_scenario(_service_time(dist), "s.yaml")
        assert scenario.tools[0].service_time.dist in ("gamma", "empirical")


def test_quantile_keys_may_be_numbers_in_python() -> None:
    dist = Distribution(dist="empirical", quantiles={0: 0.1, 0.5: 0.2, 1.0: 0.4})  # type: ignore[dict-item]
    assert dist.quantiles == {"0": 0.1, "0.5": 0.2, "1.0": 0.4}
    assert dist.law().levels == (0.0, 0.5, 1.0)


# --- link latencies -------------------------------------------------------------------------


def test_a_link_latency_may_be_a_distribution() -> None:
    scenario, _ = parse_scenario(
        _link("latency: {MCP: {dist: gamma, mean: 0.012, sd: 0.004}}"), "s.yaml"
    )
    latency = scenario.links[1].latency["MCP"]
    assert isinstance(latency, Distribution) and latency.law().mean() == 0.012
    assert scenario.links[0].latency == {"MCP": 0.01, "A2A": 0.02}


@pytest.mark.parametrize(
    ("latency", "column", "field", "message"),
    [
        ("latency: {MCP: -0.1}", 20, "links[1].latency.MCP", "must be ≥ 0 (got -0.1)"),
        (
            "latency: {MCP: {dist: gamma, mean: 0.01}}",
            27,
            "links[1].latency.MCP.dist",
            "a gamma distribution takes mean, sd (missing: sd)",
        ),
        (
            "latency: {MCP: {dist: gamma, maen: 0.01, sd: 0.1}}",
            34,
            "links[1].latency.MCP.maen",
            "unknown key 'maen' (did you mean 'mean'?)",
        ),
        (
            "latency: {MCP: true}",
            20,
            "links[1].latency.MCP",
            "must be a number, not the boolean true",
        ),
        (
            "latency: {MCP: fast}",
            20,
            "links[1].latency.MCP",
            "must be a number, not a string 'fast'",
        ),
        (
            "latency: {MCP: {dist: exponential, mean: 0.01}}\n    jitter: 0.002",
            13,
            "links[1].jitter",
            "jitter applies to numeric latencies only: MCP's latency is a distribution, which "
            "is the whole latency of a crossing (drop jitter, or widen the distribution)",
        ),
    ],
)
def test_a_bad_link_latency_is_located(latency: str, column: int, field: str, message: str) -> None:
    line = 22 if "jitter" in latency else 21
    assert _only(_errors(_link(latency))) == (line, column, field, message)


def test_jitter_with_numeric_latencies_still_loads() -> None:
    scenario, _ = parse_scenario(_link("latency: {MCP: 0.005}\n    jitter: 0.002"), "s.yaml")
    assert scenario.links[1].jitter == 0.002
    with pytest.raises(ValueError, match="jitter applies to numeric latencies only"):
        LinkSpec(
            between=["a", "b"], latency={"MCP": Distribution(dist="constant", value=1)}, jitter=1
        )


def test_diagnostics_name_no_union_member() -> None:
    """pydantic names a union's member in its error location; the loader does not."""
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_link("latency: {MCP: {dist: uniform, low: 2, high: 1}}"), "s.yaml")
    errors: list[Diagnostic] = list(info.value.errors)
    assert [str(e) for e in errors] == [
        "s.yaml:21:41: links[1].latency.MCP.low: uniform low (2) must not be above high (1)"
    ]
