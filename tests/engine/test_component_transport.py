"""Topology, paths, the route service and the transport, with hand-built inputs."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sim.engine.kernel import Kernel
from sim.engine.paths import Hop, Path, stretch_ends
from sim.engine.routes import RouteService
from sim.engine.topology import LinkState, Node, Topology
from sim.engine.trace import NO_OWNER, js
from sim.engine.transport import Message, Transport
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import NO_DOWN
from tests.harness.engine_parts import lines, make_kernel


class Owner:
    frag = NO_OWNER


def parts(kernel: Kernel, graph: ProtocolGraph, router: str = "dijkstra") -> tuple[Any, ...]:
    topology = Topology(graph)
    routes = RouteService(topology, make_router(router, graph), router)
    transport = Transport(
        kernel.env, kernel.later, kernel.recorder, random.Random(1), random.Random(2)
    )
    return topology, routes, transport


def test_paths_are_compiled_once_with_named_hops(kernel: Kernel, graph: ProtocolGraph) -> None:
    _, routes, _ = parts(kernel, graph)
    path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
    assert routes.path_to("a", "read_it", "MCP", NO_DOWN) is path
    assert [n.id for n in path.nodes] == ["a", "g", "s"]
    first, second = path.hops
    assert isinstance(first, Hop)
    assert (first.latency, first.rate, first.proto) == (0.25, 0.0, "MCP")
    assert (first.at, first.via) == ('"a",', ',"proto":"MCP","detail":')
    assert first.tail == ',"from":"a","proto":"MCP","to":"g"}}\n'
    assert (second.latency, second.link.a, second.link.b) == (0.5, "g", "s")
    back = path.reverse()
    assert isinstance(back, Path) and back.reverse() is path
    assert [n.id for n in back.nodes] == ["s", "g", "a"]


def test_a_message_arrives_after_the_sum_of_latencies(kernel: Kernel, graph: ProtocolGraph) -> None:
    topology, routes, transport = parts(kernel, graph)
    path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
    got: list[tuple[float, Message]] = []
    transport.send(
        "request", Owner(), path, 1, "payload", lambda m: got.append((kernel.env.now, m))
    )
    kernel.env.run()
    ((t, msg),) = got
    assert t == 0.75 and msg.payload == "payload" and msg.attempt == 1
    assert path.endj == js(msg.proto)  # what deliver and execute write as its protocol
    assert [x["label"] for x in lines(kernel)] == ["send", "hop", "hop", "deliver"]
    assert topology.hops_by_link() == {"a|g": 1, "g|s": 1}
    assert kernel.metrics.hops == 0  # counted by the transport, reported at the end
    transport.close()
    assert (kernel.metrics.sent, kernel.metrics.delivered, kernel.metrics.hops) == (1, 1, 2)
    assert transport.in_flight == {}


def test_down_link_and_down_node_drop_and_notify_nobody(
    kernel: Kernel, graph: ProtocolGraph
) -> None:
    topology, routes, transport = parts(kernel, graph)
    topology.link("g", "s").fallible = topology.nodes["s"].fallible = True  # outages' marks
    path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
    delivered: list[Message] = []
    topology.link("g", "s").down = 1
    transport.send("request", Owner(), path, 1, None, delivered.append)
    kernel.env.run()
    topology.link("g", "s").down = 0
    topology.nodes["s"].down = 1
    transport.send("request", Owner(), path, 2, None, delivered.append)
    kernel.env.run()
    assert delivered == []
    drops = [(x["agent"], x["t"], x["detail"]) for x in lines(kernel) if x["label"] == "drop"]
    assert drops == [
        ("g", 0.25, {"msg": 0, "reason": "link_down"}),
        ("s", 1.0, {"msg": 1, "reason": "node_down"}),
    ]
    assert kernel.metrics.dropped == {"link_down": 1, "node_down": 1}


def test_close_drops_what_is_still_travelling(kernel: Kernel, graph: ProtocolGraph) -> None:
    _, routes, transport = parts(kernel, graph)
    path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
    transport.send("list", Owner(), path, 1, None, lambda m: None)
    kernel.env.run(until=0.5)
    transport.close()
    (drop,) = [x for x in lines(kernel) if x["label"] == "drop"]
    assert (drop["agent"], drop["detail"]) == ("g", {"msg": 0, "reason": "run_end"})


def test_router_policy_what_a_timeout_makes_suspect(kernel: Kernel, graph: ProtocolGraph) -> None:
    for router, nodes in (("dijkstra", []), ("resilient", ["g"]), ("semantic", ["g", "s"])):
        _, routes, _ = parts(kernel, graph, router)
        path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
        assert routes.suspects(path) == (nodes, []), router
        assert routes.static == (router == "dijkstra")


def test_tool_at_resolves_a_capability_to_the_best_matching_hosted_tool(
    kernel: Kernel, graph: ProtocolGraph
) -> None:
    topology, routes, _ = parts(kernel, graph)
    path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
    assert routes.tool_at("read_it", None, path) == "read_it"
    assert routes.tool_at("missing", None, path) is None
    assert routes.tool_at(None, "write a record", path) == "write_it"
    assert not routes.hosts(path, "write_it")  # no tool server runs at s yet
    topology.nodes["s"].server = object()
    assert routes.hosts(path, "write_it") and not routes.hosts(path, "missing")


def test_every_caller_shares_the_transports_deadlines_of_a_timeout(kernel: Kernel) -> None:
    transport = Transport(
        kernel.env, kernel.later, kernel.recorder, random.Random(1), random.Random(2)
    )
    shared = transport.deadlines(20.0)
    assert transport.deadlines(20.0) is shared and shared.delay == 20.0
    assert transport.deadlines(5.0) is not shared


def node(k: int, fallible: bool) -> Node:
    """A gateway ``n<k>`` that an outage can cover (``fallible``) or not."""
    element = Node(f"n{k}", "GATEWAY", frozenset({"MCP"}), None)
    element.fallible = fallible
    return element


def link(k: int, fallible: bool) -> LinkState:
    """The link from ``n<k>`` to the next node, fallible or not."""
    element = LinkState(f"n{k}", f"n{k + 1}", {"MCP": 1.0}, 0.0)
    element.fallible = fallible
    return element


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=2, max_size=12))
def test_a_stretch_stops_at_the_first_node_where_something_can_happen(
    flags: list[tuple[bool, bool, bool]],
) -> None:
    # per position: the node can go down, the link leaving it can, it translates
    nodes = [node(k, f[0]) for k, f in enumerate(flags)]
    links = [link(k, f[1]) for k, f in enumerate(flags[:-1])]
    steps = [() if f[2] else None for f in flags]
    last = len(flags) - 1
    reach = stretch_ends(nodes, links, steps)

    def stops(j: int) -> bool:
        return j == last or flags[j][0] or flags[j][1] or flags[j][2]

    assert len(reach) == last
    for i, end in enumerate(reach):
        assert end == next(j for j in range(i + 1, last + 1) if stops(j))


def test_a_stretch_is_one_queued_event_and_its_hops_are_written_at_level_full(
    graph: ProtocolGraph,
) -> None:
    for level, queued in (("protocol", 1), ("full", 2)):
        kernel = make_kernel(level)
        topology, routes, transport = parts(kernel, graph)
        path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
        assert path.reach == (2, 2)  # nothing can happen at g: a → s is one stretch
        transport.send("request", Owner(), path, 1, None, lambda m: None)
        assert len(kernel.env._queue) == queued
        kernel.env.run()
        transport.close()
        assert topology.hops_by_link() == {"a|g": 1, "g|s": 1}
        assert kernel.metrics.hops == 2
    hops = [(x["t"], x["agent"]) for x in lines(kernel) if x["label"] == "hop"]
    assert hops == [(0.0, "a"), (0.25, "g")]


def test_close_inside_a_stretch_drops_at_the_last_node_reached(graph: ProtocolGraph) -> None:
    for level in ("protocol", "full"):
        for until, at, crossed in ((0.2, "a", {"a|g": 1}), (0.25, "g", {"a|g": 1, "g|s": 1})):
            kernel = make_kernel(level)
            topology, routes, transport = parts(kernel, graph)
            path = routes.path_to("a", "read_it", "MCP", NO_DOWN)
            transport.send("list", Owner(), path, 1, None, lambda m: None)
            kernel.env.run(until=until)
            transport.close()
            (drop,) = [x for x in lines(kernel) if x["label"] == "drop"]
            assert (drop["agent"], drop["t"], drop["detail"]["reason"]) == (at, until, "run_end")
            assert topology.hops_by_link() == crossed, (level, until)
            assert kernel.metrics.hops == sum(crossed.values())
            if level == "full":  # run(until=) stopped before the arrival at g was popped
                hops = [x["agent"] for x in lines(kernel) if x["label"] == "hop"]
                assert hops == ["a", "g"][: len(crossed)]
