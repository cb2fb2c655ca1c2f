"""The per-run series stay small however long the run (issue 38, item 3): completions per
minute in buckets of whole minutes, at most :data:`MAX_BUCKETS` of them, none lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine.metrics import Metrics
from sim.experiments.series import MAX_BUCKETS, series_of_run
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario

MINI = """
name: long
duration: 100
protocols: [MCP]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [t]}
links:
  - {between: [a, s], latency: {MCP: 0.01}}
tools:
  - {name: t, side_effects: read}
workflows:
  - {name: w, initiator: a, protocol: MCP, arrivals: {times: [0]}, tasks: [{id: x, tool: t}]}
"""


def lasting(duration: float) -> Scenario:
    scenario, _ = parse_scenario(MINI)
    return scenario.model_copy(update={"duration": duration})


@settings(max_examples=40, deadline=None)
@given(
    duration=st.floats(1.0, 1e9),
    ends=st.lists(st.floats(0.0, 1.5e9), max_size=30),
)
def test_completions_are_bucketed_within_the_bound_and_all_kept(
    duration: float, ends: list[float]
) -> None:
    metrics = Metrics()
    for t in ends:
        metrics.ended(t, True)
    series = series_of_run(metrics, "protocol", lasting(duration), 0, {})
    buckets, width = series["completions_per_minute"], series["minutes_per_bucket"]
    assert len(buckets) <= MAX_BUCKETS and sum(buckets) == len(ends)
    span = max([duration / 60, *(t // 60 + 1 for t in ends)])
    assert width == 1 or (width - 1) * MAX_BUCKETS < span  # the smallest width that fits


def test_a_run_of_a_billion_seconds_writes_under_ten_thousand_buckets() -> None:
    """``duration: 1e9`` wrote a list of 16.7 million minutes (117 MB, 1.5 GB resident)."""
    metrics = Metrics()
    metrics.ended(90.0, True)
    series = series_of_run(metrics, "protocol", lasting(1e9), 0, {})
    assert series["minutes_per_bucket"] == 1667
    assert len(series["completions_per_minute"]) == 9_999  # ⌈16,666,667 / 1,667⌉
    assert series["completions_per_minute"][0] == 1


def test_an_hour_keeps_one_bucket_per_minute() -> None:
    metrics = Metrics()
    metrics.ended(61.0, True)
    series = series_of_run(metrics, "protocol", lasting(3600.0), 0, {})
    assert series["minutes_per_bucket"] == 1
    assert (
        series["completions_per_minute"][:2] == [0, 1]
        and len(series["completions_per_minute"]) == 60
    )
