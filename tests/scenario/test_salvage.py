"""The salvage of a scenario that does not validate keeps every item that validates on
its own, so the cross-field rules still check it: an item whose fields were salvaged
but that then fails its model's own validator (a scheduled failure that lost its
negative ``at`` no longer has a start) must not take its list's other items with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import ScenarioError, load_scenario

SCENARIO = """\
name: salvage-failures
protocols: [MCP]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: b, type: TOOL_SERVER, protocols: {MCP: 1.0}}
  - {id: c, type: TOOL_SERVER, protocols: {MCP: 1.0}}
links:
  - {between: [a, b], latency: {MCP: 0.01}}
failures:
  - {node: b, at: -10, for: 5}
  - {link: [a, c], at: 10, for: 5}
  - {random: {nodes: [], mtbf: 10, mttr: 5}}
  - {node: cc, at: 1, for: 1}
"""


def errors(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    """(line, field, message) of each error of the scenario ``text``, in the file's order."""
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    return [(d.line, d.field, d.message) for d in caught.value.errors]


def test_a_failure_with_a_bad_start_does_not_hide_the_other_failures_errors(
    tmp_path: Path,
) -> None:
    got = errors(tmp_path, SCENARIO)
    assert [(line, field) for line, field, _ in got] == [
        (10, "failures[0].at"),
        (11, "failures[1].link"),
        (12, "failures[2].random"),
        (13, "failures[3].node"),
    ], got
    assert got[0][2].startswith("must be ≥ 0")
    assert got[1][2] == "there is no link between 'a' and 'c'"
    assert got[2][2] == "random failures need nodes or links"
    assert got[3][2].startswith("unknown agent 'cc'")


TASKS = """\
name: salvage-tasks
protocols: [MCP]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: b, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [t1, t2]}
links:
  - {between: [a, b], latency: {MCP: 0.01}}
tools:
  - {name: t1}
  - {name: t2}
workflows:
  - name: w
    initiator: aa
    protocol: MCP
    arrivals: {times: [0]}
    tasks:
      - {id: x, tool: t1, capability: search}
      - {id: y, tool: t3, after: [x, z]}
"""


def test_a_task_with_a_bad_form_does_not_hide_its_workflow_s_errors(tmp_path: Path) -> None:
    """A task naming both a tool and a capability failed TaskSpec's validator, which made
    its workflow unusable in the salvage: the unknown initiator and the other task's
    unknown tool were not reported. The dropped task's id still counts as declared."""
    got = errors(tmp_path, TASKS)
    assert [(line, field) for line, field, _ in got] == [
        (13, "workflows[0].initiator"),
        (17, "workflows[0].tasks[0].capability"),
        (18, "workflows[0].tasks[1].tool"),
        (18, "workflows[0].tasks[1].after[1]"),
    ], got
    assert got[0][2].startswith("unknown agent 'aa'")
    assert got[2][2].startswith("unknown tool 't3'")
    assert got[3][2].startswith("unknown task 'z'")
