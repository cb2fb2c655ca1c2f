"""Exhaustive verification (SPEC §11): states per second, and the largest workflow of
independent tasks decided within 60 s, with and without partial-order reduction.

``python -m benchmarks.run --only verify`` (``--quick``: 20 s budget, fewer sizes).

The workflows are generated (:func:`independent`): n independent write tasks, each
tool with three failure modes (retry, prompt, abort) whose errors all occur, approval
asked and answered either way. For n = 2, 4, 6, … we decide ``write_approval`` and
``recovery`` (both hold) with the reduced search and with the plain breadth-first one,
in the same process, until each exceeds the budget or ``--max-states`` (1,000,000,
then ``undecided``). A row per n: states, transitions, seconds, states/s, verdict.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.run import Section, table
from sim.scenario import load_scenario
from sim.verify import decide, selected

BUDGET = 60.0
MAX_STATES = 1_000_000

_HEAD = """name: independent-{n}
seed: 1
duration: 60
replications: 1
routers: [dijkstra]
protocols: [MCP+]
approval:
  latency: {{dist: constant, value: 1.0}}
  grant_probability: 0.9
agents:
  - {{id: caller, type: LLM_AGENT, protocols: {{MCP+: 1.0}}}}
  - {{id: server, type: TOOL_SERVER, protocols: {{MCP+: 1.0}}, tools: [{tools}]}}
links:
  - {{between: [caller, server], latency: {{MCP+: 0.01}}}}
tools:
"""
_TOOL = """  - name: t{k}
    description: Tool {k}.
    side_effects: write
    requires_approval: true
    failure_modes:
      - {{error: ServiceDown, recovery: {{retry: 1}}}}
      - {{error: NotFound, recovery: {{prompt: "Not found?"}}}}
      - {{error: Conflict, recovery: {{abort: true}}}}
    errors: {{ServiceDown: 0.05, NotFound: 0.02, Conflict: 0.01}}
    service_time: {{dist: constant, value: 0.1}}
"""


def independent(n: int) -> str:
    """YAML of one workflow ``w`` of ``n`` independent write tasks (see the module)."""
    text = _HEAD.format(n=n, tools=", ".join(f"t{k}" for k in range(n)))
    text += "".join(_TOOL.format(k=k) for k in range(n))
    text += "workflows:\n  - name: w\n    initiator: caller\n    protocol: MCP+\n"
    text += "    arrivals: {times: [0]}\n    timeout: 5\n    tasks:\n"
    text += "".join(f"      - {{id: k{k}, tool: t{k}}}\n" for k in range(n))
    return text
