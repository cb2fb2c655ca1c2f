"""One scenario agent as the live mesh runs it: its node, its tools, its caller, its
HTTP application. Built by :class:`~sim.live.host.Host` for each agent of its process.

Random streams are the agent's own (:func:`stream`: latency, service, errors,
translation, approvals, grants), the same for every run with the same seed, run and
agent. Each agent's application holds ``/mcp`` (the MCP SDK's Streamable HTTP), the
A2A endpoint and card when it speaks a protocol on the A2A wire, and ``/rpc/<protocol>``
for each protocol it speaks on the JSON-RPC wire (:meth:`ProtocolSpec.transport`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.live.clock import DownLog, SceneClock
from sim.live.node import Link, Node, Sender
from sim.live.parts import IdSpace, PartWriter
from sim.live.wire import Receiver, Spawn
from sim.mesh.graph import ProtocolGraph
from sim.mesh.routing import Router
from sim.scenario.model import AgentSpec, Scenario, Wire

__all__ = ["GENERATION", "LiveAgent", "latency_sampler", "stream"]

GENERATION = 1_000_000
"""Ids of a restarted process start this many ids per agent further on."""


def stream(seed: int, run: int, agent: str, name: str) -> random.Random:
    """The random stream ``name`` of ``agent`` in live run ``run`` (the same every time:
    ``random.Random`` seeds a string through SHA-512, never through ``hash()``)."""
    return random.Random(f"protomesh-live/{seed}/{run}/{agent}/{name}")


def latency_sampler(link: Any, protocol: str, rng: random.Random) -> Callable[[], float]:
    """Scenario seconds of one crossing of ``link`` in ``protocol``: its law, or its
    mean latency plus an exponential jitter (the engine's rule)."""
    law = link.laws.get(protocol)
    if law is not None:
        sampler: Callable[[], float] = law.sampler(rng)
        return sampler
    w = float(link.latency[protocol])
    jitter = float(link.jitter)
    if jitter <= 0:
        return lambda: w
    rate = 1.0 / jitter
    return lambda: w - math.log(1.0 - rng.random()) / rate


class LiveAgent:
    """The parts of one agent (see the module); :meth:`prepare` starts what must start
    before the agent serves (a real server in its place)."""

    def __init__(
        self,
        spec: AgentSpec,
        index: int,
        scenario: Scenario,
        graph: ProtocolGraph,
        router: Router,
        clock: SceneClock,
        part: PartWriter,
        out: Path,
        seed: int,
        run: int,
        generation: int,
        senders: Callable[[str, str, str], Sender],
        spawn: Spawn,
        closing: Any,
        say: Callable[..., None] = lambda **status: None,
    ) -> None:
        self.spec = spec
        self.id = aid = spec.id
        self.scenario = scenario
        self.graph = graph
        self.clock = clock
        self.part = part
        self.seed, self.run = seed, run
        self.spawn, self.closing = spawn, closing
        stride = len(scenario.agents)
        self.downlog = DownLog(out / "ctl" / f"{aid}.down")
        self.ids = IdSpace(index, stride, start=generation * GENERATION * stride)
        latency = stream(seed, run, aid, "latency")
        links = {
            link.other(aid): Link({p: latency_sampler(link, p, latency) for p in link.latency})
            for link in graph.incident(aid)
        }
        self.node = Node(
            aid,
            graph,
            clock,
            part,
            self.downlog,
            self.ids,
            links,
            lambda there, proto: senders(aid, there, proto),
            stream(seed, run, aid, "translation"),
        )
        self.real: Any = None
        if spec.live is not None and (spec.live.command or spec.live.url):
            from sim.live.realserver import RealServer

            # its death during the run goes to the controller (``server_exit``)
            self.real = RealServer(
                aid, spec.live, spawn, closing, lambda record: say(server_exit=record)
            )
        self.workflows: Any = None
        if any(aid in scenario.initiators_of(wf) for wf in scenario.workflows):
            self.workflows = self._initiator(router)

    async def prepare(self) -> None:
        """The tool server behind the node: the real server started and checked, or the
        scenario's simulated tools (raises :class:`~sim.live.realserver.RealServerError`)."""
        from sim.live.toolserver import Simulated, ToolHost

        spec = self.spec
        if not spec.tools:
            return
        executes: Any
        if self.real is not None:
            await self.real.start(spec.tools)
            executes = self.real
        else:
            tools = [t for t in self.scenario.tools if t.name in spec.tools]
            service = stream(self.seed, self.run, self.id, "service")
            errors = stream(self.seed, self.run, self.id, "errors")
            executes = Simulated(tools, self.clock, service, errors)
        self.node.server = ToolHost(
            self.id,
            self.scenario,
            spec.tools,
            self.graph.table,
            self.clock,
            self.part,
            self.downlog,
            executes,
            spec.concurrency,
        )

    def app(self, receiver: Receiver, base_url: str, capture: Path | None = None) -> Any:
        """The agent's HTTP application, handing every message to ``receiver``; with
        ``capture`` (a folder), what it receives is recorded there (:mod:`sim.live.capture`)."""
        from sim import __version__
        from sim.live.wire.jsonrpc import jsonrpc_routes
        from sim.live.wire.mcp import mcp_server

        fields = self.graph.table.fields
        mcp = mcp_server(self.id, __version__, receiver, fields)
        app = mcp.streamable_http_app(host="127.0.0.1", streamable_http_path="/mcp")
        spoken = self.spec.protocols.keys()
        others = [p for p in spoken if p in self.scenario.on_wire(Wire.JSONRPC)]
        for route in jsonrpc_routes(others, receiver, fields):
            app.router.routes.append(route)
        carried = self.scenario.on_wire(Wire.A2A) & spoken
        if carried:
            from sim.live.wire.a2a import a2a_routes

            skills = [
                (t.name, t.description) for t in self.scenario.tools if t.name in self.spec.tools
            ]
            for route in a2a_routes(self.id, base_url, receiver, fields, carried, skills):
                app.router.routes.append(route)
        if capture is not None:
            from sim.live.capture import Capture

            return Capture(app, capture / f"{self.id}.jsonl", self.clock)
        return app

    def _initiator(self, router: Router) -> Any:
        from sim.approval import make_policy
        from sim.live.caller import Caller
        from sim.live.routes import Routes
        from sim.live.workflows import Workflows

        scenario, aid = self.scenario, self.id
        seed, run = self.seed, self.run
        routes = Routes(aid, router, self.graph, scenario.routing.suspect_ttl)
        timeouts = [
            float(t.timeout if t.timeout is not None else wf.timeout)
            for wf in scenario.workflows
            for t in wf.tasks
        ]
        approval = scenario.approval
        caller = Caller(
            aid,
            self.node,
            routes,
            self.clock,
            self.part,
            self.ids,
            make_policy(approval),
            approval.mcp_policy.value,
            approval.latency.law().sampler(stream(seed, run, aid, "approvals")),
            approval.grant_probability,
            stream(seed, run, aid, "grants"),
            {t.name: _error_types(t) for t in scenario.tools},
            max(timeouts, default=30.0),
            self.spawn,
            {t.name: t.descriptor() for t in scenario.tools},
            scenario=scenario.name,
        )
        return Workflows(
            aid,
            scenario,
            caller,
            routes,
            self.clock,
            self.part,
            self.ids,
            self.downlog,
            self.spawn,
        )


def _error_types(tool: Any) -> tuple[str, ...]:
    """The error types a server of ``tool`` can answer: its simulated ``errors`` and the
    errors its ``failure_modes`` declare (a real server's ``isError`` text names them,
    and it has no ``errors`` probabilities)."""
    return tuple(dict.fromkeys([*tool.errors, *(m.error for m in tool.failure_modes)]))
