"""A ``topology:`` block with errors of its own is not generated, and the references to
the agents it would have made are not checked: that holds too when the block's error is
in a required field (a misspelt ``generator``), which the salvage cannot keep at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import ScenarioError, load_scenario

SCENARIO = """\
name: bad-topology
protocols: [MCP]
agents:
  - {{id: boss, type: LLM_AGENT, protocols: {{MCP: 1.0}}}}
topology:
  generator: {generator}
  agents: {agents}
  protocols: {{MCP: 1.0}}
  types: {{LLM_AGENT: 0.5, TOOL_SERVER: 0.5}}
  tools: [{{name: search, replicas: 2}}]
  attach: [{{agent: boss, links: 1}}]
tools:
  - {{name: search, side_effects: read}}
workflows:
  - name: w
    initiator: boss
    protocol: MCP
    arrivals: {{times: [0]}}
    tasks: [{{id: s, tool: search}}]
"""


@pytest.mark.parametrize(
    ("generator", "agents", "field"),
    [
        ("barabasi_albrt", "20", "topology.generator"),
        ("barabasi_albert", "0", "topology.agents"),
    ],
)
def test_a_topology_error_is_the_only_error(
    tmp_path: Path, generator: str, agents: str, field: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(generator=generator, agents=agents), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    errors = [(d.field, d.message) for d in caught.value.errors]
    assert [f for f, _ in errors] == [field], errors
    assert not [w for w in caught.value.warnings if "hosted by no agent" in w.message]
