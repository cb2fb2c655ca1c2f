"""``verify`` writes each counterexample to ``<base>/<workflow>/<router>/<property>.jsonl``;
a workflow's name is free text, so ``../../escape`` wrote outside the results folder (and
``a/b`` nested a folder the report's reader does not expect). The name is now one path
component (percent-encoded where it must be), and the report's reader decodes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cli import main
from sim.view.violations import from_verify

SCENARIO = """\
name: odd-names
protocols: [MCP+]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: b, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [t]}
links:
  - {between: [a, b], latency: {MCP+: 0.01}}
tools:
  - {name: t, side_effects: read, errors: {Boom: 0.5}}
workflows:
  - name: "@NAME@"
    initiator: a
    protocol: MCP+
    arrivals: {times: [0]}
    tasks: [{id: x, tool: t}]
properties:
  - {name: done, scope: instance, formula: "F result(t)"}
"""


@pytest.mark.parametrize("name", ["../../escape", "a/b", "..", "100%"])
def test_a_counterexample_stays_in_its_folder_under_one_component(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    scenario = tmp_path / "work" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(SCENARIO.replace("@NAME@", name), encoding="utf-8")
    results = tmp_path / "work" / "results"
    base = results / "verify"
    code = main(
        ["verify", str(scenario), "--property", "done", "--json", "--counterexamples", str(base)]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    written = Path(out["properties"][0]["counterexample"])
    assert written.parent.parent.parent == base, written
    assert written.is_file() and written.parent.name == "dijkstra"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert [g["workflow"] for g in from_verify(results)] == [name]
