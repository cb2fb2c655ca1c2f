"""Hand-built inputs for the engine's component tests (no replication is run).

``mesh``: a caller ``a``, a gateway ``g`` and a tool server ``s`` in a line, MCP
everywhere, constant latencies (no jitter), one read tool and one write tool.
``kernel``: a fresh kernel whose trace goes to memory at level ``full``; ``lines(k)``
reads back what its recorder wrote.
"""

from __future__ import annotations

import io
import json
from typing import Any

from sim.engine.kernel import Kernel
from sim.engine.trace import TraceWriter

MESH = """
name: parts
seed: 11
duration: 100
protocols: [MCP]
approval: {latency: {dist: constant, value: 2.0}, grant_probability: 1.0}
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: g, type: GATEWAY, protocols: {MCP: 1.0}}
  - {id: s, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [read_it, write_it], concurrency: 1}
links:
  - {between: [a, g], latency: {MCP: 0.25}}
  - {between: [g, s], latency: {MCP: 0.5}}
tools:
  - name: read_it
    description: Reads a record.
    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
    side_effects: read
    annotations: {readOnlyHint: true}
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 2}}
    service_time: {dist: constant, value: 1.5}
  - name: write_it
    description: Writes a record.
    input_schema: {type: object, properties: {id: {type: string}}}
    side_effects: write
    requires_approval: true
    annotations: {readOnlyHint: false}
    service_time: {dist: constant, value: 1.0}
workflows:
  - name: w
    initiator: a
    protocol: MCP
    arrivals: {times: [0]}
    timeout: 5
    tasks:
      - {id: r, tool: read_it, args: {id: x}}
      - {id: wr, tool: write_it, args: {id: x}, after: [r]}
"""


def make_kernel(level: str = "full") -> Kernel:
    return Kernel(11, 0, TraceWriter(io.StringIO(), 0, level))


def lines(kernel: Kernel) -> list[dict[str, Any]]:
    """The lines the kernel's recorder wrote so far, decoded."""
    kernel.recorder.flush()
    file = kernel.recorder.writer.file
    assert isinstance(file, io.StringIO)
    return [json.loads(x) for x in file.getvalue().splitlines()]


class Sent:
    """A transport stand-in: records what a component sends (time, kind, attempt, payload)."""

    def __init__(self, env: Any) -> None:
        from sim.engine.clock import Deadlines

        self.env = env
        self.sent: list[tuple[float, str, int, Any]] = []
        self.messages: list[Any] = []
        self.timers: dict[float, Deadlines] = {}

    def deadlines(self, timeout: float) -> Any:
        from sim.engine.clock import Deadlines

        return self.timers.setdefault(timeout, Deadlines(self.env, timeout))

    def send(
        self, kind: str, owner: Any, path: Any, attempt: int, payload: Any, deliver: Any
    ) -> Any:
        from sim.engine.transport import Message

        self.sent.append((self.env.now, kind, attempt, payload))
        msg = Message(len(self.messages), kind, owner, path, attempt, payload, deliver)
        self.messages.append(msg)
        return msg


class Outcomes:
    """A workflows stand-in: records what a caller reports."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.done: list[tuple[float, str, str, str]] = []
        self.fallbacks: list[tuple[int, str]] = []

    def task_done(self, inst: Any, task: Any, status: str, reason: str) -> None:
        self.done.append((self.env.now, task.id, status, reason))

    def fallback(self, inv: Any, tool: str) -> None:
        self.fallbacks.append((inv.id, tool))
