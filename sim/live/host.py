"""One process of the live mesh: the agents it hosts, their servers and their callers.

:func:`main` runs in a process that :mod:`sim.live.deploy` forks from a warm template
(:mod:`sim.live.forked`), never started by a user. Its SPEC file names the scenario, the
router, the run, the agents of this process with the listening socket each receives
(bound by the controller, so a port is never lost between binding and serving), the
address of every agent of the mesh, and the files to write.

Each agent gets one HTTP server (uvicorn on its socket) whose application holds the MCP
endpoint (``/mcp``, the SDK's Streamable HTTP), the A2A endpoint and card (``/a2a``,
``/.well-known/agent-card.json``, the ``a2a-sdk``) and one JSON-RPC endpoint per other
protocol it speaks (``/rpc/<protocol>``); its :class:`~sim.live.node.Node` relays, its
:class:`~sim.live.toolserver.ToolHost` serves its tools, and, for an initiator, its
:class:`~sim.live.workflows.Workflows` run the workload once the controller says go.

The control channel is the process's stdin and stdout, one JSON object a line. In:
``{"cmd": "go", "origin": T}`` (``time.monotonic()`` of scenario time 0), ``{"cmd":
"link", "ends": [a, b], "up": bool}``, ``{"cmd": "drain"}`` (the drain cap: what runs
ends ``drain_cap``), ``{"cmd": "busy"}``, ``{"cmd": "stop"}``. Out: ``{"ready": [...]}``,
``{"idle": true}`` (every workflow of the process is over), ``{"busy": n}`` (messages
and requests in flight here), ``{"server_exit": {...}}`` (an agent's real server died:
:mod:`sim.live.realserver`), ``{"stopped": true}``, ``{"error": "..."}``. SIGCONT (the
end of an outage) makes its initiators learn of the outage; SIGTERM stops it like
``stop``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from sim.atomic import write_atomic
from sim.live.clock import SceneClock
from sim.live.node import Node, Sender
from sim.live.parts import PartWriter
from sim.live.wire import Spawn
from sim.scenario.model import Wire

__all__ = ["main"]

SEND_TIMEOUT = 3600.0
"""Wall seconds a hop's HTTP request may wait for its reply (the run's end comes first)."""


def _mcp_sender(base: str, me: str, spawn: Spawn, closing: anyio.Event) -> Sender:
    from sim.live.wire.mcp import McpSender

    return McpSender(base + "/mcp", me, spawn, closing, SEND_TIMEOUT)


def _a2a_sender(base: str, me: str, spawn: Spawn, closing: anyio.Event) -> Sender:
    from sim.live.wire.a2a import A2aSender

    return A2aSender(base, spawn, closing, SEND_TIMEOUT)


def _jsonrpc_sender(base: str, me: str, spawn: Spawn, closing: anyio.Event) -> Sender:
    from sim.live.wire.jsonrpc import JsonRpcSender

    return JsonRpcSender(base, spawn, closing, SEND_TIMEOUT)


#: the sender of each wire: (the next hop's base URL, the sending agent, spawn, closing)
SENDERS: Mapping[Wire, Callable[[str, str, Spawn, anyio.Event], Sender]] = {
    Wire.MCP: _mcp_sender,
    Wire.A2A: _a2a_sender,
    Wire.JSONRPC: _jsonrpc_sender,
}


class _Server:
    """uvicorn without its own signal handling (several serve in one process)."""

    @staticmethod
    def make(app: Any, sock: socket.socket) -> Any:
        import uvicorn

        class Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Any:
                yield

        config = uvicorn.Config(
            app,
            log_level="error",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=2,
            limit_concurrency=None,
            backlog=1024,
        )
        return Quiet(config), sock


class Host:
    """The agents of one process (see the module)."""

    def __init__(self, spec: dict[str, Any], fds: list[int]) -> None:
        from sim.live.agent import LiveAgent
        from sim.mesh.graph import ProtocolGraph
        from sim.mesh.registry import make_router
        from sim.scenario import load_scenario

        self.spec = spec
        scenario = load_scenario(spec["scenario"])
        self.scenario = scenario = scenario.model_copy(update=spec.get("overrides") or {})
        self.graph = ProtocolGraph.from_scenario(scenario)
        self.wires = scenario.wires()
        router = make_router(spec["router"], self.graph, scenario)
        origin = spec.get("origin")
        self.clock = SceneClock(float(origin) if origin is not None else 0.0, float(spec["speed"]))
        out = Path(spec["out"])
        run = int(spec["run"])
        self.part = PartWriter(out / "parts" / f"{spec['process']}.jsonl", self.clock, run)
        self.book: dict[str, str] = spec["book"]
        self.busy = 0
        self._senders: dict[tuple[str, str, str], Sender] = {}
        self._go = anyio.Event()
        self.closing = anyio.Event()  #: set at the end: the senders' clients close
        self.resumed_at: float | None = None
        self._stop = anyio.Event()
        self.task_group: Any = None
        index = {a.id: i for i, a in enumerate(scenario.agents)}
        specs = {a.id: a for a in scenario.agents}
        self.agents: list[LiveAgent] = []
        self.fds = list(fds)  #: the agents' listening sockets, in the spec's order
        for entry in spec["agents"]:
            aid = entry["id"]
            self.agents.append(
                LiveAgent(
                    specs[aid],
                    index[aid],
                    scenario,
                    self.graph,
                    router,
                    self.clock,
                    self.part,
                    out,
                    int(spec["seed"]),
                    run,
                    int(spec.get("generation", 0)),
                    self._sender,
                    self._spawn,
                    self.closing,
                    self.say,
                )
            )
        self.nodes = {a.id: a.node for a in self.agents}
        self.servers: list[tuple[Any, socket.socket]] = []
        self.workflows = [a.workflows for a in self.agents if a.workflows is not None]

    # -- plumbing --

    def _index(self, agent: str) -> int:
        return next(i for i, a in enumerate(self.scenario.agents) if a.id == agent)

    def _spawn(self, fn: Any) -> None:
        """Run ``fn()`` in the process's task group; a failure is reported to the
        controller (with its traceback on stderr) and stops the process."""

        async def guarded() -> None:
            try:
                await fn()
            except Exception as exc:
                import traceback

                traceback.print_exc(file=sys.stderr)
                self.say(error=f"{type(exc).__name__}: {exc}")
                self._stop.set()

        self.task_group.start_soon(guarded)

    def _sender(self, me: str, there: str, protocol: str) -> Sender:
        """The sender from ``me`` to ``there`` on ``protocol``'s wire (one per wire)."""
        wire = self.wires[protocol]
        key = (me, there, wire)
        hit = self._senders.get(key)
        if hit is None:
            hit = SENDERS[wire](self.book[there], me, self._spawn, self.closing)
            self._senders[key] = hit
        return hit

    def say(self, **status: Any) -> None:
        sys.stdout.write(json.dumps(status) + "\n")
        sys.stdout.flush()

    # -- the run --

    async def run(self) -> None:
        from sim.live.realserver import RealServerError

        async with anyio.create_task_group() as tg:
            self.task_group = tg
            for k, agent in enumerate(self.agents):
                try:
                    await agent.prepare()
                except RealServerError as exc:
                    where = ["agents", self._index(agent.id), "live"]
                    where.append(
                        "command" if agent.spec.live and agent.spec.live.command else "url"
                    )
                    self.say(error=str(exc), agent=agent.id, field=where)
                    self.closing.set()
                    tg.cancel_scope.cancel()
                    return
                capture = self.spec.get("capture")
                app = agent.app(
                    _Counting(self, agent.node),
                    self.book[agent.id],
                    Path(capture) if capture else None,
                )
                sock = socket.socket(fileno=self.fds[k])
                sock.setblocking(False)
                self.servers.append(_Server.make(app, sock))
            for server, sock in self.servers:
                tg.start_soon(server.serve, [sock])
            while not all(s.started for s, _ in self.servers):
                await anyio.sleep(0.01)
            self._spawn(self._control)
            with contextlib.suppress(NotImplementedError, ValueError, RuntimeError):
                import asyncio

                loop = asyncio.get_running_loop()
                loop.add_signal_handler(signal.SIGCONT, self._resumed)
                loop.add_signal_handler(signal.SIGTERM, self._stop.set)
                loop.add_signal_handler(signal.SIGINT, self._stop.set)
            self.say(ready=[a["id"] for a in self.spec["agents"]])
            await self._go.wait()
            for wf in self.workflows:
                self._spawn(lambda wf=wf: self._workload(wf))
            if not self.workflows:
                self.say(idle=True)
            await self._stop.wait()
            for node in self.nodes.values():
                node.run_end()
            self.part.close()
            failed: dict[str, int] = {}
            for wf in self.workflows:
                for reason, n in wf.tasks_failed.items():
                    failed[reason] = failed.get(reason, 0) + n
            counts = self.part.path.with_suffix(".counts.json")
            write_atomic(counts, json.dumps(failed, sort_keys=True))  # whole or absent
            self.closing.set()
            for server, _ in self.servers:
                server.should_exit = True
            with anyio.move_on_after(2.0):
                while any(s.started and not getattr(s, "_stopped", False) for s, _ in self.servers):
                    await anyio.sleep(0.05)
                    if all(s.should_exit for s, _ in self.servers):
                        break
            tg.cancel_scope.cancel()
        self.say(stopped=True)

    async def _workload(self, wf: Any) -> None:
        from sim.live.agent import stream
        from sim.live.workflows import arrivals

        spec = self.spec
        seed, run = int(spec["seed"]), int(spec["run"])
        planned = arrivals(
            self.scenario, wf.agent, lambda w: stream(seed, run, f"workflow-{w}", "arrivals")
        )
        await wf.run(planned)
        if all(w.idle.is_set() for w in self.workflows):
            self.say(idle=True)

    async def _warm(self) -> None:
        """Open every connection a hop of this process may use, then say so: the first
        use of a connection costs a handshake no later hop pays."""
        for agent in self.agents:
            for link in self.graph.incident(agent.id):
                other = link.other(agent.id)
                for protocol in link.latency:
                    with contextlib.suppress(Exception):  # a neighbour not there: the run tells
                        await self._sender(agent.id, other, protocol).warm()
        self.say(warm=True)

    def _resumed(self) -> None:
        for wf in self.workflows:
            wf.resumed()

    async def _lines(self) -> Any:
        """The controller's commands, read from stdin without a thread (a stop must not
        wait for a blocked read); ends when stdin closes."""
        fd = sys.stdin.fileno()
        os.set_blocking(fd, False)
        buffer = b""
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line

    async def _control(self) -> None:
        async for line in self._lines():
            try:
                command = json.loads(line)
            except ValueError:
                continue
            cmd = command.get("cmd")
            if cmd == "go":
                self.clock.origin = float(command["origin"])
                self.resumed_at = command.get("resume")
                self._go.set()
            elif cmd == "link":
                a, b = command["ends"]
                for me, other in ((a, b), (b, a)):
                    node = self.nodes.get(me)
                    if node is not None and other in node.links:
                        node.links[other].down = not command["up"]
                self.say(link=[a, b], up=bool(command["up"]), t=self.clock.now())
            elif cmd == "warm":
                self._spawn(self._warm)
            elif cmd == "drain":
                for wf in self.workflows:
                    wf.unfinished()
            elif cmd == "busy":
                held = sum(len(n.holding) for n in self.nodes.values())
                waiting = sum(wf.caller.in_flight for wf in self.workflows)
                self.say(busy=self.busy + held + waiting)
            elif cmd == "stop":
                break
        self._stop.set()


class _Counting:
    """The node as the wires' receiver, counting the messages being handled."""

    def __init__(self, host: Host, node: Node) -> None:
        self.host = host
        self.node = node

    async def on_message(self, protocol: str, env: Any, payload: Any, notice: Any) -> Any:
        self.host.busy += 1
        try:
            return await self.node.on_message(protocol, env, payload, notice)
        finally:
            self.host.busy -= 1


def main(spec_file: str, fds: list[int]) -> int:
    """Run the process described by ``spec_file``; ``fds`` are its agents' listening
    sockets, in the spec's order."""
    from sim.processes import die_with_parent

    die_with_parent()
    spec = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    import logging

    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    logging.getLogger("uvicorn").setLevel(logging.CRITICAL)
    try:
        host = Host(spec, fds)
        anyio.run(host.run)
    except Exception as exc:  # reported to the controller, which names the agent
        sys.stdout.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        sys.stdout.flush()
        return 1
    return 0
