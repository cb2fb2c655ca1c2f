"""Engine behaviour under outages, on tiny scenarios: exact facts read back from
trace.jsonl (a gateway down under each router, a node losing its queue and executions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.engine_runs import (
    OUTAGE,
    of,
    one_at_a_time,
    run,
)


def test_gateway_outage_dijkstra_keeps_timing_out(tmp_path: Path) -> None:
    events, m = run(tmp_path, OUTAGE, "dijkstra")
    requests = [e for e in of(events, "send") if e["detail"]["kind"] == "request"]
    assert all(e["detail"]["path"] == ["agent", "gw1", "srv"] for e in requests)
    late = [e for e in requests if e["t"] > 10]
    drops = of(events, "drop", agent="gw1")
    assert {d["detail"]["reason"] for d in drops} == {"node_down"}
    # every request after the outage starts is dropped at gw1 (3 attempts per call)
    assert len(drops) == len(late) == 4 * 3
    assert of(events, "reroute") == []
    timeouts = of(events, "timeout")
    assert len(timeouts) == 12
    assert [t["detail"]["action"] for t in timeouts] == ["resend", "resend", "give_up"] * 4
    assert [e["detail"]["status"] for e in of(events, "wf_end")] == ["succeeded"] + ["failed"] * 4
    assert m["messages"]["dropped_by_reason"] == {"node_down": 12}


def test_gateway_outage_resilient_routes_around(tmp_path: Path) -> None:
    events, m = run(tmp_path, OUTAGE, "resilient")
    requests = [e for e in of(events, "send") if e["detail"]["kind"] == "request"]
    drops = of(events, "drop", agent="gw1")
    assert len(drops) == 1  # the first call after the outage meets it once
    first_timeout = of(events, "timeout")[0]
    assert first_timeout["t"] == pytest.approx(drops[0]["t"] - 0.01 + 5.0, abs=1e-6)
    (reroute,) = of(events, "reroute")
    assert reroute["detail"]["avoid"] == ["gw1"]
    assert reroute["detail"]["to_path"] == ["agent", "gw2", "srv"]
    after = [e for e in requests if e["t"] > first_timeout["t"]]
    assert after and all(e["detail"]["path"] == ["agent", "gw2", "srv"] for e in after)
    assert [e["detail"]["status"] for e in of(events, "wf_end")] == ["succeeded"] * 5
    assert m["reroutes"] == 1


def test_semantic_router_fails_over_to_the_next_host(tmp_path: Path) -> None:
    text = (
        OUTAGE.replace(
            "  - {id: srv, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}",
            "  - {id: srv, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}\n"
            "  - {id: srv2, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}",
        )
        .replace(
            "  - {between: [gw2, srv], latency: {MCP+: 0.05}}",
            "  - {between: [gw2, srv2], latency: {MCP+: 0.05}}",
        )
        .replace("- {node: gw1, at: 10, for: 150}", "- {node: srv, at: 10, for: 150}")
    )
    events, _ = run(tmp_path, text, "semantic")
    requests = [e for e in of(events, "send") if e["detail"]["kind"] == "request"]
    assert requests[0]["detail"]["to"] == "srv"
    first_timeout = of(events, "timeout")[0]
    later = [e for e in requests if e["t"] > first_timeout["t"]]
    assert later and all(e["detail"]["to"] == "srv2" for e in later)
    assert [e["detail"]["status"] for e in of(events, "wf_end")] == ["succeeded"] * 5


def test_node_down_loses_queue_and_executions(tmp_path: Path) -> None:
    text = one_at_a_time(5.0, extra="failures:\n  - {node: srv, at: 1.0, for: 100}")
    events, m = run(tmp_path, text)
    lost = [e for e in of(events, "drop", agent="srv") if "lost" in e["detail"]]
    assert sorted(e["detail"]["lost"] for e in lost) == ["executing", "queued", "queued"]
    assert all(e["t"] == 1.0 for e in lost)
    assert of(events, "result") == []
    assert m["lost_work"] == {"executing": 1, "queued": 2}
