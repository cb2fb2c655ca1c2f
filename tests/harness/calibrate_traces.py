"""Hand-written traces for the calibration tests: a small mesh and events with known
intervals (``event(label, t, ...)``, written by ``write_trace``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: planner (MCP+) - gw (translates MCP+ <-> MCP, 1 ms) - server (MCP, tools lookup, store).
MESH = """\
# yaml-language-server: $schema=../../scenarios/protomesh.schema.json
name: cal-mesh
duration: 100
protocols: [MCP, MCP+]
approval: {latency: {dist: constant, value: 2}, grant_probability: 0.9}
x-server: &server {type: TOOL_SERVER, concurrency: 4}
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: gw, type: GATEWAY, protocols: {MCP+: 1.0, MCP: 1.0}, translation_delay: 0.001}
  - {<<: *server, id: server, protocols: {MCP: 1.0}, tools: [lookup, store]}
links:
  - {between: [planner, gw], latency: {MCP+: 0.01}, jitter: 0.002}
  - {between: [gw, server], latency: {MCP: 0.005}}
tools:
  - name: lookup
    side_effects: read
    failure_modes: [{error: ServiceDown, recovery: {retry: 2}}]
    errors: {ServiceDown: 0.1}
    service_time: {dist: exponential, mean: 0.1}
  - name: store
    side_effects: write
    requires_approval: true
workflows:
  - name: flow
    initiator: planner
    protocol: MCP+
    arrivals: {process: poisson, rate: 1}
    tasks: [{id: a, tool: lookup}, {id: b, tool: store, after: [a]}]
"""

FIELDS = ("t", "seq", "rep", "label", "agent", "wf", "inst", "task", "inv", "tool", "proto")


def event(label: str, t: float, agent: str = "planner", **fields: Any) -> dict[str, Any]:
    """A trace line's object: ``detail`` from the keyword ``detail`` (default ``{}``),
    the other fields from keywords (``inv``, ``tool``, ``wf``, ...; default null)."""
    detail = fields.pop("detail", {})
    line: dict[str, Any] = {name: None for name in FIELDS}
    line.update(t=t, seq=0, rep=0, label=label, agent=agent, wf="flow", inst=0)
    line.update(fields)
    line["detail"] = detail
    return line


def hop(t: float, msg: int, frm: str, to: str, proto: str, **fields: Any) -> dict[str, Any]:
    return event(
        "hop", t, frm, detail={"msg": msg, "from": frm, "proto": proto, "to": to}, **fields
    )


def write_trace(path: Path, events: Iterable[dict[str, Any]]) -> Path:
    """``events`` as a trace file (``seq`` numbered in order)."""
    with path.open("w", encoding="utf-8") as out:
        for seq, line in enumerate(events):
            out.write(json.dumps({**line, "seq": seq}, separators=(",", ":")) + "\n")
    return path
