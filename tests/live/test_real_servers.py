"""Real MCP servers in an agent's place (``live: {command}`` over stdio, ``live: {url}``
over Streamable HTTP): a server written with the SDK's high-level API, nobody's
simulation, called through the agent's process; and a killed-and-restarted gateway."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness.live_runs import SERVER, desk, live, ours

#: about 30 s of live meshes: run by `make bench` and by CI (`.ci/run`) beside the default
#: suite, which keeps the live runs of test_live_run (a mesh, its signals and its faults)
pytestmark = pytest.mark.slow


def ran(tmp_path: Path, path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    done = live(str(path), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "out" / "dijkstra" / "live-0"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    return json.loads((run / "metrics.json").read_text()), trace


def test_a_real_server_over_stdio_serves_the_agents_tools(tmp_path: Path) -> None:
    metrics, trace = ran(tmp_path, desk(tmp_path, {"command": [sys.executable, str(SERVER)]}))
    assert metrics["workflows"] == {"started": 3, "succeeded": 3, "failed": 0, "cancelled": 0,
                                    "unfinished": 0}  # fmt: skip
    assert metrics["conformance"]["ok"] and all(v == 0 for v in metrics["violations"].values())
    executes = [e for e in trace if e["label"] == "execute"]
    assert sorted({e["tool"] for e in executes}) == ["book_room", "get_forecast"]
    # the real server's own descriptor reached the planner (its description, its schema)
    lists = [e for e in trace if e["label"] == "list"]
    assert {e["detail"]["approval_reason"] for e in lists if e["tool"] == "book_room"} == {
        "mcp_policy=hints, readOnlyHint=False"
    }
    assert ours(str(tmp_path)) == [] and ours(str(SERVER)) == []


def test_a_real_server_over_http_and_one_that_lacks_a_tool(tmp_path: Path) -> None:
    portfile = tmp_path / "port"
    server = subprocess.Popen([sys.executable, str(SERVER), "--http", str(portfile)])
    try:
        deadline = time.monotonic() + 30
        while not portfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{portfile.read_text()}/mcp"
        metrics, _ = ran(tmp_path, desk(tmp_path, {"url": url}))
        assert metrics["workflows"]["succeeded"] == 3
        lacking = desk(tmp_path, {"url": url})
        text = lacking.read_text().replace("book_room", "book_suite")
        lacking.write_text(text)
        done = live(str(lacking), "--out", str(tmp_path / "out2"))
        assert done.returncode == 2
        assert (
            "does not serve book_suite (it serves book_room, cancel_booking, get_forecast)"
            in done.stderr
        )
    finally:
        server.terminate()
        server.wait(10)


def test_a_killed_gateway_and_a_cut_link_are_real_and_accounted_for(tmp_path: Path) -> None:
    from tests.harness.live_paths import TINY

    data = yaml.safe_load(TINY.read_text())
    data["duration"] = 5
    data["failures"] = [
        {"node": "gw", "at": 1.5, "for": 1.5, "kill": True},
        {"link": ["planner", "coord"], "at": 1.0, "for": 1.5},
    ]
    path = tmp_path / "kill.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    metrics, trace = ran(tmp_path, path)
    assert metrics["live"]["kills"] and metrics["live"]["kills"][0][0] == "gw"
    assert metrics["conformance"]["ok"], metrics["conformance"]
    assert all(v == 0 for v in metrics["violations"].values()), metrics["violations"]
    down = next(e["t"] for e in trace if e["label"] == "node_down")
    up = next(e["t"] for e in trace if e["label"] == "node_up")
    assert 1.5 <= down < up
    # the restarted gateway relays again
    assert any(e["label"] == "hop" and e["detail"]["from"] == "gw" and e["t"] > up for e in trace)
    # the link outage: both ends refused the link while it was down, and said so
    cut = next(e for e in trace if e["label"] == "link_down")
    back = next(e for e in trace if e["label"] == "link_up")
    assert cut["detail"]["link"] == ["planner", "coord"] and 1.0 <= cut["t"] < back["t"]
    crossing = [e for e in trace if e["label"] == "hop"
                and {e["detail"]["from"], e["detail"]["to"]} == {"planner", "coord"}]  # fmt: skip
    assert not [e for e in crossing if cut["t"] < e["t"] < back["t"]]
    assert ours(str(tmp_path)) == []


def test_fallbacks_sgd_dialogues_and_json_rpc_links_run_live(tmp_path: Path) -> None:
    """A declared fallback (learned over MCP+), an invocation issued in SGD (its missing
    slot collected), and ANP and SGD links (no real implementation: JSON-RPC)."""
    scenario = {
        "name": "dialects",
        "seed": 2,
        "duration": 3,
        "routers": ["dijkstra"],
        "protocols": ["MCP+", "SGD", "ANP"],
        "approval": {"latency": {"dist": "constant", "value": 0.05}, "grant_probability": 1.0},
        "agents": [
            {"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP+": 1.0, "SGD": 1.0}},
            {"id": "relay", "type": "GATEWAY", "protocols": {"SGD": 1.0, "ANP": 1.0}},
            {
                "id": "desk",
                "type": "TOOL_SERVER",
                "protocols": {"MCP+": 1.0},
                "tools": ["flaky", "steady"],
            },
            {"id": "clerk", "type": "TOOL_SERVER", "protocols": {"ANP": 1.0}, "tools": ["reserve"]},
        ],
        "links": [
            {"between": ["planner", "desk"], "latency": {"MCP+": 0.004}},
            {"between": ["planner", "relay"], "latency": {"SGD": 0.003}},
            {"between": ["relay", "clerk"], "latency": {"ANP": 0.003}},
        ],
        "tools": [
            {
                "name": "flaky",
                "description": "Fails.",
                "side_effects": "read",
                "errors": {"Broken": 1.0},
                "failure_modes": [{"error": "Broken", "recovery": {"fallback": "steady"}}],
            },
            {"name": "steady", "description": "Works.", "side_effects": "read"},
            {
                "name": "reserve",
                "description": "Reserves a seat.",
                "side_effects": "read",
                "input_schema": {
                    "type": "object",
                    "required": ["seat"],
                    "properties": {"seat": {"type": "string"}},
                },
            },
        ],
        "workflows": [
            {
                "name": "fall",
                "initiator": "planner",
                "protocol": "MCP+",
                "arrivals": {"times": [0.2, 1.2]},
                "tasks": [{"id": "t", "tool": "flaky"}],
            },
            {
                "name": "talk",
                "initiator": "planner",
                "protocol": "SGD",
                "arrivals": {"times": [0.5, 1.5]},
                "tasks": [{"id": "r", "tool": "reserve"}],
            },
        ],
    }
    path = tmp_path / "dialects.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    metrics, trace = ran(tmp_path, path)
    assert metrics["conformance"]["ok"], metrics["conformance"]
    assert all(v == 0 for v in metrics["violations"].values()), metrics["violations"]
    assert metrics["workflows"]["succeeded"] == 4
    labels = [e["label"] for e in trace]
    assert labels.count("fallback") == 2 and labels.count("collect") == 2
    hops = {e["detail"]["proto"] for e in trace if e["label"] == "hop"}
    assert {"SGD", "ANP", "MCP+"} <= hops
    parents = [
        e["detail"].get("parent") for e in trace if e["label"] == "call" and e["tool"] == "steady"
    ]
    assert len(parents) == 2 and None not in parents
