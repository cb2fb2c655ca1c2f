"""Tiny engine runs read back from trace.jsonl: ``run`` a scenario text, ``of`` its events
by label, ``by_inv`` per invocation, and the tiny meshes the engine tests share."""

from __future__ import annotations

import json
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any

from sim.engine import run_replication
from sim.scenario import parse_scenario
from sim.vocabulary import line_problems

Event = dict[str, Any]


def run(
    tmp_path: Path, text: str, router: str = "dijkstra", level: str | None = None
) -> tuple[list[Event], dict[str, Any]]:
    scenario, _ = parse_scenario(textwrap.dedent(text))
    out = tmp_path / router
    metrics = run_replication(scenario, router, 0, out, level)
    lines = (out / "trace.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:  # every line the vocabulary declares (sim.vocabulary)
        assert line_problems(event) == [], event
    return events, metrics


def of(events: list[Event], label: str, **match: Any) -> list[Event]:
    return [e for e in events if e["label"] == label and all(e[k] == v for k, v in match.items())]


def by_inv(events: list[Event]) -> dict[int, list[Event]]:
    out: dict[int, list[Event]] = defaultdict(list)
    for e in events:
        if e["inv"] is not None:
            out[e["inv"]].append(e)
    return out


TOOLS = """
tools:
  - name: read_it
    description: Reads a record.
    input_schema: {type: object, properties: {id: {type: string}}}
    side_effects: read
    annotations: {readOnlyHint: true}
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 2}}
    service_time: {dist: constant, value: 0.1}
  - name: write_it
    description: Writes a record.
    input_schema: {type: object, properties: {id: {type: string}}}
    side_effects: write
    requires_approval: true
    annotations: {readOnlyHint: false}
    service_time: {dist: constant, value: 0.1}
"""


def direct(
    caller_protos: str,
    server_protos: str,
    link: str,
    extra: str = "",
    *,
    tasks: str,
    times: str = "[0, 10, 20]",
    approval: str = "",
) -> str:
    """One caller linked straight to one tool server."""
    return f"""
name: t
seed: 3
duration: 100
protocols: [MCP, MCP+]
approval: {{latency: {{dist: constant, value: 1.0}}, grant_probability: 1.0{approval}}}
agents:
  - {{id: agent, type: LLM_AGENT, protocols: {caller_protos}}}
  - {{id: srv, type: TOOL_SERVER, protocols: {server_protos}, tools: [read_it, write_it]}}
links:
  - {{between: [agent, srv], latency: {link}}}
{TOOLS}{extra}
workflows:
  - name: w
    initiator: agent
    protocol: {"MCP+" if "MCP+" in caller_protos else "MCP"}
    arrivals: {{times: {times}}}
    timeout: 5
    tasks:
{tasks}
"""


WRITE_TASK = "      - {id: w1, tool: write_it, args: {id: x}}"


def one_at_a_time(service: float, extra: str = "") -> str:
    """Three instances at t = 0 reading from a server that serves one call at a time,
    each read taking ``service`` seconds (``extra``: more top-level YAML)."""
    text = direct(
        "{MCP+: 1.0}",
        "{MCP+: 1.0}",
        "{MCP+: 0.01}",
        times="[0, 0, 0]",
        tasks="      - {id: r, tool: read_it}",
        extra=extra,
    )
    text = text.replace(
        "tools: [read_it, write_it]}", "tools: [read_it, write_it], concurrency: 1}"
    )
    return text.replace(
        "service_time: {dist: constant, value: 0.1}\n  - name: write_it",
        f"service_time: {{dist: constant, value: {service}}}\n  - name: write_it",
    )


OUTAGE = """
name: outage
seed: 5
duration: 200
protocols: [MCP+]
routing: {suspect_ttl: 1000}
agents:
  - {id: agent, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: gw1, type: GATEWAY, protocols: {MCP+: 1.0}}
  - {id: gw2, type: GATEWAY, protocols: {MCP+: 1.0}}
  - {id: srv, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [read_it]}
links:
  - {between: [agent, gw1], latency: {MCP+: 0.01}}
  - {between: [gw1, srv], latency: {MCP+: 0.01}}
  - {between: [agent, gw2], latency: {MCP+: 0.05}}
  - {between: [gw2, srv], latency: {MCP+: 0.05}}
tools:
  - name: read_it
    description: Reads a record.
    side_effects: read
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 2}}
    service_time: {dist: constant, value: 0.1}
workflows:
  - name: w
    initiator: agent
    protocol: MCP+
    arrivals: {times: [0, 20, 40, 60, 80]}
    timeout: 5
    tasks:
      - {id: r, tool: read_it}
failures:
  - {node: gw1, at: 10, for: 150}
"""


def one_sided(protocol: str, declared_on: str) -> str:
    """One caller running send_it then print_it over ``protocol``, the pair ExclusiveWith
    declared by ``declared_on`` alone (the other tool declares no dependency)."""
    other = {"send_it": "print_it", "print_it": "send_it"}[declared_on]
    extra = "".join(
        f"\n  - name: {name}\n    description: {name}."
        + (
            f"\n    dependencies: [{{tool: {other}, relation: ExclusiveWith}}]"
            if name == declared_on
            else ""
        )
        for name in ("send_it", "print_it")
    )
    text = direct(
        f"{{{protocol}: 1.0}}",
        f"{{{protocol}: 1.0}}",
        f"{{{protocol}: 0.01}}",
        extra + "\n",
        times="[0]",
        tasks="      - {id: s, tool: send_it}\n      - {id: p, tool: print_it, after: [s]}",
    )
    return text.replace(
        "tools: [read_it, write_it]", "tools: [read_it, write_it, send_it, print_it]"
    )
