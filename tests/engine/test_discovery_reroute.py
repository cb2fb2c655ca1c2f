"""A discovery re-sent around a suspect (dynamic routers): the view is kept for the path
the reply came over, and the waiting task goes on over it (``sim.engine.discovery``).

``a0`` reaches ``srv`` over MCP+ through ``gw`` (cheapest) or through ``tr``, which
translates to plain MCP (requires_approval lost; mcp_policy never: no approval). ``gw``
is down for the first 20 s: the first ``list`` times out, the caller suspects ``gw``
(for 5 s) and re-sends through ``tr``. Once ``gw`` is back, calls go through it again:
they must use the view learned over ``gw`` (approval asked), not the one ``tr`` gave,
which the caller used to file under the ``gw`` path (its writes then went unapproved).
"""

from __future__ import annotations

import json
from pathlib import Path

from sim.engine import run_replication
from sim.scenario import parse_scenario

REROUTED_LIST = """
name: rerouted-list
seed: 3
duration: 120
trace: protocol
routers: [resilient]
protocols: [MCP, MCP+]
routing: {suspect_ttl: 5}
approval: {latency: {dist: constant, value: 0.1}, grant_probability: 1.0, mcp_policy: never}
agents:
  - {id: a0, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: gw, type: GATEWAY, protocols: {MCP+: 1.0}}
  - {id: tr, type: GATEWAY, protocols: {MCP+: 1.0, MCP: 1.0}}
  - {id: srv, type: TOOL_SERVER, protocols: {MCP+: 1.0, MCP: 1.0}, tools: [t0]}
links:
  - {between: [a0, gw], latency: {MCP+: 0.01}}
  - {between: [gw, srv], latency: {MCP+: 0.01}}
  - {between: [a0, tr], latency: {MCP+: 0.02}}
  - {between: [tr, srv], latency: {MCP: 0.02}}
tools:
  - name: t0
    description: Tool t0 writes a record.
    input_schema: {type: object}
    side_effects: write
    requires_approval: true
    service_time: {dist: constant, value: 0.2}
workflows:
  - name: w
    initiator: a0
    protocol: MCP+
    arrivals: {process: poisson, rate: 0.5}
    timeout: 2
    tasks: [{id: k0, tool: t0}]
failures:
  - {node: gw, at: 0, for: 20}
"""


def test_a_rerouted_discovery_files_its_view_under_the_path_it_took(tmp_path: Path) -> None:
    scenario, _ = parse_scenario(REROUTED_LIST, "rerouted-list.yaml")
    run_replication(scenario, "resilient", 0, tmp_path, "protocol")
    events = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    lists = [
        (e["detail"]["host"], tuple(e["detail"]["fields"])) for e in events if e["label"] == "list"
    ]
    timeouts = [
        e for e in events if e["label"] == "timeout" and e["detail"].get("action") == "resend"
    ]
    assert timeouts, "the first list no longer times out"
    # learned over tr first (MCP: no requires_approval), then again over gw once it is back
    assert "requires_approval" not in lists[0][1]
    assert "requires_approval" in lists[-1][1]
    executes = [e for e in events if e["label"] == "execute"]
    over_gw = [e for e in executes if e["proto"] == "MCP+"]  # only gw keeps MCP+ to srv
    over_tr = [e for e in executes if e["proto"] == "MCP"]
    assert over_gw and over_tr, "the run no longer uses both routes"
    assert all(e["detail"]["approved"] for e in over_gw)
    assert not any(e["detail"]["approved"] for e in over_tr)  # the view tr gives: no gate
