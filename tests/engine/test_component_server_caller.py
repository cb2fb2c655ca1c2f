"""The tool server and the caller, each alone: a stand-in transport records what they
send, a stand-in for the workflows records what the caller reports."""

from __future__ import annotations

import random
from typing import Any

from sim.calculus.lts import TAU
from sim.calculus.mcp import ALL_FIELDS
from sim.engine.caller import Approval, Caller
from sim.engine.invocation import Invocation
from sim.engine.kernel import Kernel
from sim.engine.randomness import sampler
from sim.engine.routes import RouteService
from sim.engine.server import ToolServer
from sim.engine.topology import Topology
from sim.engine.transport import Message
from sim.engine.views import ToolRT, make_view
from sim.engine.workflows import Instance, WorkflowRT
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import NO_DOWN
from sim.scenario.model import Scenario
from tests.harness.engine_parts import Outcomes, Sent, lines


def world(kernel: Kernel, mesh: Scenario, graph: ProtocolGraph) -> dict[str, Any]:
    topology = Topology(graph)
    routes = RouteService(topology, make_router("resilient", graph), "resilient")
    tools = {t.name: ToolRT(t, sampler(t.service_time, random.Random(0))) for t in mesh.tools}
    wf = WorkflowRT(mesh.workflows[0], ("a",), mesh.dialects())
    wf.counters = kernel.metrics.workflow("w")
    for task in wf.tasks:
        task.counters = wf.counters
    # the caller knows every field (as over MCP+): approval and failure modes included
    views = {name: make_view(tool, ALL_FIELDS, "never") for name, tool in tools.items()}
    return {"topology": topology, "routes": routes, "tools": tools, "wf": wf, "views": views}


def invocation(w: dict[str, Any], kernel: Kernel, task: int, reply: Any = None) -> Invocation:
    wf = w["wf"]
    spec = wf.tasks[task]
    path = w["routes"].path_to("a", spec.tool, "MCP", NO_DOWN)
    inst = Instance(0, wf, None, None, 0.0)  # type: ignore[arg-type]
    view = w["views"][spec.tool]
    gate = view.approval  # the built-in rule's decision for the view
    return Invocation(kernel.new_id(), reply, inst, spec, view, path, spec.tool, None, 0, gate)


def ready_to_execute(inv: Invocation) -> None:
    """Take the caller's part of the LTS up to the request (call, τ)."""
    inv.take(inv.view.labels.call)
    inv.take(TAU)
    inv.attempt = 1
    inv.waiting = True


def test_server_queues_fifo_at_its_concurrency(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    w = world(kernel, mesh, graph)
    sent = Sent(kernel.env)
    node = w["topology"].nodes["s"]
    server = ToolServer(kernel.env, kernel.later, kernel.recorder, sent, random.Random(0), node, 1)  # type: ignore[arg-type]
    invs = [invocation(w, kernel, 0) for _ in range(2)]
    for inv in invs:
        ready_to_execute(inv)
        server.on_request(
            Message(inv.id, "request", inv, inv.path, 1, None, server.on_request, 0.0)
        )
    assert server.busy == 1 and len(server.queue) == 1
    kernel.env.run()
    # service time 1.5 s each, one slot: the second waits for the first
    assert sent.sent == [(1.5, "response", 1, None), (3.0, "response", 1, None)]
    executes = [(x["t"], x["inv"], x["detail"]) for x in lines(kernel) if x["label"] == "execute"]
    assert executes == [
        (0.0, invs[0].id, {"attempt": 1, "waited": 0.0}),
        (1.5, invs[1].id, {"attempt": 1, "waited": 1.5}),
    ]
    assert [m.path.nodes[0].id for m in sent.messages] == ["s", "s"]  # the reverse path


def test_server_discards_a_cancelled_attempt_and_loses_work_when_down(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    w = world(kernel, mesh, graph)
    sent = Sent(kernel.env)
    node = w["topology"].nodes["s"]
    server = ToolServer(kernel.env, kernel.later, kernel.recorder, sent, random.Random(0), node, 1)  # type: ignore[arg-type]
    cancelled, running, queued = (invocation(w, kernel, 0) for _ in range(3))
    for inv in (cancelled, running, queued):
        ready_to_execute(inv)
    cancelled.waiting = False  # the caller timed out
    for inv in (cancelled, running, queued):
        server.on_request(
            Message(inv.id, "request", inv, inv.path, 1, None, server.on_request, 0.0)
        )
    kernel.env.run(until=1.0)
    node.epoch += 1  # what Failures does when the node goes down
    server.on_down()
    kernel.env.run()
    assert sent.sent == []  # the execution in progress never replies
    got = [(x["label"], x["inv"], x["detail"]) for x in lines(kernel)]
    assert got == [
        ("execute", running.id, {"attempt": 1, "waited": 0.0}),
        ("drop", running.id, {"reason": "node_down", "lost": "executing"}),
        ("drop", queued.id, {"reason": "node_down", "lost": "queued"}),
    ]
    assert kernel.metrics.lost_work == {"executing": 1, "queued": 1}


def caller(kernel: Kernel, w: dict[str, Any]) -> tuple[Caller, Sent, Outcomes]:
    sent, outcomes = Sent(kernel.env), Outcomes(kernel.env)
    w["topology"].nodes["s"].server = type("Server", (), {"on_request": None})()
    gate = Approval(lambda: 2.0, 1.0, random.Random(0))
    node = w["topology"].nodes["a"]
    c = Caller(
        kernel.env,
        kernel.later,
        kernel.recorder,
        sent,
        w["routes"],
        gate,
        kernel.new_id,
        node,
        60.0,
    )  # type: ignore[arg-type]
    c.outcomes = outcomes
    return c, sent, outcomes


def start(c: Caller, w: dict[str, Any], task: int) -> Invocation:
    spec = w["wf"].tasks[task]
    inst = Instance(0, w["wf"], c, None, 0.0)  # type: ignore[arg-type]
    path = c.path_for(spec.tool, "MCP")
    return c.invoke(inst, spec, w["views"][spec.tool], path, spec.tool)


def test_caller_reports_a_result_to_the_workflows(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    w = world(kernel, mesh, graph)
    c, sent, outcomes = caller(kernel, w)
    inv = start(c, w, 0)
    assert sent.sent == [(0.0, "request", 1, None)]
    kernel.env.run(until=1.0)
    inv.take(inv.view.labels.execute)  # the server's step
    # a delivered message's t is the time of delivery (the transport's contract)
    reply = Message(9, "response", inv, inv.path.reverse(), 1, None, c.on_response, 1.0)
    c.on_response(reply)
    assert outcomes.done == [(1.0, "r", "succeeded", "")]
    got = [(x["t"], x["label"]) for x in lines(kernel)]
    assert got == [(0.0, "call"), (0.0, "validate"), (1.0, "result")]
    kernel.env.run()  # the attempt's timer fires later as a no-op
    assert outcomes.done == [(1.0, "r", "succeeded", "")]


def test_caller_asks_approval_before_a_write(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    w = world(kernel, mesh, graph)
    c, sent, _ = caller(kernel, w)
    start(c, w, 1)
    assert sent.sent == []
    kernel.env.run(until=3.0)
    assert sent.sent == [(2.0, "request", 1, None)]  # after the 2 s approval latency
    got = [(x["t"], x["label"]) for x in lines(kernel)]
    assert got == [(0.0, "call"), (0.0, "validate"), (2.0, "approve")]
    assert kernel.metrics.approvals_asked == 1 and kernel.metrics.approvals_granted == 1


def test_caller_resends_after_a_timeout_then_reroutes_around_its_suspects(
    kernel: Kernel, mesh: Scenario, graph: ProtocolGraph
) -> None:
    w = world(kernel, mesh, graph)
    c, sent, outcomes = caller(kernel, w)
    start(c, w, 0)  # read_it knows Retry(2) for ServiceDown: two re-sends
    kernel.env.run()
    # timeout 5 s per attempt; re-sends after backoffs of 0.5 s then 1 s
    assert [(t, k, a) for t, k, a, _ in sent.sent] == [
        (0.0, "request", 1),
        (5.5, "request", 2),
        (11.5, "request", 3),
    ]
    timeouts = [(x["t"], x["detail"]["action"]) for x in lines(kernel) if x["label"] == "timeout"]
    assert timeouts == [(5.0, "resend"), (10.5, "resend"), (16.5, "give_up")]
    assert outcomes.done == [(16.5, "r", "failed", "timeout")]
    # the only path crosses g: after the first timeout the caller suspects g, finds no
    # route around it and keeps the full topology's path (no reroute line)
    assert c.suspicion.down(16.5).nodes == frozenset({"g"})
    assert kernel.metrics.reroutes == 0 and kernel.metrics.resends == 2
