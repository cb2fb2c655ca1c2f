"""A string where the scenario wants a number is a located error, as the published JSON
Schema says (an editor flags ``replications: "2"``): no quiet coercion of quoted numbers.
Numbers stay numbers (an int in a float field too), strings in other fields (enums,
names) are untouched."""

from __future__ import annotations

import pytest

from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.load import Override

BASE = """\
name: t
protocols: [MCP]
@TOP@
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - id: b
    type: TOOL_SERVER
    protocols: {MCP: @AFFINITY@}
    concurrency: @CONCURRENCY@
    live: {port: @PORT@}
links:
  - {between: [a, b], latency: {MCP: @LATENCY@}}
"""
GOOD = {
    "@TOP@": "duration: 600",
    "@AFFINITY@": "1",
    "@CONCURRENCY@": "3",
    "@PORT@": "9000",
    "@LATENCY@": "0.004",
}


def _text(**changes: str) -> str:
    text = BASE
    for key, value in {**GOOD, **{f"@{k.upper()}@": v for k, v in changes.items()}}.items():
        text = text.replace(key, value)
    return text


def test_numbers_and_ints_in_float_fields_validate() -> None:
    scenario, _ = parse_scenario(_text(top="duration: 6e2\nreplications: 2\nseed: 0"))
    assert scenario.duration == 600.0 and scenario.replications == 2


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (
            {"top": 'replications: "2"'},
            "3:15: replications",
            "must be a whole number, not a string '2' (write the number without quotes)",
        ),
        (
            {"top": "duration: '600'"},
            "3:11: duration",
            "must be a number, not a string '600' (write the number without quotes)",
        ),
        ({"top": "duration: '1e12'"}, "3:11: duration", "must be a number, not a string '1e12'"),
        ({"top": "seed: '0x1f'"}, "3:7: seed", "must be a whole number, not a string '0x1f'"),
        (
            {"latency": "'0.004'"},
            "12:38: links[0].latency.MCP",
            "must be a number, not a string '0.004'",
        ),
        ({"affinity": '"1"'}, "8:22: agents[1].protocols.MCP", "must be a number, not a string"),
        ({"concurrency": '"3"'}, "9:18: agents[1].concurrency", "must be a whole number"),
        ({"port": "'9000'"}, "10:18: agents[1].live.port", "must be a whole number"),
        ({"top": "duration: fast"}, "3:11: duration", "must be a number, not a string 'fast'"),
    ],
)
def test_a_string_in_a_number_field_is_a_located_error(
    change: dict[str, str], where: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_text(**change), "t.yaml")
    (diag,) = caught.value.errors
    assert str(diag).startswith(f"t.yaml:{where}: "), str(diag)
    assert message in diag.message, diag.message
    assert "without quotes" not in diag.message or change != {"top": "duration: fast"}


def test_a_boolean_is_still_refused_as_before() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_text(top="duration: true"))
    assert "must be a number, not the boolean true" in caught.value.errors[0].message


GENERATED = """\
name: gen
protocols: [MCP]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP: 1.0}}
topology:
  generator: watts_strogatz
  agents: 30
  params: {k: '4', p: 1e-1}
  protocols: {MCP: 1.0}
"""


def test_a_quoted_generator_parameter_is_refused_an_exponent_one_reads() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(GENERATED, "g.yaml")
    (diag,) = caught.value.errors
    assert str(diag).startswith("g.yaml:8:15: topology.params.k: must be a number, not a string")


def test_a_quoted_value_set_on_the_command_line_is_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_text(), "t.yaml", [Override(("duration",), "600", "--set duration='600'")])
    (diag,) = caught.value.errors
    assert diag.field == "duration" and "not a string '600'" in diag.message, diag
    assert diag.message.endswith("(with --set duration='600')")
