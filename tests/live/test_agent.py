"""A caller's error types (sim/live/agent.py): a real server behind an agent answers an
``isError`` whose text starts with an error its tool's ``failure_modes`` declare
(``Kaboom: ...``); that is the error the trace records and the recovery the caller applies
(docs/live.md: "an error whose type is its text's first word when that is one of the
tool's error types"). Before, only the keys of ``errors`` (simulated probabilities, which a
tool served by a real server has no reason to declare) counted: the error was
``ToolError`` and the declared retry never happened."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.harness.live_runs import live, ours

pytestmark = pytest.mark.slow

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations

    server = MCPServer("fragile")

    @server.tool(description="Fails.", annotations=ToolAnnotations(readOnlyHint=True))
    def boom(x: int = 0) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text="Kaboom: it blew up")], is_error=True
        )

    server.run()
    """
)


def test_a_real_servers_declared_error_is_its_type_and_gets_its_recovery(
    tmp_path: Path,
) -> None:
    server = tmp_path / "fragile.py"
    server.write_text(SERVER)
    scenario = {
        "name": "fragile",
        "seed": 1,
        "duration": 2,
        "routers": ["dijkstra"],
        "protocols": ["MCP+"],
        "agents": [
            {"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP+": 1.0}},
            {
                "id": "lab",
                "type": "TOOL_SERVER",
                "protocols": {"MCP+": 1.0},
                "tools": ["boom"],
                "live": {"command": [sys.executable, str(server)]},
            },
        ],
        "links": [{"between": ["planner", "lab"], "latency": {"MCP+": 0.005}}],
        "tools": [
            {
                "name": "boom",
                "description": "Fails.",
                "side_effects": "read",
                "failure_modes": [{"error": "Kaboom", "recovery": {"retry": 1}}],
            }
        ],
        "workflows": [
            {
                "name": "try",
                "initiator": "planner",
                "protocol": "MCP+",
                "arrivals": {"times": [0.2]},
                "timeout": 10,
                "tasks": [{"id": "b", "tool": "boom", "args": {"x": 1}}],
            }
        ],
    }
    path = tmp_path / "fragile.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    done = live(str(path), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "out" / "dijkstra" / "live-0"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    said = [(e["label"], e["detail"].get("error")) for e in trace if e["label"] in
            ("error", "retry", "abort")]  # fmt: skip
    assert said == [
        ("error", "Kaboom"),
        ("retry", "Kaboom"),
        ("error", "Kaboom"),
        ("abort", "Kaboom"),
    ]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["errors"] == {"Kaboom": 2}
    assert metrics["violations"]["recovery"] == 0 and metrics["violations"]["lts"] == 0
    assert ours(str(tmp_path)) == []
