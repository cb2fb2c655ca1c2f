"""The composition root: build one replication from a scenario, run it, write the results.

``run_replication(scenario, router, rep, out_dir, trace_level=None)`` writes
``out_dir/trace.jsonl`` (streamed as the run goes) and ``out_dir/metrics.json`` and
returns the metrics. :class:`Replication` wires the components (each receives what it
uses, nothing else): kernel → topology → route service → transport → tool servers →
callers and their tool discovery → workflows → failures. Workflow arrivals stop at
``duration``; the run then drains: it stops as soon as no instance is running (never
before ``duration``), or at the drain cap (:func:`drain_cap`),
where the instances still running end ``failed`` with reason ``drain_cap``. A run past
its guard's budget raises :class:`~sim.engine.guard.Runaway`, located. An
exception inside the run becomes a :class:`ReplicationError` naming the scenario, the
replication and the simulated time; the trace written so far is flushed and stays.

The scenario (pydantic) is converted once into plain objects; nothing pydantic is
touched per event.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any, BinaryIO

from simpy.events import Event

from sim.approval import make_policy
from sim.engine.caller import Approval, Caller
from sim.engine.discovery import ToolDiscovery
from sim.engine.failures import Failures
from sim.engine.faults import attach, faults_of
from sim.engine.guard import DEFAULT_GUARD, Guard, Runaway, explain
from sim.engine.kernel import Kernel
from sim.engine.loop import FREEZE_AGENTS, run_until
from sim.engine.metrics import dumps
from sim.engine.randomness import sampler
from sim.engine.routes import RouteService
from sim.engine.server import ToolServer
from sim.engine.topology import Node, Topology
from sim.engine.trace import TraceWriter
from sim.engine.transport import Transport
from sim.engine.views import ToolRT, Views, tools_of
from sim.engine.workflows import WorkflowRT, Workflows
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import Router
from sim.scenario.model import Scenario
from sim.vocabulary import TRACE_LEVELS


class ReplicationError(RuntimeError):
    """An error inside a replication, with where and when it happened."""

    def __init__(self, scenario: str, router: str, rep: int, now: float, cause: BaseException):
        self.scenario = scenario
        self.router = router
        self.rep = rep
        self.now = now
        self.cause = cause
        super().__init__(
            f"scenario '{scenario}', router {router}, replication {rep}, at simulated time "
            f"t={now:.6f} s: {type(cause).__name__}: {cause}"
        )


class Replication:
    """One replication's components, built from the scenario; ``run()`` runs it.

    Public for tests, benchmarks and the experiment runner's hook: ``env``, ``rep``,
    ``router_name``, ``metrics`` and the components."""

    def __init__(
        self,
        scenario: Scenario,
        router_name: str,
        rep: int,
        trace: TraceWriter,
        graph: ProtocolGraph | None = None,
        router: Router | None = None,
        guard: Guard | None = None,
        topology: Topology | None = None,
    ) -> None:
        """``graph`` and ``router`` reuse a prebuilt protocol graph and router of it (a
        router whose answers depend on the graph only: ``smc`` compiles them once);
        ``guard`` bounds the run (:mod:`sim.engine.guard`; default: its default budget);
        ``topology`` is a topology of ``graph`` never run (:meth:`Topology.fresh`)."""
        self.scenario = scenario
        self.guard = guard if guard is not None else DEFAULT_GUARD
        self.rep = rep
        self.router_name = router_name
        self.kernel = kernel = Kernel(scenario.seed, rep, trace)
        self.env = env = kernel.env
        self.metrics = kernel.metrics
        self.recorder = rec = kernel.recorder
        later, streams = kernel.later, kernel.streams
        self.duration = float(scenario.duration)
        self.graph = graph if graph is not None else ProtocolGraph.from_scenario(scenario)
        if topology is not None and topology.graph is not self.graph:
            raise ValueError("the topology given is not one of the replication's graph")
        self.topology = topology = topology if topology is not None else Topology(self.graph)
        self.faults = faults_of(scenario, streams.faults)
        attach(self.faults, topology)  # before any path is compiled
        topology.draw_latencies(streams.latency)  # so are the distribution latencies
        self.routes = routes = RouteService(
            topology,
            router if router is not None else make_router(router_name, self.graph, scenario),
            router_name,
        )
        self.transport = transport = Transport(
            env, later, rec, streams.latency, streams.translation
        )
        approval = scenario.approval
        gate = Approval(
            sampler(approval.latency, streams.approvals),
            float(approval.grant_probability),
            streams.approvals,
            make_policy(approval),
        )
        self.tools: dict[str, ToolRT] = tools_of(
            scenario.tools, lambda t: sampler(t.service_time, streams.service)
        )
        views = Views(approval.mcp_policy.value)
        dialects = scenario.dialects()
        workflows = [
            WorkflowRT(wf, scenario.initiators_of(wf), dialects) for wf in scenario.workflows
        ]
        list_timeout = max((t.timeout for wf in workflows for t in wf.tasks), default=30.0)
        suspect_ttl = float(scenario.routing.suspect_ttl)
        initiators = {a for wf in scenario.workflows for a in scenario.initiators_of(wf)}
        self.servers: dict[str, ToolServer] = {}
        self.callers: dict[str, Caller] = {}
        known: dict[str, ToolDiscovery] = {}
        for agent in self.graph.agents:
            node = topology.nodes[agent.id]
            if agent.tools:
                self.servers[agent.id] = ToolServer(
                    env, later, rec, transport, streams.errors, node, agent.concurrency
                )
            if agent.id in initiators:
                caller = Caller(
                    env, later, rec, transport, routes, gate, kernel.new_id, node, suspect_ttl
                )
                self.callers[agent.id] = caller
                known[agent.id] = ToolDiscovery(env, rec, transport, views, caller, list_timeout)
        self.workflows = Workflows(
            env,
            later,
            rec,
            streams.arrivals,
            self.duration,
            workflows,
            self.callers,
            known,
            routes,
            self.tools,
            self.check_finished,
        )
        for caller in self.callers.values():
            caller.outcomes = self.workflows
        self.failures = Failures(env, later, rec, streams.failures, topology)
        self.failures.on_node_down.append(self._node_down)
        self.finished: Event = env.event()
        max_retry = max(
            (
                fm.recovery.retry
                for t in scenario.tools
                for fm in t.failure_modes
                if fm.recovery.retry is not None
            ),
            default=0,
        )
        self.cap = drain_cap(self.duration, workflows, max_retry)
        self._started = False

    def check_finished(self) -> None:
        """Stop the run when arrivals are over and no instance is running."""
        wfs = self.workflows
        if (
            self._started
            and wfs.arrivals_open == 0
            and wfs.live == 0
            and not self.finished.triggered
            and self.env.now >= self.duration
        ):
            self.finished.succeed()

    def _node_down(self, node: Node) -> None:
        if node.server is not None:
            node.server.on_down()
        self.workflows.initiator_down(node.id)

    def run(self) -> None:
        """Run until every instance is over after ``duration``, or the drain cap; raise
        :class:`~sim.engine.guard.Runaway` (located) when the guard's budget is passed."""
        self.failures.schedule(self.faults)
        self.workflows.start()
        self._started = True
        self.kernel.later(self.duration, None, lambda _e: self.check_finished())
        cap = self.env.timeout(self.cap)
        try:
            large = len(self.graph.agents) >= FREEZE_AGENTS
            run_until(self.env, self.env.any_of([self.finished, cap]), self.guard, large)
        except Runaway as stop:
            raise explain(stop, self.scenario, self.metrics, self.guard) from None
        if not self.finished.triggered:
            self.workflows.unfinished()
        self.transport.close()
        self.failures.active = False


#: The name the experiment runner, the tests and the benchmarks use.
World = Replication


def drain_cap(world_duration: float, workflows: list[WorkflowRT], max_retry: int) -> float:
    """The time after which in-flight work is abandoned: enough for every task of the
    longest workflow to use all its timeouts, retries and backoffs, plus approvals."""
    longest = 0.0
    for wf in workflows:
        per_task = max((t.timeout for t in wf.tasks), default=30.0)
        attempts = 2 * max_retry + 2
        longest = max(longest, len(wf.tasks) * attempts * (per_task + 30.0))
    return world_duration + max(60.0, longest) if math.isfinite(longest) else world_duration


class TappedFile:
    """A :class:`~sim.engine.trace.TextSink` over a binary trace file that also hands each
    block it writes, encoded (UTF-8, whole lines), to ``tap``: what consumes the trace in
    process as it is written (``run``'s checks). The file's bytes are the text file's."""

    __slots__ = ("file", "tap")

    def __init__(self, file: BinaryIO, tap: Callable[[bytes], object]) -> None:
        self.file = file
        self.tap = tap

    def write(self, text: str, /) -> int:
        data = text.encode("utf-8")
        self.file.write(data)
        self.tap(data)
        return len(text)

    def flush(self) -> None:
        self.file.flush()


def run_replication(
    scenario: Scenario,
    router_name: str,
    rep: int,
    out_dir: str | os.PathLike[str],
    trace_level: str | None = None,
    *,
    graph: ProtocolGraph | None = None,
    compiled_router: Router | None = None,
    hook: Callable[[Replication], None] | None = None,
    guard: Guard | None = None,
    topology: Topology | None = None,
    tap: Callable[[bytes], object] | None = None,
) -> dict[str, Any]:
    """Run replication ``rep`` of ``scenario`` with ``router_name``; write the trace and
    metrics to ``out_dir``; return the metrics. ``trace_level`` overrides the
    scenario's. ``graph`` reuses a prebuilt protocol graph and ``compiled_router`` a router built
    on it (benchmarks, experiment workers) and ``topology`` a fresh topology of it
    (:meth:`Topology.fresh`); ``hook`` is called with the built replication before it runs
    (tests); ``guard`` bounds the run; ``tap``, if given, is handed each block of the
    trace as it is written (UTF-8 bytes, whole lines: :class:`TappedFile`;
    the file's bytes are the same)."""
    level = trace_level or scenario.trace.value
    if level not in TRACE_LEVELS:
        raise ValueError(f"trace level must be one of {', '.join(TRACE_LEVELS)}, not '{level}'")
    out = FsPath(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_file = out / "metrics.json"
    if metrics_file.exists():
        metrics_file.unlink()  # a stale file must not pass for this run's
    world: Replication | None = None
    if tap is None:
        fh: Any = open(out / "trace.jsonl", "w", encoding="utf-8", newline="\n")  # noqa: SIM115
    else:
        fh = open(out / "trace.jsonl", "wb")  # noqa: SIM115 - closed by the with below
    with fh:
        trace = TraceWriter(fh if tap is None else TappedFile(fh, tap), rep, level)
        try:
            world = Replication(
                scenario, router_name, rep, trace, graph, compiled_router, guard, topology
            )
            if hook is not None:
                hook(world)
            world.run()
        except Exception as exc:
            trace.flush()
            now = float(world.env.now) if world is not None else 0.0
            raise ReplicationError(scenario.name, router_name, rep, now, exc) from exc
        trace.flush()
    header = {
        "scenario": scenario.name,
        "router": router_name,
        "replication": rep,
        "seed": scenario.seed,
        "trace_level": level,
        "duration": float(scenario.duration),
        "end_time": round(float(world.env.now), 6),
        "trace_lines": trace.lines,
    }
    metrics = world.metrics.to_json(header)
    metrics["hops_by_link"] = world.topology.hops_by_link()
    metrics_file.write_text(dumps(metrics), encoding="utf-8")
    return metrics
