"""The trace a run writes, on tiny scenarios: what each level keeps, the line format and
order, every message delivered or dropped (run_end for those still travelling)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

from tests.harness.engine_runs import (
    OUTAGE,
    WRITE_TASK,
    direct,
    of,
    run,
)


def test_trace_levels(tmp_path: Path) -> None:
    text = direct("{MCP+: 1.0}", "{MCP+: 1.0}", "{MCP+: 0.01}", tasks=WRITE_TASK)
    full, m_full = run(tmp_path / "a", text, level="full")
    proto, m_proto = run(tmp_path / "b", text, level="protocol")
    off, m_off = run(tmp_path / "c", text, level="off")
    assert {"send", "hop", "deliver"} <= {e["label"] for e in full}
    assert not {"send", "hop", "deliver"} & {e["label"] for e in proto}
    assert off == []
    strip = [e["label"] for e in full if e["label"] not in ("send", "hop", "deliver")]
    assert strip == [e["label"] for e in proto]
    for a, b in ((m_full, m_proto), (m_full, m_off)):
        assert a["workflows"] == b["workflows"] and a["messages"] == b["messages"]


def test_trace_format_order_and_conservation(tmp_path: Path) -> None:
    events, _ = run(tmp_path, OUTAGE, "resilient")
    keys = [
        "t",
        "seq",
        "rep",
        "label",
        "agent",
        "wf",
        "inst",
        "task",
        "inv",
        "tool",
        "proto",
        "detail",
    ]
    assert all(list(e) == keys for e in events)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(a["t"] <= b["t"] for a, b in itertools.pairwise(events))
    sent = {e["detail"]["msg"] for e in of(events, "send")}
    ended: dict[int, int] = defaultdict(int)
    for e in events:
        if e["label"] in ("deliver", "drop") and "msg" in e["detail"]:
            ended[e["detail"]["msg"]] += 1
    assert set(ended) == sent and set(ended.values()) == {1}


def test_messages_still_travelling_at_the_end_are_dropped_with_run_end(tmp_path: Path) -> None:
    # The only link takes 100 s; the call times out after 1 s and the instance ends, so
    # the run stops with the request still on the wire: it must end in a `drop`.
    events, metrics = run(
        tmp_path,
        """
        name: slow-link
        duration: 1
        protocols: [MCP+]
        agents:
          - {id: caller, type: LLM_AGENT, protocols: {MCP+: 1.0}}
          - {id: server, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}
        links:
          - {between: [caller, server], latency: {MCP+: 100.0}}
        tools:
          - {name: read_it, description: Reads a record., side_effects: read}
        workflows:
          - name: w
            initiator: caller
            protocol: MCP+
            arrivals: {times: [0]}
            timeout: 1
            tasks: [{id: r, tool: read_it}]
        """,
    )
    sends = {e["detail"]["msg"] for e in of(events, "send")}
    ended = [e["detail"]["msg"] for e in events if e["label"] in ("deliver", "drop")]
    assert sorted(ended) == sorted(sends)
    run_end = of(events, "drop")
    assert [e["detail"]["reason"] for e in run_end if e["detail"]["reason"] == "run_end"]
    messages = metrics["messages"]
    assert messages["sent"] == messages["delivered"] + messages["dropped"]
    assert messages["dropped_by_reason"].get("run_end", 0) >= 1
