"""Scenario files of ``n`` explicit agents, written as a user would, for the loading and
start-up benchmarks.

``scenario_text(n)`` is the YAML of a valid scenario: a planner, ``n // 10`` gateways
speaking MCP, MCP+ and A2A, tool servers hosting three tools, and LLM agents, each in
block style with its capabilities and protocol affinities; a ring of links (each
consecutive pair, over the protocols both speak) plus a chord every seventh agent; one
workflow of three tasks. The same ``n`` gives the same text.
"""

from __future__ import annotations

_HEAD = """\
name: generated-{n}
description: A generated mesh of {n} explicit agents for the loading benchmarks.
seed: 7
duration: 60
replications: 1
routers: [dijkstra, resilient]
protocols: [MCP, MCP+, A2A]
routing: {{loss_penalty: 1.0, translation_delay: 0.002}}
"""

_TOOLS = """\
tools:
  - name: fetch_user
    description: Retrieves the traveller's profile from the accounts database by user id.
    input_schema: {type: object, required: [user_id], properties: {user_id: {type: string}}}
    side_effects: read
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 3}}
    service_time: {dist: exponential, mean: 0.05}
  - name: check_balance
    description: Checks that the traveller's balance covers the fare before a booking.
    input_schema: {type: object, required: [user_id], properties: {user_id: {type: string}}}
    side_effects: read
    service_time: {dist: lognormal, median: 0.02, sigma: 0.4}
  - name: book_train
    description: Books a seat on a train for the traveller and charges the payment card.
    input_schema: {type: object, required: [user_id], properties: {user_id: {type: string}}}
    side_effects: write
    requires_approval: true
    service_time: {dist: uniform, low: 0.05, high: 0.2}
workflows:
  - name: booking
    initiator: a000000
    protocol: MCP+
    arrivals: {process: poisson, rate: 0.5}
    tasks:
      - {id: fetch, tool: fetch_user, args: {user_id: u1}}
      - {id: balance, tool: check_balance, args: {user_id: u1}, after: [fetch]}
      - {id: book, tool: book_train, args: {user_id: u1}, after: [balance]}
"""


def _speaks(i: int) -> dict[str, float]:
    """Agent ``i``'s protocols: every tenth agent (and the planner) a gateway of all
    three, the others MCP+ and, every other one, A2A."""
    if i % 10 == 0:
        return {"MCP": 1.0, "MCP+": 1.0, "A2A": 1.0}
    out = {"MCP+": round(0.5 + (i * 37 % 50) / 100, 2)}
    if i % 2:
        out["A2A"] = 0.9
    return out


def scenario_text(n: int) -> str:
    """The YAML of a valid scenario of ``n`` (at least 20) explicit agents."""
    if n < 20:
        raise ValueError("a generated scenario has at least 20 agents")
    lines = [_HEAD.format(n=n), "agents:"]
    ids = [f"a{i:06d}" for i in range(n)]
    servers = {n // 2: "[fetch_user, check_balance]", n // 2 + 10: "[book_train]"}
    for i, agent in enumerate(ids):
        speaks = _speaks(i)
        kind = "GATEWAY" if i % 10 == 0 and i else "LLM_AGENT"
        if i in servers:
            kind = "TOOL_SERVER"
        lines.append(f"  - id: {agent}")
        lines.append(f"    type: {kind}")
        lines.append(f"    capabilities: [skill-{i % 97}, area-{i % 13}]")
        shown = ", ".join(f"{p}: {w}" for p, w in speaks.items())
        lines.append(f"    protocols: {{{shown}}}")
        if i in servers:
            lines.append(f"    tools: {servers[i]}")
            lines.append("    concurrency: 8")
    lines.append("links:")
    for i in range(n):
        for j in (i + 1, i + 7) if i % 7 == 0 else (i + 1,):
            j %= n
            shared = [p for p in _speaks(i) if p in _speaks(j)]
            latency = ", ".join(f"{p}: {0.004 + (i * 13 + j) % 17 / 1000:.3f}" for p in shared)
            lines.append(f"  - between: [{ids[i]}, {ids[j]}]")
            lines.append(f"    latency: {{{latency}}}")
    lines.append(_TOOLS)
    return "\n".join(lines)
