"""One replication: build the SimPy world from a scenario, run it, write the results.

``run_replication(scenario, router, rep, out_dir, trace_level=None)`` writes
``out_dir/trace.jsonl`` (streamed as the run goes) and ``out_dir/metrics.json`` and
returns the metrics. Workflow arrivals stop at ``duration``; the run then drains:
it stops as soon as no instance is running, or at the drain cap (see
:func:`sim.engine.workflows.drain_cap`), where the instances still running end
``failed`` with reason ``drain_cap``. An exception inside the run becomes a
:class:`ReplicationError` naming the scenario, the replication and the simulated
time; the trace written so far is flushed and stays.

The scenario (pydantic) is converted once into plain objects; nothing pydantic is
touched per event.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

import simpy
from simpy.events import Event

from sim.engine.agents import Caller, ToolRT, ToolServer, ViewRT, make_view
from sim.engine.clock import scheduler
from sim.engine.failures import Failures, Suspicion
from sim.engine.metrics import Metrics, dumps
from sim.engine.network import LinkState, Node, Path, Transport
from sim.engine.randomness import Streams, sampler
from sim.engine.trace import TRACE_LEVELS, TraceWriter
from sim.engine.workflows import Workflows, drain_cap
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import NO_DOWN, DownSet, Route
from sim.scenario.model import Scenario


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


class World:
    """Everything one replication shares: env, streams, trace, metrics, nodes, agents."""

    def __init__(
        self,
        scenario: Scenario,
        router_name: str,
        rep: int,
        trace: TraceWriter,
        graph: ProtocolGraph | None = None,
    ) -> None:
        self.scenario = scenario
        self.rep = rep
        self.router_name = router_name
        self.env = simpy.Environment(initial_time=0.0)
        self.later = scheduler(self.env)
        self.streams = Streams(scenario.seed, rep)
        self.trace = trace
        self.metrics = Metrics()
        self.duration = float(scenario.duration)
        self.graph = graph if graph is not None else ProtocolGraph.from_scenario(scenario)
        self.router = make_router(router_name, self.graph, scenario)
        #: the router's own policy: static callers ignore failures (no suspicion)
        self.static = self.router.static
        self.nodes: dict[str, Node] = {
            a.id: Node(a.id, a.type, a.speaks, a.translation_delay) for a in self.graph.agents
        }
        self.links: dict[frozenset[str], LinkState] = {
            link.ends: LinkState(link.a, link.b, dict(link.latency), link.jitter)
            for link in self.graph.links
        }
        self.hosted: dict[str, tuple[str, ...]] = {
            a.id: tuple(a.tools) for a in self.graph.agents if a.tools
        }
        approval = scenario.approval
        self.mcp_policy = approval.mcp_policy.value
        self.grant_probability = float(approval.grant_probability)
        self.approval_latency = sampler(approval.latency, self.streams.approvals)
        self.suspect_ttl = float(scenario.routing.suspect_ttl)
        self.tools: dict[str, ToolRT] = {
            t.name: ToolRT(t, sampler(t.service_time, self.streams.service)) for t in scenario.tools
        }
        self._views: dict[tuple[str, frozenset[str]], ViewRT] = {}
        self._paths: dict[Any, Path] = {}
        self._routes: dict[Any, Path] = {}
        self.next_inv = 0
        self.transport = Transport(self)
        self.servers: dict[str, ToolServer] = {}
        self.callers: dict[str, Caller] = {}
        initiators = {a for wf in scenario.workflows for a in scenario.initiators_of(wf)}
        for agent in self.graph.agents:
            node = self.nodes[agent.id]
            if agent.tools:
                self.servers[agent.id] = ToolServer(self, node, agent.concurrency)
            if agent.id in initiators:
                self.callers[agent.id] = Caller(self, node)
        self.workflows = Workflows(
            self, [(wf, scenario.initiators_of(wf)) for wf in scenario.workflows]
        )
        self.list_timeout = max(
            (t.timeout for wf in self.workflows.workflows for t in wf.tasks), default=30.0
        )
        self.failures = Failures(self)
        self.failures.on_node_down.append(self._node_down)
        self.finished: Event = self.env.event()
        max_retry = max(
            (
                fm.recovery.retry
                for t in scenario.tools
                for fm in t.failure_modes
                if fm.recovery.retry is not None
            ),
            default=0,
        )
        self.cap = drain_cap(self.duration, self.workflows.workflows, max_retry)
        self._started = False

    # -- shared services --

    def new_inv(self) -> int:
        """A fresh invocation id."""
        inv = self.next_inv
        self.next_inv = inv + 1
        return inv

    def new_suspicion(self) -> Suspicion:
        """A failure detector for one caller."""
        return Suspicion(self.suspect_ttl)

    def view_of(self, tool: ToolRT, fields: frozenset[str]) -> ViewRT:
        """The (shared, cached) view of ``tool`` projected to ``fields``."""
        key = (tool.name, fields)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = make_view(tool, fields, self.mcp_policy)
        return view

    def compiled(self, route: Route, start: str) -> Path:
        """The compiled :class:`Path` of ``route`` starting in protocol ``start``."""
        key = (route.path, route.protocols, route.translations, start)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = Path(self, route, start)
        return path

    def path_to(self, source: str, need: str, rho: str, down: DownSet) -> Path:
        """The router's path from ``source`` to a server of ``need`` issued in ``rho``."""
        key: Any = (source, need, rho) if down is NO_DOWN else (source, need, rho, down)
        path = self._routes.get(key)
        if path is None:
            route = self.router.serve(source, need, source_protocol=rho, down=down)
            path = self.compiled(route, rho)
            if len(self._routes) > 200_000:
                self._routes.clear()
            self._routes[key] = path
        return path

    def hops_by_link(self) -> dict[str, int]:
        """Hops per link as ``{"a|b": n}`` (a < b, links crossed at least once, sorted)."""
        used = {"|".join(sorted((ls.a, ls.b))): ls.hops for ls in self.links.values() if ls.hops}
        return dict(sorted(used.items()))

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
        caller = self.callers.get(node.id)
        if caller is not None and caller.live:
            self.workflows.initiator_down(caller)

    # -- the run --

    def run(self) -> None:
        """Run until every instance is over after ``duration``, or the drain cap."""
        self.failures.schedule(self.scenario.failures)
        self.workflows.start()
        self._started = True
        self.later(self.duration, None, lambda _e: self.check_finished())
        cap = self.env.timeout(self.cap)
        self.env.run(until=self.env.any_of([self.finished, cap]))
        if not self.finished.triggered:
            self.workflows.unfinished()
        self.transport.close()
        self.failures.active = False


def run_replication(
    scenario: Scenario,
    router_name: str,
    rep: int,
    out_dir: str | os.PathLike[str],
    trace_level: str | None = None,
    *,
    graph: ProtocolGraph | None = None,
    hook: Callable[[World], None] | None = None,
) -> dict[str, Any]:
    """Run replication ``rep`` of ``scenario`` with ``router_name``; write the trace and
    metrics to ``out_dir``; return the metrics. ``trace_level`` overrides the
    scenario's. ``graph`` reuses a prebuilt protocol graph (benchmarks); ``hook`` is
    called with the built world before it runs (tests)."""
    level = trace_level or scenario.trace.value
    if level not in TRACE_LEVELS:
        raise ValueError(f"trace level must be one of {', '.join(TRACE_LEVELS)}, not '{level}'")
    out = FsPath(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_file = out / "metrics.json"
    if metrics_file.exists():
        metrics_file.unlink()  # a stale file must not pass for this run's
    world: World | None = None
    with open(out / "trace.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        trace = TraceWriter(fh, rep, level)
        try:
            world = World(scenario, router_name, rep, trace, graph)
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
    metrics["hops_by_link"] = world.hops_by_link()
    metrics_file.write_text(dumps(metrics), encoding="utf-8")
    return metrics
