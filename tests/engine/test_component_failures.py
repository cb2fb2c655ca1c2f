"""Failures on the run-time topology, and a caller's failure detector, alone."""

from __future__ import annotations

import random

import pytest

from sim.engine.failures import Failures, Suspicion
from sim.engine.faults import Outage, attach
from sim.engine.kernel import Kernel
from sim.engine.topology import Node, Topology
from sim.mesh.graph import ProtocolGraph
from sim.mesh.routing import NO_DOWN
from sim.scenario.model import FailureSpec
from tests.harness.engine_parts import lines


def outage(
    node: str | None = None, link: list[str] | None = None, at: float = 0.0, length: float = 1.0
) -> Outage:
    return Outage(FailureSpec(node=node, link=link, at=at, for_=length))


def test_overlapping_outages_keep_an_element_down_until_the_last_ends(
    kernel: Kernel, graph: ProtocolGraph
) -> None:
    topology = Topology(graph)
    failures = Failures(kernel.env, kernel.later, kernel.recorder, random.Random(0), topology)
    downs: list[tuple[float, str, int]] = []

    def on_down(node: Node) -> None:
        downs.append((kernel.env.now, node.id, node.epoch))

    failures.on_node_down.append(on_down)
    faults = [
        outage("g", at=1.0, length=3.0),
        outage("g", at=2.0, length=5.0),
        outage(link=["g", "s"], at=4.0),
    ]
    attach(faults, topology)
    assert [n.id for n in topology.nodes.values() if n.fallible] == ["g"]
    assert [(x.a, x.b) for x in topology.links.values() if x.fallible] == [("g", "s")]
    failures.schedule(faults)
    kernel.env.run(until=3.0)
    assert topology.nodes["g"].down == 2
    kernel.env.run()
    got = [(x["t"], x["label"], x["agent"], x["detail"]) for x in lines(kernel)]
    assert got == [
        (1.0, "node_down", "g", {}),
        (4.0, "link_down", "g", {"link": ["g", "s"]}),
        (5.0, "link_up", "g", {"link": ["g", "s"]}),
        (7.0, "node_up", "g", {}),
    ]
    assert downs == [(1.0, "g", 1)]  # one outage covering the other: one epoch
    assert topology.nodes["g"].down == 0 and kernel.metrics.outages == 2


def test_an_outage_of_an_element_not_marked_fallible_is_refused(
    kernel: Kernel, graph: ProtocolGraph
) -> None:
    # paths compiled before the mark would let messages cross it without a look
    topology = Topology(graph)
    failures = Failures(kernel.env, kernel.later, kernel.recorder, random.Random(0), topology)
    fault = outage(link=["g", "s"], at=1.0)
    fault.covers(topology)  # bound to the topology, not attached: nothing marked
    failures.schedule([fault])
    with pytest.raises(ValueError, match=r"^link g\|s goes down but was not marked fallible$"):
        kernel.env.run()


def test_suspects_expire_after_their_ttl() -> None:
    s = Suspicion(10.0)
    assert s.down(0.0) is NO_DOWN
    s.suspect(1.0, ["g"], [frozenset(("a", "g"))])
    down = s.down(5.0)
    assert down.nodes == frozenset({"g"}) and down.links == frozenset({frozenset(("a", "g"))})
    assert s.down(5.0) is down  # cached for the same instant
    assert s.down(11.0) is NO_DOWN
