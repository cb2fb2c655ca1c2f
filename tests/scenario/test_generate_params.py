"""A generator parameter outside the range its generator is defined on is a located
error at that parameter, never a traceback from networkx nor a mesh silently generated
from a meaningless value (sim.scenario.generate)."""

from __future__ import annotations

import pytest

from sim.scenario import ScenarioError, parse_scenario

BASE = """
name: gen
protocols: [MCP]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP: 1.0}}
topology:
  generator: @GEN@
  agents: 30
  params: @PARAMS@
  protocols: {MCP: 1.0}
"""


@pytest.mark.parametrize(
    ("gen", "params", "field", "words"),
    [
        # alpha 0 divided by zero inside networkx.waxman_graph (a ZeroDivisionError)
        ("waxman", "{alpha: 0, beta: 0.4}", "topology.params.alpha", "in (0, 1]"),
        ("waxman", "{alpha: -1, beta: 0.4}", "topology.params.alpha", "in (0, 1]"),
        ("waxman", "{alpha: 0.1, beta: 5}", "topology.params.beta", "in (0, 1]"),
        ("waxman", "{beta: 0}", "topology.params.beta", "in (0, 1]"),
        # a rewiring probability of 1.5 or -3 generated a mesh
        ("watts_strogatz", "{k: 4, p: 1.5}", "topology.params.p", "in [0, 1]"),
        ("watts_strogatz", "{k: 4, p: -3}", "topology.params.p", "in [0, 1]"),
    ],
)
def test_a_parameter_out_of_its_range_is_a_located_error(
    gen: str, params: str, field: str, words: str
) -> None:
    text = BASE.replace("@GEN@", gen).replace("@PARAMS@", params)
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text)
    errors = caught.value.errors
    assert [d.field for d in errors] == [field], errors
    assert words in errors[0].message and gen in errors[0].message, errors[0].message
    assert errors[0].line == 9


@pytest.mark.parametrize(
    ("params", "name", "words"),
    [
        # pydantic read true as 1.0 (a mesh generated), .inf as a size of "about nan links"
        ("{k: 4, p: true}", "p", "must be a number, not the boolean true"),
        ("{k: .inf, p: 0.1}", "k", "finite number"),
    ],
)
def test_a_parameter_is_a_finite_number(params: str, name: str, words: str) -> None:
    text = BASE.replace("@GEN@", "watts_strogatz").replace("@PARAMS@", params)
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text)
    errors = caught.value.errors
    assert [d.field for d in errors] == [f"topology.params.{name}"], errors
    assert words in errors[0].message, errors[0].message


@pytest.mark.parametrize(
    ("gen", "params"),
    [
        ("waxman", "{alpha: 1, beta: 1}"),
        ("watts_strogatz", "{k: 4, p: 0}"),
        ("watts_strogatz", "{k: 4, p: 1}"),
    ],
)
def test_the_ends_of_the_ranges_generate(gen: str, params: str) -> None:
    scn, _ = parse_scenario(BASE.replace("@GEN@", gen).replace("@PARAMS@", params))
    assert len(scn.agents) == 31
