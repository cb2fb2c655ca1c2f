"""The workflow rules of a scenario (SPEC §2, §6): precedence cycles, dependencies against
the order, initiators, capability tasks and the tasks warned for what they cannot do,
each a located diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim import admission
from sim.scenario import load_scenario_with_warnings
from sim.scenario.rules import find_cycle
from tests.harness.scenario_rules import (
    TASK_WARNINGS,
    broken,
    check,
    load,
)


def test_precedence_cycle_of_three_tasks_is_named_in_order(tmp_path: Path) -> None:
    tasks = (
        "      - {id: a, tool: lookup, after: [c]}\n"
        "      - {id: b, tool: store, after: [a]}\n"
        "      - {id: c, tool: lookup, after: [b]}\n"
    )
    old = "      - {id: a, tool: lookup}\n      - {id: b, tool: store, after: [a]}\n"
    file, errors, _ = load(tmp_path, broken((old, tasks)))
    assert len(errors) == 1, "\n".join(map(str, errors))
    check(errors[0], file, "36:38: workflows[0].tasks[0].after", "≺ has a cycle: a ≺ b ≺ c ≺ a")


def test_capability_task_needs_no_tool(tmp_path: Path) -> None:
    # "lookup" is a tool the server hosts, so the capability matches its host
    text = broken(("{id: a, tool: lookup}", "{id: a, capability: lookup}"))
    assert load(tmp_path, text)[1:] == ([], [])


def test_find_cycle() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    assert find_cycle({"a": ["b"], "b": ["a"]}) == ["a", "b", "a"]
    assert find_cycle({"x": [], "a": ["a"]}) == ["a", "a"]


DEPENDENCY_AGAINST_ORDER = """\
name: dep
protocols: [MCP+]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP+: 1}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP+: 1}, tools: [x, y]}
links: [{between: [a, s], latency: {MCP+: 0.01}}]
tools:
  - {name: x, side_effects: read, dependencies: [{tool: y, relation: %s}]}
  - {name: y, side_effects: read}
workflows:
  - name: w
    initiator: a
    protocol: MCP+
    arrivals: {times: [0]}
    tasks:
      - {id: tx, tool: x}
      - {id: ty, tool: y, after: [tx]}
"""


def test_requires_against_order_is_a_warning(tmp_path: Path) -> None:
    file, errors, warnings = load(tmp_path, DEPENDENCY_AGAINST_ORDER % "Requires")
    assert errors == []
    assert len(warnings) == 1
    check(warnings[0], file, "16:9: workflows[0].tasks[0]", "contradict ≺", "tx ≺ ty ≺ tx")


def test_produces_input_for_along_order_is_fine(tmp_path: Path) -> None:
    _, errors, warnings = load(tmp_path, DEPENDENCY_AGAINST_ORDER % "ProducesInputFor")
    assert errors == [] and warnings == []


INITIATORS = """\
name: many
protocols: [MCP, MCP+]
agents:
  - {id: p1, type: LLM_AGENT, protocols: {MCP+: 1}}
  - {id: p2, type: LLM_AGENT, protocols: {MCP: 1}}
  - {id: p3, type: LLM_AGENT, protocols: {MCP+: 1, MCP: 1}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP+: 1, MCP: 1}, tools: [t]}
links:
  - {between: [p1, s], latency: {MCP+: 0.01}}
  - {between: [p2, s], latency: {MCP: 0.01}}
  - {between: [p3, s], latency: {MCP+: 0.01}}
tools: [{name: t, side_effects: read}]
workflows:
  - name: w
    %s
    protocol: MCP+
    arrivals: {times: [0, 1, 2]}
    tasks: [{id: a, tool: t}]
"""


def test_initiators_by_type_are_the_agents_of_that_type_speaking_rho(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(INITIATORS % "initiators: {type: LLM_AGENT}", encoding="utf-8")
    scenario, warnings = load_scenario_with_warnings(path)
    assert warnings == []
    assert scenario.initiators_of(scenario.workflows[0]) == ("p1", "p3")


@pytest.mark.parametrize(
    ("initiators", "where", "words"),
    [
        ("initiators: {type: COORDINATOR}", "15:24: workflows[0].initiators.type",
         ["no COORDINATOR agent speaks MCP+"]),
        ("initiators: {agents: [p1, p9]}", "15:31: workflows[0].initiators.agents[1]",
         ["unknown agent 'p9'"]),
        ("initiators: {agents: [p1, p2]}", "16:15: workflows[0].protocol",
         ["initiator 'p2' does not speak MCP+"]),
        ("initiator: p1\n    initiators: {type: LLM_AGENT}", "15:16: workflows[0].initiator",
         ["exactly one of initiator or initiators"]),
        ("initiators: {type: LLM_AGENT, agents: [p1]}", "15:17: workflows[0].initiators",
         ["exactly one of `type` or `agents`"]),
    ],
)  # fmt: skip
def test_initiators_errors(tmp_path: Path, initiators: str, where: str, words: list[str]) -> None:
    text = INITIATORS % initiators
    file, errors, _ = load(tmp_path, text)
    assert errors, text
    check(errors[0], file, where, *words)


def test_tasks_that_cannot_do_what_they_look_like_are_warned(tmp_path: Path) -> None:
    file, errors, warnings = load(tmp_path, TASK_WARNINGS)
    assert errors == []
    # capability matching is the mesh's rule (sim.mesh.rules), run when a command loads
    assert [w.field for w in warnings] == ["workflows[0].tasks[0].args"]
    _, warnings = admission.load_scenario_with_warnings(file)
    assert len(warnings) == 2
    check(warnings[0], file, "15:38: workflows[0].tasks[0].args", "'t' requires to,", "args")
    check(warnings[1], file, "18:35: workflows[0].tasks[3].capability", "'weather_forecast'")
