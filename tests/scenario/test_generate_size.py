"""The size of a generated mesh is known before it is generated (issue 38, item 5): the
estimate of each generator's links is its own count (or its expectation, or a bound), and
a block past :data:`MAX_MESH_SIZE` is refused at the parameter that drives it, before
any graph is built; a block with its own errors is not generated at all."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.generate import GenerationError, check_size, estimated_links, structure
from sim.scenario.model import MAX_MESH_SIZE, TopologySpec


def block(generator: str, agents: int, **params: float) -> TopologySpec:
    return TopologySpec(
        generator=generator,  # type: ignore[arg-type]
        agents=agents,
        params=params,
        protocols={"MCP": 1.0},
    )


def edges(spec: TopologySpec) -> int:
    return len(structure(spec, 7).edges)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(12, 200), m=st.integers(1, 10))
def test_barabasi_albert_links_are_counted_exactly(n: int, m: int) -> None:
    spec = block("barabasi_albert", n, m=m)
    assert estimated_links(spec)[0] == edges(spec) == m * (n - m)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(12, 200), half=st.integers(1, 5))
def test_watts_strogatz_links_are_counted_exactly(n: int, half: int) -> None:
    spec = block("watts_strogatz", n, k=2 * half, p=0.2)
    assert estimated_links(spec)[0] == edges(spec)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(12, 200), d=st.integers(1, 6))
def test_random_regular_links_are_counted_exactly(n: int, d: int) -> None:
    if d * n % 2:
        n += 1
    spec = block("random_regular", n, degree=d)
    assert estimated_links(spec)[0] == edges(spec)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 30), cols=st.integers(1, 30))
def test_a_grid_has_at_most_the_links_estimated(rows: int, cols: int) -> None:
    if rows * cols < 2:
        cols = 2
    spec = block("grid", rows * cols, rows=rows, cols=cols)
    assert edges(spec) <= estimated_links(spec)[0] < edges(spec) + rows + cols + 1


@settings(max_examples=25, deadline=None)
@given(n=st.integers(50, 400), degree=st.floats(1.0, 8.0))
def test_erdos_renyi_links_are_near_their_expectation(n: int, degree: float) -> None:
    spec = block("erdos_renyi", n, degree=degree)
    expected = estimated_links(spec)[0]
    assert abs(edges(spec) - expected) <= 6 * math.sqrt(expected) + 6


def test_waxman_links_are_at_most_the_bound() -> None:
    spec = block("waxman", 300, beta=0.4, alpha=0.1)
    assert edges(spec) <= estimated_links(spec)[0]


@pytest.mark.parametrize(
    ("generator", "params", "where"),
    [
        ("erdos_renyi", {"degree": 1000.0}, ("params", "degree")),
        ("barabasi_albert", {"m": 500.0}, ("params", "m")),
        ("watts_strogatz", {"k": 1000.0}, ("params", "k")),
        ("random_regular", {"degree": 999.0}, ("params", "degree")),
        ("grid", {"rows": 1000.0, "cols": 1000.0}, ("agents",)),
    ],
)
def test_a_mesh_past_the_bound_is_refused_at_its_driver(
    generator: str, params: dict[str, float], where: tuple[str, ...]
) -> None:
    spec = block(generator, 1_000_000, **params)
    with pytest.raises(GenerationError) as info:
        check_size(spec)
    assert info.value.where == where
    assert f"at most {MAX_MESH_SIZE:,} agents and links together" in str(info.value)


def test_a_mesh_at_the_bound_is_accepted_and_one_past_it_refused() -> None:
    # barabasi_albert with m = 1: agents - 1 links; attach adds none here
    agents = (MAX_MESH_SIZE + 1) // 2
    check_size(block("barabasi_albert", agents, m=1))
    with pytest.raises(GenerationError):
        check_size(block("barabasi_albert", agents + 1, m=1))


def test_every_mesh_is_connected_so_it_has_at_least_agents_minus_one_links() -> None:
    sparse = block("erdos_renyi", 200_000, degree=0.1)  # 10,000 links, then joined
    with pytest.raises(GenerationError, match="about 199,999 links"):
        check_size(sparse)


SHARE = """
name: gen
protocols: [MCP]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [lookup]}
links:
  - {between: [planner, s], latency: {MCP: 0.01}}
tools:
  - {name: lookup, side_effects: read}
failures:
  - {node: n3, at: 1, for: 1}
workflows:
  - {name: w, initiator: planner, protocol: MCP, arrivals: {times: [0]},
     tasks: [{id: a, tool: lookup}]}
topology:
  generator: barabasi_albert
  agents: 50
  params: {m: 2}
  protocols: {MCP: 1.5}
"""


def test_a_block_with_its_own_errors_is_not_generated() -> None:
    """A share of 1.5 was dropped by validation and the block generated from what was
    left, with no protocol at all: IndexError."""
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SHARE)
    assert [e.field for e in info.value.errors] == ["topology.protocols.MCP"]  # not n3's


def test_a_mesh_refused_for_its_size_is_the_only_error() -> None:
    """References to the agents it would have generated are not reported as unknown."""
    text = SHARE.replace("protocols: {MCP: 1.5}", "protocols: {MCP: 1.0}")
    text = text.replace("agents: 50\n  params: {m: 2}", "agents: 1000000\n  params: {m: 500}")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text)
    assert [e.field for e in info.value.errors] == ["topology.params.m"]
    assert "at most 350,000 agents and links together" in info.value.errors[0].message
