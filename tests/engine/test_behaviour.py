"""Engine behaviour on tiny scenarios: exact facts read back from trace.jsonl."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.harness.engine_runs import (
    TOOLS,
    WRITE_TASK,
    by_inv,
    direct,
    of,
    one_at_a_time,
    one_sided,
    run,
)


def test_mcp_plus_caller_asks_approval_before_every_write(tmp_path: Path) -> None:
    events, m = run(
        tmp_path, direct("{MCP+: 1.0}", "{MCP+: 1.0}", "{MCP+: 0.01}", tasks=WRITE_TASK)
    )
    executes = of(events, "execute", tool="write_it")
    assert len(executes) == 3
    for inv, evs in by_inv(events).items():
        labels = [e["label"] for e in evs if e["label"] in ("approve", "execute")]
        if "execute" in labels:
            assert labels == ["approve", "execute"], inv
    assert m["approvals"]["asked"] == 3
    assert m["writes_without_approval"] == 0
    assert all(e["detail"]["approved"] is True for e in executes)


def test_plain_mcp_caller_with_policy_never_writes_without_approval(tmp_path: Path) -> None:
    text = direct(
        "{MCP: 1.0}", "{MCP: 1.0}", "{MCP: 0.01}", tasks=WRITE_TASK, approval=", mcp_policy: never"
    )
    events, m = run(tmp_path, text)
    assert of(events, "approve") == [] and of(events, "deny") == []
    assert len(of(events, "execute", tool="write_it")) == 3
    listed = of(events, "list", tool="write_it")
    assert listed[0]["detail"]["approval"] is False
    assert "requires_approval" not in listed[0]["detail"]["fields"]
    assert listed[0]["detail"]["approval_reason"] == "mcp_policy=never"
    assert m["writes_without_approval"] == 3
    assert m["approvals"]["asked"] == 0


def test_plain_mcp_caller_with_policy_hints_asks(tmp_path: Path) -> None:
    text = direct(
        "{MCP: 1.0}", "{MCP: 1.0}", "{MCP: 0.01}", tasks=WRITE_TASK, approval=", mcp_policy: hints"
    )
    events, m = run(tmp_path, text)
    assert len(of(events, "approve")) == 3
    assert m["writes_without_approval"] == 0


def test_denied_approval_cancels_the_task_and_nothing_executes(tmp_path: Path) -> None:
    text = direct("{MCP+: 1.0}", "{MCP+: 1.0}", "{MCP+: 0.01}", tasks=WRITE_TASK)
    text = text.replace("grant_probability: 1.0", "grant_probability: 0.0")
    events, m = run(tmp_path, text)
    assert len(of(events, "deny")) == 3
    assert of(events, "execute") == []
    # the only messages are the one discovery exchange (no request was ever sent)
    assert [e["detail"] for e in of(events, "send")] == [
        {"msg": 0, "kind": "list", "path": ["agent", "srv"], "to": "srv"},
        {"msg": 1, "kind": "list_reply", "path": ["srv", "agent"], "to": "agent"},
    ]
    ends = of(events, "wf_end")
    assert [e["detail"]["status"] for e in ends] == ["cancelled"] * 3
    assert all(e["detail"]["reason"] == "denied" for e in ends)
    # no request was ever sent (only discovery)
    assert {e["detail"]["kind"] for e in of(events, "send")} <= {"list", "list_reply"}
    assert m["workflows"]["cancelled"] == 3


def test_retry_3_retries_at_most_three_times(tmp_path: Path) -> None:
    extra = """
  - name: flaky
    description: Always down.
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 3}}
    errors: {ServiceDown: 1.0}
    service_time: {dist: constant, value: 0.1}
"""
    text = direct(
        "{MCP+: 1.0}",
        "{MCP+: 1.0}",
        "{MCP+: 0.01}",
        extra,
        tasks="      - {id: f, tool: flaky}",
        times="[0, 50]",
    )
    text = text.replace("tools: [read_it, write_it]", "tools: [read_it, write_it, flaky]")
    events, m = run(tmp_path, text)
    calls = of(events, "call", tool="flaky")
    assert len(calls) == 2
    for call in calls:
        evs = [
            e["label"]
            for e in by_inv(events)[call["inv"]]
            if e["label"] in ("call", "validate", "execute", "error", "retry", "abort", "result")
        ]
        assert evs == ["call", "validate"] + ["execute", "error", "retry"] * 3 + [
            "execute",
            "error",
            "abort",
        ]
        retries = of(events, "retry", inv=call["inv"])
        assert [r["detail"]["n"] for r in retries] == [1, 2, 3]
    assert m["recovery"]["retries"] == 6
    assert [e["detail"]["status"] for e in of(events, "wf_end")] == ["failed", "failed"]


def test_fallback_calls_the_fallback_tool(tmp_path: Path) -> None:
    extra = """
  - name: locked
    description: Refuses access.
    failure_modes:
      - {error: AuthError, recovery: {fallback: cached}}
    errors: {AuthError: 1.0}
  - name: cached
    description: Cached copy.
    side_effects: read
"""
    text = direct(
        "{MCP+: 1.0}",
        "{MCP+: 1.0}",
        "{MCP+: 0.01}",
        extra,
        tasks="      - {id: l, tool: locked}",
        times="[0]",
    )
    text = text.replace("tools: [read_it, write_it]", "tools: [read_it, write_it, locked, cached]")
    events, m = run(tmp_path, text)
    (fb,) = of(events, "fallback")
    assert fb["tool"] == "locked" and fb["detail"] == {"error": "AuthError", "to": "cached"}
    (call,) = of(events, "call", tool="cached")
    assert call["detail"]["parent"] == fb["inv"]
    assert call["task"] == "l" and call["t"] >= fb["t"]
    assert len(of(events, "result", tool="cached")) == 1
    assert of(events, "wf_end")[0]["detail"]["status"] == "succeeded"
    assert m["recovery"]["fallbacks"] == 1


REQUIRES_TOOLS = """
  - name: check
    description: Slow check.
    side_effects: read
    service_time: {dist: constant, value: 3.0}
  - name: pay
    description: Quick payment that needs the check.
    side_effects: read
    dependencies:
      - {tool: check, relation: Requires}
    service_time: {dist: constant, value: 0.1}
"""
REQUIRES_TASKS = "      - {id: c, tool: check}\n      - {id: p, tool: pay}"


@pytest.mark.parametrize("protocol", ["MCP+", "MCP"])
def test_requires_adds_order_only_when_the_caller_knows(tmp_path: Path, protocol: str) -> None:
    protos = f"{{{protocol}: 1.0}}"
    text = direct(
        protos, protos, f"{{{protocol}: 0.01}}", REQUIRES_TOOLS, tasks=REQUIRES_TASKS, times="[0]"
    )
    text = text.replace("tools: [read_it, write_it]", "tools: [read_it, write_it, check, pay]")
    events, _ = run(tmp_path, text)
    (check_result,) = of(events, "result", tool="check")
    (pay_exec,) = of(events, "execute", tool="pay")
    if protocol == "MCP+":
        assert pay_exec["t"] > check_result["t"]
    else:  # plain MCP drops `dependencies`: no order, the quick payment runs first
        assert pay_exec["t"] < check_result["t"]
    assert of(events, "wf_end")[0]["detail"]["status"] == "succeeded"


def test_exclusive_partner_is_skipped(tmp_path: Path) -> None:
    extra = """
  - name: send_it
    description: Send.
    dependencies: [{tool: print_it, relation: ExclusiveWith}]
  - name: print_it
    description: Print.
    dependencies: [{tool: send_it, relation: ExclusiveWith}]
"""
    text = direct(
        "{MCP+: 1.0}",
        "{MCP+: 1.0}",
        "{MCP+: 0.01}",
        extra,
        times="[0]",
        tasks="      - {id: s, tool: send_it}\n      - {id: p, tool: print_it, after: [s]}",
    )
    text = text.replace(
        "tools: [read_it, write_it]", "tools: [read_it, write_it, send_it, print_it]"
    )
    events, m = run(tmp_path, text)
    (skip,) = of(events, "skip")
    assert skip["task"] == "p" and skip["detail"] == {"exclusive_with": "send_it"}
    assert of(events, "execute", tool="print_it") == []
    assert of(events, "wf_end")[0]["detail"]["status"] == "succeeded"
    assert m["skips"] == 1


def exclusive_violations(tmp_path: Path, text: str) -> int:
    """The exclusive check's violations on the trace :func:`run` wrote for ``text``."""
    from sim.conformance.checks.stream import check_trace
    from sim.scenario.load import parse_scenario

    scenario, _ = parse_scenario(textwrap.dedent(text))
    return (
        check_trace(tmp_path / "dijkstra" / "trace.jsonl", scenario).verdict("exclusive").violations
    )


@pytest.mark.parametrize("declared_on", ["send_it", "print_it"])
def test_an_exclusive_pair_declared_on_one_side_binds_both(
    tmp_path: Path, declared_on: str
) -> None:
    """ExclusiveWith is symmetric (docs/checks/exclusive.md): an MCP+ caller that ran
    send_it skips print_it whichever of the two declares the pair (declared on send_it
    alone, the engine ran print_it and the check flagged the instance)."""
    events, m = run(tmp_path, one_sided("MCP+", declared_on))
    (skip,) = of(events, "skip")
    assert skip["task"] == "p" and skip["detail"] == {"exclusive_with": "send_it"}
    assert of(events, "execute", tool="print_it") == []
    assert m["skips"] == 1
    assert exclusive_violations(tmp_path, one_sided("MCP+", declared_on)) == 0


def test_a_plain_mcp_caller_knows_no_exclusive_pair(tmp_path: Path) -> None:
    """MCP's view keeps no dependencies: its caller runs both, and the check flags it."""
    events, _ = run(tmp_path, one_sided("MCP", "send_it"))
    assert of(events, "skip") == []
    assert len(of(events, "execute", tool="print_it")) == 1
    assert exclusive_violations(tmp_path, one_sided("MCP", "send_it")) == 1


def test_tool_server_at_its_concurrency_limit_queues(tmp_path: Path) -> None:
    text = one_at_a_time(2.0)
    events, _ = run(tmp_path, text.replace("timeout: 5", "timeout: 20"))
    executes = of(events, "execute")
    assert len(executes) == 3
    starts = [e["t"] for e in executes]
    assert starts[1] == pytest.approx(starts[0] + 2.0)
    assert starts[2] == pytest.approx(starts[0] + 4.0)
    assert [round(e["detail"]["waited"], 6) for e in executes] == [0.0, 2.0, 4.0]


def test_lossy_translation_records_the_dropped_fields(tmp_path: Path) -> None:
    text = f"""
name: t
seed: 1
duration: 10
protocols: [MCP, MCP+]
approval: {{latency: {{dist: constant, value: 0.5}}, grant_probability: 1.0, mcp_policy: never}}
agents:
  - {{id: agent, type: LLM_AGENT, protocols: {{MCP+: 1.0}}}}
  - {{id: gw, type: GATEWAY, protocols: {{MCP+: 1.0, MCP: 1.0}}}}
  - {{id: srv, type: TOOL_SERVER, protocols: {{MCP: 1.0}}, tools: [read_it, write_it]}}
links:
  - {{between: [agent, gw], latency: {{MCP+: 0.01}}}}
  - {{between: [gw, srv], latency: {{MCP: 0.01}}}}
{TOOLS}
workflows:
  - name: w
    initiator: agent
    protocol: MCP+
    arrivals: {{times: [0]}}
    tasks:
      - {{id: w1, tool: write_it}}
"""
    events, m = run(tmp_path, text)
    translations = of(events, "translate")
    forward = [e for e in translations if e["detail"]["from_proto"] == "MCP+"]
    assert forward and all(e["agent"] == "gw" for e in translations)
    assert forward[0]["detail"]["dropped"] == [
        "dependencies",
        "failure_modes",
        "requires_approval",
        "side_effects",
        "summary",
    ]
    assert forward[0]["detail"]["kind"] == "lossy"
    backward = [e for e in translations if e["detail"]["from_proto"] == "MCP"]
    assert backward and backward[0]["detail"]["dropped"] == []
    # the descriptor reached the caller through MCP: approval falls to the policy
    (listed,) = of(events, "list")
    assert listed["detail"]["approval"] is False
    assert m["writes_without_approval"] == 1
    assert m["fields_lost"] == 5 * len(forward)


def test_instances_start_at_initiators_drawn_per_instance(tmp_path: Path) -> None:
    text = """
        name: many-initiators
        duration: 60
        protocols: [MCP+]
        agents:
          - {id: p1, type: LLM_AGENT, protocols: {MCP+: 1.0}}
          - {id: p2, type: LLM_AGENT, protocols: {MCP+: 1.0}}
          - {id: p3, type: LLM_AGENT, protocols: {MCP+: 1.0}}
          - {id: server, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}
        links:
          - {between: [p1, server], latency: {MCP+: 0.01}}
          - {between: [p2, server], latency: {MCP+: 0.01}}
          - {between: [p3, server], latency: {MCP+: 0.01}}
        tools:
          - {name: read_it, description: Reads a record., side_effects: read}
        workflows:
          - name: w
            initiators: {type: LLM_AGENT}
            protocol: MCP+
            arrivals: {process: poisson, rate: 2.0}
            tasks: [{id: r, tool: read_it}]
        """
    events, metrics = run(tmp_path / "a", text)
    starts = [e["agent"] for e in of(events, "wf_start")]
    assert set(starts) == {"p1", "p2", "p3"}
    for agent in ("p1", "p2", "p3"):  # each instance's calls come from its own initiator
        insts = {e["inst"] for e in of(events, "wf_start", agent=agent)}
        assert {e["agent"] for e in of(events, "call") if e["inst"] in insts} == {agent}
    again, _ = run(tmp_path / "b", text)
    assert [e["agent"] for e in of(again, "wf_start")] == starts
    assert metrics["workflows"]["succeeded"] == len(starts)
