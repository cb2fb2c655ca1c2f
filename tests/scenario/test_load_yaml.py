"""Loading scenario files that use YAML's own features (anchors, aliases, merge keys, bare
``off``, dumped dicts) and large files: each error still located at its line, column and
field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from sim.scenario import load_scenario, load_scenario_with_warnings
from tests.harness.scenario_load import (
    MINIMAL,
    assert_diag,
    broken,
    only_error,
)


def test_anchors_aliases_and_merge_keys(tmp_path: Path) -> None:
    text = broken(
        (
            "agents:\n",
            "x-gateway: &gateway {type: GATEWAY, protocols: {MCP: 1.0, A2A: 1.0}}\nagents:\n",
        ),
        (
            "  - id: gw\n    type: GATEWAY\n    protocols: {MCP: 1.0, A2A: 1.0}\n",
            "  - {<<: *gateway, id: gw}\n  - <<: *gateway\n    id: gw2\n    type: COORDINATOR\n",
        ),
        ("latency: {MCP: 0.01, A2A: 0.02}", "latency: &fast {MCP: 0.01, A2A: 0.02}"),
        (
            "  - between: [gw, server]",
            "  - {between: [planner, gw2], latency: *fast}\n  - between: [gw, server]",
        ),
    )
    path = tmp_path / "anchors.yaml"
    path.write_text(text, encoding="utf-8")
    scenario, warnings = load_scenario_with_warnings(path)
    assert warnings == []
    gw, gw2 = scenario.agent("gw"), scenario.agent("gw2")
    assert gw.type.value == "GATEWAY" and gw2.type.value == "COORDINATOR"  # own key wins
    assert gw.protocols == gw2.protocols == {"MCP": 1.0, "A2A": 1.0}
    assert scenario.links[1].latency == {"MCP": 0.01, "A2A": 0.02}


def test_error_inside_merged_anchor_points_at_the_anchor(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        name: merged
        protocols: [MCP]
        x-defaults: &defaults
          type: LLM_AGENT
          protocols: {MCP: 7}
        agents:
          - <<: *defaults
            id: a
        """
    )
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, 5, 20, "agents[0].protocols.MCP", "must be ≤ 1", "got 7")


def test_duplicate_key_next_to_merge_is_still_an_error(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        name: merged
        protocols: [MCP]
        agents:
          - &a {id: a, type: LLM_AGENT, protocols: {MCP: 1}}
          - <<: *a
            id: b
            id: c
        """
    )
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, 7, 5, "agents[1].id", "duplicate key 'id'", "line 6")


def test_bare_off_is_the_trace_level_not_false(tmp_path: Path) -> None:
    path = tmp_path / "off.yaml"
    path.write_text(broken(("duration: 100\n", "duration: 100\ntrace: off\n")), encoding="utf-8")
    assert load_scenario(path).trace.value == "off"


def test_dumped_dict_line_found_by_search(tmp_path: Path) -> None:
    data = yaml.safe_load(MINIMAL)
    data["tools"][1]["errors"] = {"Timeout": 2.5}
    text = yaml.safe_dump(data, sort_keys=False)
    line = text.splitlines().index("    Timeout: 2.5") + 1
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, line, 14, "tools[1].errors.Timeout", "must be ≤ 1", "got 2.5")


def _large_scenario(n_agents: int) -> str:
    servers = n_agents // 4
    lines = ["name: large", "protocols: [MCP, A2A]", "agents:"]
    lines += ["  - {id: hub, type: GATEWAY, protocols: {MCP: 1.0, A2A: 1.0}}"]
    for i in range(n_agents - 1):
        if i < servers:
            lines.append(
                f"  - {{id: s{i}, type: TOOL_SERVER, protocols: {{MCP: 1.0}}, tools: [t{i}]}}"
            )
        else:
            lines.append(f"  - {{id: a{i}, type: LLM_AGENT, protocols: {{MCP: 1.0, A2A: 0.5}}}}")
    lines.append("links:")
    for i in range(n_agents - 1):
        end, lat = (f"s{i}", "{MCP: 0.01}") if i < servers else (f"a{i}", "{MCP: 0.01, A2A: 0.02}")
        lines.append(f"  - {{between: [hub, {end}], latency: {lat}}}")
    lines.append("tools:")
    lines += [f"  - {{name: t{i}, side_effects: read}}" for i in range(servers)]
    lines.append("workflows:")
    for i in range(servers, servers + 50):
        lines.append(
            f"  - {{name: w{i}, initiator: a{i}, protocol: MCP, arrivals: {{times: [0]}}, "
            f"tasks: [{{id: x, tool: t{i - servers}}}, {{id: y, tool: t{i - servers + 1}, "
            "after: [x]}]}"
        )
    return "\n".join(lines) + "\n"


def test_large_scenario_loads(tmp_path: Path) -> None:
    path = tmp_path / "large.yaml"
    path.write_text(_large_scenario(2000), encoding="utf-8")
    scenario, warnings = load_scenario_with_warnings(path)
    assert len(scenario.agents) == 2000 and len(scenario.links) == 1999
    assert warnings == []


def test_large_scenario_with_one_error_is_located(tmp_path: Path) -> None:
    text = _large_scenario(2000).replace(
        "{id: a1500, type: LLM_AGENT", "{id: a1500, type: LLM_AGNT"
    )
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "id: a1500," in row)
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, line, 23, "agents[1501].type", "did you mean 'LLM_AGENT'?")
