"""Cross-field rules of SPEC §1 and the warnings, each located exactly.

Every test breaks one thing in ``tests/fixtures/scenarios/minimal.yaml`` (line
numbers refer to that file) and asserts ``line:col: field`` and the message's words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.scenario_rules import MINIMAL, TASK_WARNINGS, broken, check, load

PLUS_SGD = ("protocols: [MCP, A2A]", "protocols: [MCP, A2A, SGD]")
TRANSLATIONS = "translations:\n  - "  # appended after the last line (39): the rule is on line 41


@pytest.mark.parametrize(
    ("edits", "append", "where", "words"),
    [
        pytest.param(
            [("between: [gw, server]", "between: [gw, servr]")],
            "",
            "20:19: links[1].between[1]",
            ["unknown agent 'servr'", "did you mean 'server'?"],
            id="link-unknown-agent",
        ),
        pytest.param(
            [("latency: {MCP: 0.005}", "latency: {MCP: 0.005, A2A: 0.01}")],
            "",
            "21:27: links[1].latency.A2A",
            ["agent 'server' does not speak A2A", "it speaks MCP"],
            id="link-protocol-not-spoken",
        ),
        pytest.param(
            [("latency: {MCP: 0.005}", "latency: {MCP: 0.005, ANP: 0.01}")],
            "",
            "21:27: links[1].latency.ANP",
            ["unknown protocol 'ANP'", "declared: A2A, MCP"],
            id="link-unknown-protocol",
        ),
        pytest.param(
            [("protocols: {MCP: 1.0}\n", "protocols: {MCP: 1.0, SGD: 0.5}\n")],
            "",
            "15:27: agents[2].protocols.SGD",
            ["unknown protocol 'SGD'", "listed in `protocols:`"],
            id="agent-unknown-protocol",
        ),
        pytest.param(
            [("protocols: [MCP, A2A]", "protocols: [MCP, A2A, XYZ]")],
            "",
            "5:23: protocols[2].name",
            ["'XYZ' is not built in", "`fields:`"],
            id="user-protocol-without-fields",
        ),
        pytest.param(
            [
                (
                    "    tools: [lookup, store]\n",
                    "    tools: [lookup, store]\n"
                    "  - {id: gw, type: GATEWAY, protocols: {MCP: 1.0}}\n",
                )
            ],
            "",
            "17:10: agents[3].id",
            ["duplicate id 'gw'", "first at line 10"],
            id="duplicate-agent-id",
        ),
        pytest.param(
            [("workflows:\n", "  - name: lookup\nworkflows:\n")],
            "",
            "30:11: tools[2].name",
            ["duplicate name 'lookup'", "first at line 23"],
            id="duplicate-tool-name",
        ),
        pytest.param(
            [("after: [a]}\n", "after: [a]}\n      - {id: a, tool: store}\n")],
            "",
            "38:14: workflows[0].tasks[2].id",
            ["duplicate id 'a'", "first at line 36"],
            id="duplicate-task-id",
        ),
        pytest.param(
            [("{id: a, tool: lookup}", "{id: a, tool: lookup, after: [a]}")],
            "",
            "36:39: workflows[0].tasks[0].after[0]",
            ["cannot come after itself"],
            id="task-after-itself",
        ),
        pytest.param(
            [("after: [a]", "after: [x]")],
            "",
            "37:38: workflows[0].tasks[1].after[0]",
            ["unknown task 'x'", "declared: a, b"],
            id="after-unknown-task",
        ),
        pytest.param(
            [("{id: a, tool: lookup}", "{id: a, tool: lokup}")],
            "",
            "36:23: workflows[0].tasks[0].tool",
            ["unknown tool 'lokup'", "did you mean 'lookup'?"],
            id="task-unknown-tool",
        ),
        pytest.param(
            [
                (
                    "side_effects: read\n",
                    "side_effects: read\n"
                    "    failure_modes: [{error: E, recovery: {fallback: cache}}]\n",
                ),
            ],
            "",
            "25:53: tools[0].failure_modes[0].recovery.fallback",
            ["unknown fallback tool 'cache'", "declared: lookup, store"],
            id="fallback-unknown-tool",
        ),
        pytest.param(
            [
                (
                    "side_effects: read\n",
                    "side_effects: read\n"
                    "    failure_modes: [{error: E, recovery: {retry: 1}}, "
                    "{error: E, recovery: {abort: true}}]\n",
                ),
            ],
            "",
            "25:63: tools[0].failure_modes[1].error",
            ["error 'E' already has a recovery", "first at line 25"],
            id="two-recoveries-for-one-error",
        ),
        pytest.param(
            [("{tool: lookup, relation: Requires}", "{tool: lookkup, relation: Requires}")],
            "",
            "29:16: tools[1].dependencies[0].tool",
            ["unknown tool 'lookkup'", "did you mean 'lookup'?"],
            id="dependency-unknown-tool",
        ),
        pytest.param(
            [("{tool: lookup, relation: Requires}", "{tool: store, relation: Requires}")],
            "",
            "29:16: tools[1].dependencies[0].tool",
            ["cannot depend on itself"],
            id="dependency-on-itself",
        ),
        pytest.param(
            [
                (
                    "side_effects: read\n",
                    "side_effects: read\n"
                    "    dependencies: [{tool: store, relation: ProducesInputFor}]\n",
                ),
            ],
            "",
            "25:19: tools[0].dependencies",
            ["tool dependencies form a cycle: lookup -> store -> lookup"],
            id="requires-cycle",
        ),
        pytest.param(
            [PLUS_SGD, ("    protocol: MCP\n", "    protocol: SGD\n")],
            "",
            "33:15: workflows[0].protocol",
            ["initiator 'planner' does not speak SGD", "it speaks A2A, MCP"],
            id="workflow-protocol-not-spoken",
        ),
        pytest.param(
            [PLUS_SGD, ("{id: a, tool: lookup}", "{id: a, tool: lookup, protocol: SGD}")],
            "",
            "36:41: workflows[0].tasks[0].protocol",
            ["initiator 'planner' does not speak SGD"],
            id="task-protocol-not-spoken",
        ),
        pytest.param(
            [("initiator: planner", "initiator: planer")],
            "",
            "32:16: workflows[0].initiator",
            ["unknown agent 'planer'", "did you mean 'planner'?"],
            id="workflow-unknown-initiator",
        ),
        pytest.param(
            [("{node: gw, at: 50, for: 5}", "{node: gww, at: 50, for: 5}")],
            "",
            "39:12: failures[0].node",
            ["unknown agent 'gww'", "did you mean 'gw'?"],
            id="failure-unknown-node",
        ),
        pytest.param(
            [("{node: gw, at: 50, for: 5}", "{link: [planner, server], at: 50, for: 5}")],
            "",
            "39:12: failures[0].link",
            ["no link between 'planner' and 'server'"],
            id="failure-link-does-not-exist",
        ),
        pytest.param(
            [("{node: gw, at: 50, for: 5}", "{link: [planner, sever], at: 50, for: 5}")],
            "",
            "39:22: failures[0].link[1]",
            ["unknown agent 'sever'", "did you mean 'server'?"],
            id="failure-link-unknown-agent",
        ),
        pytest.param(
            [("{node: gw, at: 50, for: 5}", "{random: {mtbf: 10, mttr: 1}}")],
            "",
            "39:14: failures[0].random",
            ["random failures need nodes or links"],
            id="random-failures-without-targets",
        ),
        pytest.param(
            [("{node: gw, at: 50, for: 5}", "{random: {nodes: [gw, hub], mtbf: 10, mttr: 1}}")],
            "",
            "39:27: failures[0].random.nodes[1]",
            ["unknown agent 'hub'"],
            id="random-failure-unknown-node",
        ),
        pytest.param(
            [("duration: 100\n", "duration: 100\nrouters: [dijkstra, bfs, dijkstra]\n")],
            "",
            "5:26: routers[2]",
            ["router 'dijkstra' is listed twice"],
            id="router-listed-twice",
        ),
        pytest.param(
            [
                (
                    "    latency: {MCP: 0.005}\n",
                    "    latency: {MCP: 0.005}\n  - {between: [server, gw], latency: {MCP: 0.1}}\n",
                )
            ],
            "",
            "22:15: links[2].between",
            ["duplicate link between 'server' and 'gw'", "first at line 20"],
            id="duplicate-link",
        ),
        pytest.param(
            [("between: [gw, server]", "between: [gw, gw]")],
            "",
            "20:14: links[1].between",
            ["two different agents", "'gw' twice"],
            id="link-to-itself",
        ),
        pytest.param(
            [
                (
                    "    protocols: {MCP: 1.0, A2A: 1.0}\n",
                    "    protocols: {MCP: 1.0, A2A: 1.0}\n    tools: [lookup]\n",
                )
            ],
            "",
            "13:12: agents[1].tools",
            ["'gw' is a GATEWAY but hosts tools", "only TOOL_SERVER"],
            id="gateway-hosts-tools",
        ),
        pytest.param(
            [],
            TRANSLATIONS + "{from: MCP, to: ANPP}\n",
            "41:21: translations[0].to",
            ["unknown protocol 'ANPP'", "declared: A2A, MCP"],
            id="translation-unknown-protocol",
        ),
        pytest.param(
            [],
            TRANSLATIONS + "{from: MCP, to: MCP}\n",
            "41:21: translations[0].to",
            ["two different protocols", "MCP → MCP"],
            id="translation-to-itself",
        ),
        pytest.param(
            [],
            TRANSLATIONS + "{from: MCP, to: A2A, fail: 0.1}\n",
            "41:32: translations[0].fail",
            ["`fail` needs `destructive: true`"],
            id="fail-without-destructive",
        ),
        pytest.param(
            [],
            TRANSLATIONS + "{from: MCP, to: A2A, fail: 1.5, destructive: true}\n",
            "41:32: translations[0].fail",
            ["must be ≤ 1", "got 1.5"],
            id="fail-probability-1.5",
        ),
        pytest.param(
            [],
            TRANSLATIONS
            + "{from: MCP, to: A2A, loss: 0.1}\n  - {from: MCP, to: A2A, allowed: false}\n",
            "42:21: translations[1].to",
            ["duplicate", "MCP -> A2A", "first at line 41"],
            id="translation-pair-twice",
        ),
    ],
)
def test_rule(
    tmp_path: Path, edits: list[tuple[str, str]], append: str, where: str, words: list[str]
) -> None:
    file, errors, _ = load(tmp_path, broken(*edits, append=append))
    assert len(errors) == 1, "\n".join(map(str, errors))
    check(errors[0], file, where, *words)


def test_task_tool_hosted_by_nobody(tmp_path: Path) -> None:
    file, errors, warnings = load(tmp_path, broken(("tools: [lookup, store]", "tools: [lookup]")))
    assert len(errors) == 1
    check(errors[0], file, "37:23: workflows[0].tasks[1].tool", "'store' is hosted by no agent")
    assert len(warnings) == 1
    check(warnings[0], file, "25:11: tools[1].name", "'store' is hosted by no agent")
    assert str(warnings[0]).startswith(f"{file}:25:11: warning: tools[1].name: ")


def test_invalid_agent_does_not_cascade(tmp_path: Path) -> None:
    # The server's own error is enough: its tools and protocols still count as declared.
    text = broken(("protocols: {MCP: 1.0}\n    tools", "protocols: {MCP: 2.0}\n    tools"))
    file, errors, warnings = load(tmp_path, text)
    assert [str(e) for e in errors] == [
        f"{file}:15:22: agents[2].protocols.MCP: must be ≤ 1 (got 2.0)"
    ]
    assert warnings == []


def test_user_protocol_with_fields_is_fine(tmp_path: Path) -> None:
    text = broken(("protocols: [MCP, A2A]", "protocols: [MCP, A2A, {name: XYZ, fields: [name]}]"))
    assert load(tmp_path, text)[1:] == ([], [])


# --- warnings ----------------------------------------------------------------------------------


def test_write_tool_without_requires_approval_warns(tmp_path: Path) -> None:
    file, errors, warnings = load(tmp_path, broken(("    requires_approval: true\n", "")))
    assert errors == [] and len(warnings) == 1
    check(warnings[0], file, "25:5: tools[1].requires_approval", "write tool", "P2")
    assert warnings[0].severity == "warning"


def test_delete_tool_without_requires_approval_warns(tmp_path: Path) -> None:
    text = broken(
        (
            "    side_effects: write\n    requires_approval: true\n",
            "    side_effects: delete\n    requires_approval: false\n",
        )
    )
    file, errors, warnings = load(tmp_path, text)
    assert errors == [] and len(warnings) == 1
    check(warnings[0], file, "27:24: tools[1].requires_approval", "delete tool", "WriteApproval")


def test_tool_hosted_by_nobody_warns(tmp_path: Path) -> None:
    text = broken(("workflows:\n", "  - name: spare\nworkflows:\n"))
    file, errors, warnings = load(tmp_path, text)
    assert errors == [] and len(warnings) == 1
    check(warnings[0], file, "30:11: tools[2].name", "'spare' is hosted by no agent")


def test_outage_after_duration_warns(tmp_path: Path) -> None:
    text = broken(("{node: gw, at: 50, for: 5}", "{node: gw, at: 500, for: 5}"))
    file, errors, warnings = load(tmp_path, text)
    assert errors == [] and len(warnings) == 1
    check(warnings[0], file, "39:20: failures[0].at", "starts at 500 s", "duration (100 s)")


def test_warnings_travel_with_errors(tmp_path: Path) -> None:
    text = broken(("    requires_approval: true\n", ""), ("duration: 100", "duration: 0"))
    file, errors, warnings = load(tmp_path, text)
    check(errors[0], file, "4:11: duration", "must be > 0")
    check(warnings[0], file, "25:5: tools[1].requires_approval", "P2")


LABEL_UNSAFE = """\
name: lab
protocols: [MCP+]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP+: 1}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP+: 1}, tools: ["book train"]}
links: [{between: [a, s], latency: {MCP+: 0.01}}]
tools:
  - name: book train
    input_schema: {type: object, required: ["from city"]}
    errors: {"Service Down": 0.1}
    failure_modes: [{error: "Not,Found", recovery: {abort: true}}]
"""


def test_names_that_become_label_arguments_must_be_label_safe(tmp_path: Path) -> None:
    file, errors, _ = load(tmp_path, LABEL_UNSAFE)
    assert len(errors) == 4
    check(errors[0], file, "8:11: tools[0].name", "'book train'", "trace labels")
    check(errors[1], file, "9:45: tools[0].input_schema.required[0]", "'from city'")
    check(errors[2], file, "10:14: tools[0].errors.Service Down", "'Service Down'")
    check(errors[3], file, "11:29: tools[0].failure_modes[0].error", "'Not,Found'")


LINK_WITH_TWO_MISTAKES = """\
name: two
protocols: [MCP]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1}}
  - {id: b, type: TOOL_SERVER, protocols: {MCP: 1}}
links:
  - {between: [a, bb], latency: {MCP: -0.1}}
"""


def test_a_link_with_a_bad_latency_still_has_its_ends_checked(tmp_path: Path) -> None:
    file, errors, _ = load(tmp_path, LINK_WITH_TWO_MISTAKES)
    assert len(errors) == 2
    check(errors[0], file, "7:19: links[0].between[1]", "unknown agent 'bb'", "'b'")
    check(errors[1], file, "7:39: links[0].latency.MCP", "≥ 0", "-0.1")


@pytest.mark.parametrize(
    ("edit", "where", "words"),
    [
        ("duration: true", "2:11: duration", ["not the boolean true"]),
        ("duration: .inf", "2:11: duration", ["finite"]),
        ("seed: yes", "2:7: seed", ["not the boolean true"]),
    ],
)
def test_booleans_and_infinities_are_not_numbers(
    tmp_path: Path, edit: str, where: str, words: list[str]
) -> None:
    text = TASK_WARNINGS.replace("name: warn\n", f"name: warn\n{edit}\n")
    file, errors, _ = load(tmp_path, text)
    assert len(errors) == 1
    check(errors[0], file, where, *words)


def test_a_scenario_without_tools_declares_none(tmp_path: Path) -> None:
    """An absent ``tools:`` is an empty one (the fuzzer's ``large_mesh.yaml:delete:2059``:
    validated, then every replication failed with KeyError): each tool named is unknown,
    where it is named."""
    start, end = MINIMAL.index("tools:\n  - name: lookup"), MINIMAL.index("workflows:")
    file, errors, _ = load(tmp_path, MINIMAL[:start] + MINIMAL[end:])
    assert [str(e).split(": ", 1)[1] for e in errors] == [
        "agents[2].tools[0]: unknown tool 'lookup' (none declared)",
        "agents[2].tools[1]: unknown tool 'store' (none declared)",
        "workflows[0].tasks[0].tool: unknown tool 'lookup' (none declared)",
        "workflows[0].tasks[1].tool: unknown tool 'store' (none declared)",
    ]
    check(errors[2], file, "28:23: workflows[0].tasks[0].tool", "unknown tool 'lookup'")
