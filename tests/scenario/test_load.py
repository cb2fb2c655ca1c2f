"""Loading scenario files: YAML problems and field shapes, each located exactly.

Every bad-input test breaks one thing in ``tests/fixtures/scenarios/minimal.yaml``
(line numbers below refer to that file) and asserts ``file:line:col``, the field path
and the essential words of the message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import ScenarioError, load_scenario, load_scenario_with_warnings
from tests.harness.scenario_load import (
    MINIMAL_FILE,
    assert_diag,
    broken,
    errors_of,
    only_error,
)


def test_minimal_fixture_loads_without_warnings() -> None:
    scenario, warnings = load_scenario_with_warnings(MINIMAL_FILE)
    assert warnings == []
    assert [a.id for a in scenario.agents] == ["planner", "gw", "server"]


# --- the file itself -----------------------------------------------------------------------


def test_missing_file_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    (diag,) = info.value.errors
    assert_diag(diag, str(path), 1, 1, "<root>", "cannot read", "No such file")


def test_non_utf8_bytes(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, b"name: caf\xe9\n")
    assert_diag(diag, file, 1, 1, "<root>", "not UTF-8")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, 1, 1, "<root>", "empty", "mapping")


@pytest.mark.parametrize(
    ("text", "line", "kind"),
    [
        ("- a\n- b\n", 1, "not a list"),
        ("\n\njust words\n", 3, "not a string"),
        ("42\n", 1, "number"),
    ],
)
def test_document_that_is_not_a_mapping(tmp_path: Path, text: str, line: int, kind: str) -> None:
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, line, 1, "<root>", "a scenario is a mapping", kind)


def test_tab_indentation(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("    type: GATEWAY", "\ttype: GATEWAY")))
    assert_diag(diag, file, 11, 1, "<root>", "malformed YAML", "'\\t'", "spaces, not tabs")


def test_bad_indentation(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("    type: GATEWAY", "   type: GATEWAY")))
    assert_diag(diag, file, 11, 4, "<root>", "malformed YAML", "check the indentation")


def test_unclosed_bracket_names_where_it_opened(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("tools: [lookup, store]", "tools: [lookup, store")))
    # The parser notices at `links:` on line 17; the message points back at the '['.
    assert_diag(
        diag, file, 17, 6, "<root>", "malformed YAML", "flow sequence", "line 16, column 12"
    )


def test_duplicate_top_level_key(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("duration: 100\n", "duration: 100\nduration: 9\n")))
    assert_diag(diag, file, 5, 1, "duration", "duplicate key 'duration'", "line 4")


def test_duplicate_nested_key(tmp_path: Path) -> None:
    text = broken(("    type: GATEWAY\n", "    type: GATEWAY\n    type: COORDINATOR\n"))
    file, diag = only_error(tmp_path, text)
    assert_diag(diag, file, 12, 5, "agents[1].type", "duplicate key 'type'", "line 11")


# --- unknown keys --------------------------------------------------------------------------


def test_unknown_top_level_key_did_you_mean(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("agents:", "agnets:")))
    # One error, not also "missing agents" nor every reference to an agent.
    assert_diag(diag, file, 6, 1, "agnets", "unknown key 'agnets'", "did you mean 'agents'?")


def test_unknown_nested_key_did_you_mean(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("latency: {MCP: 0.005}", "latncy: {MCP: 0.005}")))
    assert_diag(diag, file, 21, 5, "links[1].latncy", "unknown key 'latncy'", "'latency'")


def test_unknown_key_without_close_match_lists_allowed(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("duration: 100\n", "duration: 100\ncolour: red\n")))
    assert_diag(diag, file, 5, 1, "colour", "unknown key 'colour'", "allowed:", "agents")


def test_missing_required_field(tmp_path: Path) -> None:
    file, diag = only_error(tmp_path, broken(("name: mini\n", "")))
    # Reported at the start of the mapping that lacks it (line 3 once name is gone).
    assert_diag(diag, file, 3, 1, "name", "missing required field 'name'")


# --- field shapes ----------------------------------------------------------------------------

TOOL_LINE = "  - name: lookup\n"  # line 23: extra lines for `lookup` go on line 25
TOOL_LINE_AFTER = "  - name: lookup\n    side_effects: read\n"


def tool_extra(line: str) -> tuple[str, str]:
    """An edit that adds ``line`` to tool `lookup` (it lands on line 25)."""
    return (TOOL_LINE_AFTER, f"{TOOL_LINE_AFTER}{line}\n")


@pytest.mark.parametrize(
    ("edit", "where", "words"),
    [
        pytest.param(
            ("duration: 100\n", "duration: 100\napproval: {grant_probability: 1.5}\n"),
            "5:31: approval.grant_probability",
            ["must be ≤ 1", "got 1.5"],
            id="grant-probability-1.5",
        ),
        pytest.param(
            tool_extra("    errors: {ServiceDown: 1.5}"),
            "25:27: tools[0].errors.ServiceDown",
            ["must be ≤ 1", "got 1.5"],
            id="error-probability-1.5",
        ),
        pytest.param(
            ("latency: {MCP: 0.005}", "latency: {MCP: -0.1}"),
            "21:20: links[1].latency.MCP",
            ["must be ≥ 0", "got -0.1"],
            id="negative-latency",
        ),
        pytest.param(
            ("latency: {MCP: 0.005}\n", "latency: {MCP: 0.005}\n    jitter: -0.5\n"),
            "22:13: links[1].jitter",
            ["must be ≥ 0", "got -0.5"],
            id="negative-jitter",
        ),
        pytest.param(
            ("protocols: {MCP: 1.0}\n", "protocols: {MCP: 0}\n"),
            "15:22: agents[2].protocols.MCP",
            ["must be > 0", "got 0"],
            id="affinity-0",
        ),
        pytest.param(
            ("protocols: {MCP: 1.0}\n", "protocols: {MCP: 1.2}\n"),
            "15:22: agents[2].protocols.MCP",
            ["must be ≤ 1", "got 1.2"],
            id="affinity-1.2",
        ),
        pytest.param(
            ("protocols: {MCP: 1.0}\n", "protocols: {}\n"),
            "15:16: agents[2].protocols",
            ["at least 1 entry"],
            id="agent-speaks-nothing",
        ),
        pytest.param(
            ("duration: 100", "duration: -5"),
            "4:11: duration",
            ["must be > 0", "got -5"],
            id="negative-duration",
        ),
        pytest.param(
            ("duration: 100", "duration: soon"),
            "4:11: duration",
            ["must be a number", "'soon'"],
            id="duration-not-a-number",
        ),
        pytest.param(
            ("{node: gw, at: 50, for: 5}", "{node: gw, at: -1, for: 5}"),
            "39:20: failures[0].at",
            ["must be ≥ 0", "got -1"],
            id="negative-outage-start",
        ),
        pytest.param(
            ("name: mini", "name: Mini_Mesh"),
            "3:7: name",
            ["[a-z0-9-]+", "'Mini_Mesh'"],
            id="name-pattern",
        ),
        pytest.param(
            ("duration: 100\n", "duration: 100\nrouters: [dijkstra, resiliant]\n"),
            "5:21: routers[1]",
            ["must be one of", "bfs", "did you mean 'resilient'?"],
            id="unknown-router",
        ),
        pytest.param(
            ("type: GATEWAY", "type: GATEWY"),
            "11:11: agents[1].type",
            ["TOOL_SERVER", "did you mean 'GATEWAY'?"],
            id="unknown-agent-type",
        ),
        pytest.param(
            tool_extra("    side_effect: write"),
            "25:5: tools[0].side_effect",
            ["did you mean 'side_effects'?"],
            id="misspelt-tool-key",
        ),
        pytest.param(
            ("protocols: [MCP, A2A]", "protocols: MCP"),
            "5:12: protocols",
            ["must be a list", "not a string"],
            id="protocols-not-a-list",
        ),
        pytest.param(
            ("between: [gw, server]", "between: [gw, server, planner]"),
            "20:14: links[1].between",
            ["at most 2 items", "got 3"],
            id="link-with-three-ends",
        ),
        pytest.param(
            tool_extra("    failure_modes: [{error: E, recovery: {retry: 2, abort: true}}]"),
            "25:60: tools[0].failure_modes[0].recovery.abort",
            ["exactly one of retry, fallback, prompt, abort", "got retry, abort"],
            id="recovery-with-two-strategies",
        ),
        pytest.param(
            tool_extra("    failure_modes: [{error: E, recovery: {}}]"),
            "25:42: tools[0].failure_modes[0].recovery",
            ["exactly one of", "got none"],
            id="recovery-with-no-strategy",
        ),
        pytest.param(
            tool_extra("    service_time: {dist: exponential}"),
            "25:26: tools[0].service_time.dist",
            ["an exponential distribution takes mean", "missing: mean"],
            id="distribution-missing-parameter",
        ),
        pytest.param(
            tool_extra("    service_time: {dist: exponential, median: 1}"),
            "25:47: tools[0].service_time.median",
            ["takes mean, not median", "missing: mean"],
            id="distribution-wrong-parameter",
        ),
        pytest.param(
            tool_extra("    service_time: {dist: gauss, mean: 1}"),
            "25:26: tools[0].service_time.dist",
            ["must be one of constant", "'gauss'"],
            id="distribution-unknown-family",
        ),
        pytest.param(
            tool_extra("    service_time: {dist: uniform, low: 2, high: 1}"),
            "25:40: tools[0].service_time.low",
            ["low (2) must not be above high (1)"],
            id="uniform-low-above-high",
        ),
        pytest.param(
            tool_extra("    service_time: {dist: lognormal, median: -1, sigma: 0.5}"),
            "25:45: tools[0].service_time.median",
            ["must be ≥ 0", "got -1"],
            id="negative-median",
        ),
        pytest.param(
            tool_extra("    errors: {ServiceDown: 0.6, NotFound: 0.5}"),
            "25:13: tools[0].errors",
            ["sum to 1.1", "at most 1"],
            id="error-probabilities-sum-over-1",
        ),
        pytest.param(
            ("{times: [0, 10]}", "{times: [0, 10], process: poisson, rate: 1}"),
            "34:41: workflows[0].arrivals.process",
            ["either times or", "not both"],
            id="arrivals-times-and-process",
        ),
        pytest.param(
            ("{times: [0, 10]}", "{times: [10, 5]}"),
            "34:28: workflows[0].arrivals.times[1]",
            ["non-decreasing", "5 s comes after 10 s"],
            id="arrivals-decreasing",
        ),
        pytest.param(
            ("{times: [0, 10]}", "{process: poisson}"),
            "34:15: workflows[0].arrivals.rate",
            ["process: poisson, rate"],
            id="arrivals-poisson-without-rate",
        ),
        pytest.param(
            ("{id: a, tool: lookup}", "{id: a, tool: lookup, capability: search}"),
            "36:43: workflows[0].tasks[0].capability",
            ["exactly one of tool or capability"],
            id="task-with-tool-and-capability",
        ),
        pytest.param(
            ("{id: a, tool: lookup}", "{id: a}"),
            "36:9: workflows[0].tasks[0]",
            ["a tool or a capability", "neither"],
            id="task-with-neither",
        ),
        pytest.param(
            ("{node: gw, at: 50, for: 5}", "{node: gw, at: 50}"),
            "39:5: failures[0]",
            ["needs `at` and `for`"],
            id="outage-without-length",
        ),
        pytest.param(
            ("{node: gw, at: 50, for: 5}", "{random: {nodes: [gw], mtbf: 0, mttr: 1}}"),
            "39:34: failures[0].random.mtbf",
            ["must be > 0"],
            id="random-failure-zero-mtbf",
        ),
    ],
)
def test_bad_field(tmp_path: Path, edit: tuple[str, str], where: str, words: list[str]) -> None:
    """``where`` is ``line:col: field``."""
    file, diag = only_error(tmp_path, broken(edit))
    location, field = where.split(": ")
    line, col = map(int, location.split(":"))
    assert_diag(diag, file, line, col, field, *words)


def test_agent_that_is_a_scalar(tmp_path: Path) -> None:
    text = broken(
        ("  - id: gw\n    type: GATEWAY\n    protocols: {MCP: 1.0, A2A: 1.0}\n", "  - gw\n")
    )
    file, errors = errors_of(tmp_path, text)
    assert_diag(errors[0], file, 10, 5, "agents[1]", "must be a mapping of fields", "'gw'")


# --- every error, not just the first -------------------------------------------------------


def test_three_independent_errors_are_all_reported(tmp_path: Path) -> None:
    text = broken(
        ("latency: {MCP: 0.005}", "latency: {MCP: -1}"),
        ("{id: a, tool: lookup}", "{id: a, tool: lokup}"),
        ("duration: 100\n", "duration: 100\napproval: {grant_probability: 1.5}\n"),
    )
    file, errors = errors_of(tmp_path, text)
    assert [str(e) for e in errors] == [
        f"{file}:5:31: approval.grant_probability: must be ≤ 1 (got 1.5)",
        f"{file}:22:20: links[1].latency.MCP: must be ≥ 0 (got -1)",
        f"{file}:37:23: workflows[0].tasks[0].tool: unknown tool 'lokup' (did you mean 'lookup'?)",
    ]


def test_scenario_error_message_lists_every_error(tmp_path: Path) -> None:
    text = broken(("duration: 100", "duration: -1"), ("type: GATEWAY", "type: GW"))
    file, errors = errors_of(tmp_path, text)
    assert len(errors) == 2
    with pytest.raises(ScenarioError) as info:
        load_scenario(file)
    assert str(info.value).splitlines() == [str(e) for e in errors]
