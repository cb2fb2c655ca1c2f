"""The workflows alone: a stand-in caller records the invocations it is asked for and the
test reports outcomes back through the ``Outcomes`` protocol, as a caller would."""

from __future__ import annotations

import random
from typing import Any

import pytest

from sim.calculus.mcp import ALL_FIELDS
from sim.engine.kernel import Kernel
from sim.engine.randomness import sampler
from sim.engine.routes import RouteService
from sim.engine.topology import Topology
from sim.engine.views import ToolRT, make_view
from sim.engine.workflows import WorkflowRT, Workflows
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import NO_DOWN
from sim.scenario.model import Scenario
from tests.harness.engine_parts import lines


class Known:
    """A tool discovery stand-in: every view is known at once."""

    def __init__(self, views: dict[str, Any]) -> None:
        self.views = views
        self.latest = views
        self.fed = frozenset(x for v in views.values() for x in v.feeds)

    def known(self, tool: str, path: Any) -> Any:
        return self.views[tool]

    def ensure_view(self, inst: Any, task: Any, need: str, tool: Any, path: Any, then: Any) -> None:
        then(self.views[tool.name], path)


class FakeCaller:
    def __init__(self, node: Any, routes: RouteService) -> None:
        self.node = node
        self.id = node.id
        self.routes = routes
        self.invoked: list[tuple[float, str]] = []
        self.env: Any = None

    def path_for(self, need: str, rho: str) -> Any:
        return self.routes.path_to(self.id, need, rho, NO_DOWN)

    def invoke(self, inst: Any, task: Any, view: Any, path: Any, need: str, **_: Any) -> None:
        self.invoked.append((self.env.now, task.id))


def build(
    kernel: Kernel,
    mesh: Scenario,
    graph: ProtocolGraph,
    on_idle: Any = lambda: None,
    router: str = "dijkstra",
    kind: type[FakeCaller] = FakeCaller,
    times: tuple[float, ...] | None = None,
) -> tuple[Workflows, Any, RouteService, dict[str, Any]]:
    """The workflows of ``mesh`` started by a caller stand-in ``kind`` at ``a`` (its
    workflow's arrivals at ``times`` when given): (workflows, caller, routes, views)."""
    topology = Topology(graph)
    routes = RouteService(topology, make_router(router, graph), router)
    tools = {t.name: ToolRT(t, sampler(t.service_time, random.Random(0))) for t in mesh.tools}
    views = {n: make_view(t, ALL_FIELDS, "never") for n, t in tools.items()}
    caller = kind(topology.nodes["a"], routes)
    caller.env = kernel.env
    wf = WorkflowRT(mesh.workflows[0], ("a",), mesh.dialects())
    if times is not None:
        wf.times = times
    wfs = Workflows(
        kernel.env,
        kernel.later,
        kernel.recorder,
        random.Random(0),
        100.0,
        [wf],
        {"a": caller},
        {"a": Known(views)},  # type: ignore[dict-item]
        routes,
        tools,
        on_idle,
    )
    return wfs, caller, routes, views


def test_tasks_start_in_order_and_the_instance_ends_when_they_succeed(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    idle: list[float] = []
    wfs, caller, _, _ = build(kernel, mesh, graph, lambda: idle.append(kernel.env.now))
    wfs.start()
    kernel.env.run()
    assert caller.invoked == [(0.0, "r")]  # wr comes after r (≺)
    (inst,) = wfs.running["a"].values()
    r, wr = inst.wf.tasks
    wfs.task_done(inst, r, "succeeded", "")
    assert caller.invoked == [(0.0, "r"), (0.0, "wr")]
    assert wfs.live == 1
    wfs.task_done(inst, wr, "succeeded", "")
    assert wfs.live == 0 and wfs.running["a"] == {}
    got = [(x["label"], x["detail"]) for x in lines(kernel)]
    assert got == [("wf_start", {}), ("wf_end", {"status": "succeeded", "latency": 0.0})]
    assert idle == [0.0, 0.0]  # arrivals closed, then the last instance ended


def test_a_failed_task_fails_the_instance_and_nothing_else_starts(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    wfs, caller, _, _ = build(kernel, mesh, graph)
    wfs.start()
    kernel.env.run()
    (inst,) = wfs.running["a"].values()
    wfs.task_done(inst, inst.wf.tasks[0], "failed", "abort")
    assert caller.invoked == [(0.0, "r")]
    (end,) = [x for x in lines(kernel) if x["label"] == "wf_end"]
    assert end["detail"] == {"status": "failed", "latency": 0.0, "reason": "abort"}
    assert kernel.metrics.tasks_failed == {"abort": 1}


class CountingCaller(FakeCaller):
    """A caller stand-in counting the routes asked for and recording what it invokes."""

    def __init__(self, node: Any, routes: RouteService) -> None:
        super().__init__(node, routes)
        self.asked = 0
        self.over: list[tuple[Any, Any]] = []

    def path_for(self, need: str, rho: str) -> Any:
        self.asked += 1
        return super().path_for(need, rho)

    def invoke(self, inst: Any, task: Any, view: Any, path: Any, need: str, **_: Any) -> None:
        self.over.append((path, view))


@pytest.mark.parametrize(("router", "asked"), [("dijkstra", 1), ("resilient", 3)])
def test_a_static_route_and_a_known_view_are_resolved_once_per_task_and_caller(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph, router: str, asked: int
) -> None:
    # three instances, each invoking its first task
    wfs, caller, routes, views = build(
        kernel, mesh, graph, router=router, kind=CountingCaller, times=(0.0, 1.0, 2.0)
    )
    wfs.start()
    kernel.env.run()
    assert caller.asked == asked  # a dynamic router's route may change: asked each time
    assert caller.over == [(routes.path_to("a", "read_it", "MCP", NO_DOWN), views["read_it"])] * 3
    assert [i.tool_of for i in wfs.running["a"].values()] == [["read_it", "write_it"]] * 3
