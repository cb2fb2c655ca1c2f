"""The fan-out workflow of issue 35, generated: a first task, ``w`` tasks that may run
concurrently after it, a last task after all of them (``w + 2`` tasks); each task's tool
with three failure modes and their recovery (``ServiceDown`` retried once, ``NotFound``
a prompt, ``Conflict`` an abort), every third tool a write that needs approval.

``python -m benchmarks.fanout W`` prints the scenario (YAML).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

_HEAD = """name: {name}
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
_TOOL = """  - name: {name}
    description: {description}
    side_effects: {effect}
    requires_approval: {approval}
    failure_modes:
      - {{error: ServiceDown, recovery: {{retry: 1}}}}
      - {{error: NotFound, recovery: {{prompt: "Not found?"}}}}
      - {{error: Conflict, recovery: {{abort: true}}}}
    errors: {{ServiceDown: 0.05, NotFound: 0.02, Conflict: 0.01}}
    service_time: {{dist: constant, value: 0.1}}
"""


def tool_mesh(name: str, tools: Sequence[tuple[str, str, str]]) -> str:
    """The YAML of a caller and one MCP+ server of ``tools`` (name, description, side
    effect; a write needs approval), each with the three failure modes of the module, up
    to its ``workflows:`` (the benchmarks' generated scenarios share it)."""
    text = _HEAD.format(name=name, tools=", ".join(t for t, _, _ in tools))
    for tool, description, effect in tools:
        approval = "true" if effect == "write" else "false"
        text += _TOOL.format(name=tool, description=description, effect=effect, approval=approval)
    return text


def names(w: int) -> list[str]:
    """The tasks' (and their tools') names: ``first``, ``mid0`` … ``mid<w-1>``, ``last``."""
    return ["first", *(f"mid{k}" for k in range(w)), "last"]


def fanout(w: int) -> str:
    """The YAML of the fan-out scenario with ``w`` concurrent tasks (see the module)."""
    tasks = names(w)
    text = tool_mesh(
        f"fanout-{w}",
        [(t, f"Tool {t}.", "write" if k % 3 == 2 else "read") for k, t in enumerate(tasks)],
    )
    text += "workflows:\n  - name: w\n    initiator: caller\n    protocol: MCP+\n"
    text += "    arrivals: {times: [0]}\n    timeout: 5\n    tasks:\n"
    text += "      - {id: first, tool: first}\n"
    for name in tasks[1:-1]:
        text += f"      - {{id: {name}, tool: {name}, after: [first]}}\n"
    text += f"      - {{id: last, tool: last, after: [{', '.join(tasks[1:-1])}]}}\n"
    return text


if __name__ == "__main__":
    sys.stdout.write(fanout(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
