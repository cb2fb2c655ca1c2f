"""Hop-by-hop transport: link latency (plus jitter), translation at nodes, drops.

A message follows a compiled route (:class:`Path`): at each node it is translated when
the route changes protocol there (τ's delay; a destructive transformer fails with its
probability, ⊥), then crosses the next link in that link's protocol, taking
``w_e(p) + Exp(jitter)`` seconds. A message that arrives at a down node, or must leave
over a down link, is dropped with the reason ``node_down`` / ``link_down``; one whose
translation fails is dropped with ``translation_failed``; a reply whose reverse
translation is forbidden is dropped with ``untranslatable``. Drops notify nobody: the
sender learns of them only by its timeout.

Every hop is one scheduled SimPy event (:mod:`sim.engine.clock`) with one shared
callback (the message rides in the event's value); no process per message.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sim.engine.trace import DELIVER, DROP, HOP, NULL, SEND, TRANSLATE, js
from sim.mesh.graph import ProtocolGraph
from sim.mesh.routing import Route

if TYPE_CHECKING:
    from sim.engine.simulation import World


_PROTO_JS: dict[str, str] = {}


def pjs(protocol: str) -> str:
    """The JSON fragment of a protocol name (cached)."""
    hit = _PROTO_JS.get(protocol)
    if hit is None:
        hit = _PROTO_JS[protocol] = js(protocol)
    return hit


class Node:
    """Run-time state of an agent: ``down`` counts the outages covering it now."""

    __slots__ = ("down", "epoch", "id", "j", "server", "speaks", "translation_delay", "type")

    def __init__(self, agent_id: str, type_: str, speaks: frozenset[str], delay: float | None):
        self.id = agent_id
        self.j = js(agent_id)
        self.type = type_
        self.speaks = speaks
        self.translation_delay = delay
        self.down = 0
        self.epoch = 0  # bumped when the node goes down: work started before is lost
        self.server: Any = None


class LinkState:
    """Run-time state of a link: ``down`` counts the outages covering it now; ``hops``
    counts the messages that crossed it (either way, every protocol)."""

    __slots__ = ("a", "b", "down", "hops", "j", "jitter", "latency")

    def __init__(self, a: str, b: str, latency: dict[str, float], jitter: float) -> None:
        self.a = a
        self.b = b
        self.latency = latency
        self.jitter = jitter
        self.down = 0
        self.hops = 0
        self.j = js([a, b])


class Step:
    """One translation at a route position: ``source → target`` (a chain at one node)."""

    __slots__ = (
        "delay",
        "detail",
        "dropped",
        "fail",
        "kind",
        "n_dropped",
        "ok",
        "source",
        "target",
        "tj",
    )

    def __init__(
        self,
        at: str,
        source: str,
        target: str,
        delay: float,
        fail: float,
        dropped: tuple[str, ...],
        kind: str,
        ok: bool,
        chain: tuple[str, ...],
    ) -> None:
        self.source = source
        self.target = target
        self.delay = delay
        self.fail = fail
        self.dropped = dropped
        self.n_dropped = len(dropped)
        self.kind = kind
        self.ok = ok
        self.tj = js(target)
        body = js(
            {
                "at": at,
                "from_proto": source,
                "to_proto": target,
                "dropped": list(dropped),
                "kind": kind,
                "chain": list(chain),
            }
        )
        self.detail = body[1:]  # '"at":...}' : the caller prefixes '{"msg":N,'


class Path:
    """A compiled route: nodes, links, per-hop protocol and latency, translations."""

    __slots__ = (
        "_reverse",
        "end",
        "fields",
        "hop_details",
        "hops",
        "key",
        "last",
        "lat",
        "links",
        "nodes",
        "pj",
        "protos",
        "route",
        "send_detail",
        "start",
        "startj",
        "steps",
    )

    def __init__(self, world: World, route: Route, start: str, reverse_of: Path | None = None):
        graph = world.graph
        self.route = route
        self.nodes: tuple[Node, ...] = tuple(world.nodes[a] for a in route.path)
        self.links: tuple[LinkState, ...] = tuple(
            world.links[frozenset((route.path[i], route.path[i + 1]))]
            for i in range(len(route.path) - 1)
        )
        self.protos = route.protocols
        self.pj = tuple(js(p) for p in route.protocols)
        self.lat = tuple(link.latency[p] for link, p in zip(self.links, self.protos, strict=True))
        self.last = len(route.path) - 1
        self.start = start
        self.startj = js(start)
        steps: list[tuple[Step, ...] | None] = [None] * (self.last + 1)
        seen: set[str] = {start, *self.protos}
        for tr in route.translations:
            pos = tr.position if tr.position >= 0 else route.path.index(tr.at)
            step = _step(graph, world.nodes[route.path[pos]], tr.source, tr.target)
            seen.update(step_chain(graph, world.nodes[route.path[pos]], tr.source, tr.target))
            steps[pos] = (*(steps[pos] or ()), step)
        self.steps = tuple(steps)
        end = start
        for i in range(self.last + 1):
            for step in steps[i] or ():
                end = step.target
            if i < self.last:
                end = self.protos[i]
        self.end = end
        fields = frozenset(graph.table.fields(start))
        for p in seen:
            fields &= graph.table.fields(p)
        self.fields = fields
        self.key = (
            route.path,
            route.protocols,
            tuple((s.source, s.target) for st in steps for s in st or ()),
        )
        self._reverse = reverse_of
        self.hop_details = tuple(
            js({"from": route.path[i], "to": route.path[i + 1], "proto": self.protos[i]})[1:]
            for i in range(self.last)
        )
        self.hops = tuple(
            (
                self.links[i],
                self.lat[i],
                1.0 / self.links[i].jitter if self.links[i].jitter > 0 else 0.0,
                self.protos[i],
                self.pj[i],
                self.hop_details[i],
                self.nodes[i].j,
            )
            for i in range(self.last)
        )
        self.send_detail = js({"to": route.path[-1], "path": list(route.path)})[1:]

    def reverse(self, world: World) -> Path:
        """The same path walked back (replies): links reversed, each translation undone."""
        if self._reverse is None:
            route = self.route
            last = self.last
            translations = []
            from sim.mesh.routing import Translation

            for tr in route.translations:
                pos = tr.position if tr.position >= 0 else route.path.index(tr.at)
                translations.append(Translation(tr.at, tr.target, tr.source, last - pos))
            translations.sort(key=lambda t: t.position)
            back = Route(
                route.router,
                tuple(reversed(route.path)),
                tuple(reversed(route.protocols)),
                tuple(translations),
                route.cost,
            )
            start = route.protocols[-1] if route.protocols else self.end
            self._reverse = Path(world, back, start, reverse_of=self)
        return self._reverse


def step_chain(graph: ProtocolGraph, node: Node, source: str, target: str) -> tuple[str, ...]:
    """The protocols of the cheapest chain ``source → target`` at ``node`` (or the pair)."""
    hit = graph.table.chains_at(node.speaks, node.translation_delay).get((source, target))
    return hit[1].chain if hit is not None else (source, target)


def _step(graph: ProtocolGraph, node: Node, source: str, target: str) -> Step:
    table = graph.table
    hit = table.chains_at(node.speaks, node.translation_delay).get((source, target))
    if hit is None:
        return Step(node.id, source, target, 0.0, 1.0, (), "forbidden", False, (source, target))
    transformer = hit[1]
    delay = 0.0
    chain = transformer.chain
    for a, b in itertools.pairwise(chain):
        direct = table.direct(a, b)
        assert direct is not None
        delay += table.step_delay(direct, node.translation_delay)
    dropped = tuple(sorted(transformer.dropped))
    return Step(
        node.id,
        source,
        target,
        delay,
        transformer.fail,
        dropped,
        transformer.kind.label,
        True,
        chain,
    )


class Message:
    """One message in flight. ``owner`` carries the trace fragments (wf, inst, task,
    inv, tool); ``on_deliver(msg)`` runs at the destination."""

    __slots__ = (
        "attempt",
        "i",
        "id",
        "kind",
        "on_deliver",
        "owner",
        "path",
        "payload",
        "proto",
    )

    def __init__(
        self,
        mid: int,
        kind: str,
        owner: Any,
        path: Path,
        attempt: int,
        payload: Any,
        on_deliver: Callable[[Message], None],
    ) -> None:
        self.id = mid
        self.kind = kind
        self.owner = owner
        self.path = path
        self.i = 0
        self.proto = path.start
        self.attempt = attempt
        self.payload = payload
        self.on_deliver = on_deliver


class Transport:
    """Moves messages hop by hop for one replication."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.env = world.env
        self.trace = world.trace
        self.metrics = world.metrics
        self.latency_rng = world.streams.latency
        self.translation_rng = world.streams.translation
        self.expovariate = self.latency_rng.expovariate
        self.next_id = 0
        self.later = world.later
        self._arrive_cb = self._arrive
        self._translated_cb = self._translated
        #: messages sent and not yet delivered or dropped, by id (for the end of the run)
        self.in_flight: dict[int, Message] = {}

    def send(
        self,
        kind: str,
        owner: Any,
        path: Path,
        attempt: int,
        payload: Any,
        on_deliver: Callable[[Message], None],
    ) -> Message:
        """Start a message at ``path``'s first node (which must be up)."""
        mid = self.next_id
        self.next_id = mid + 1
        msg = Message(mid, kind, owner, path, attempt, payload, on_deliver)
        self.in_flight[mid] = msg
        self.metrics.sent += 1
        trace = self.trace
        if trace.full:
            o = owner
            trace.line(
                self.env.now,
                SEND,
                path.nodes[0].j,
                o.frag,
                path.startj,
                f'{{"msg":{mid},"kind":"{kind}",{path.send_detail}',
            )
        self._at(msg)
        return msg

    def close(self) -> None:
        """End of the run: every message still travelling is dropped with ``run_end``, so
        each ``send`` ends in exactly one ``deliver`` or ``drop`` (SPEC §6 conservation)."""
        for mid in sorted(self.in_flight):
            msg = self.in_flight[mid]
            self._drop(msg, msg.path.nodes[msg.i], "run_end")

    def _drop(self, msg: Message, node: Node, reason: str) -> None:
        del self.in_flight[msg.id]
        self.metrics.drop(reason)
        trace = self.trace
        if trace.enabled:
            o = msg.owner
            trace.line(
                self.env.now,
                DROP,
                node.j,
                o.frag,
                pjs(msg.proto),
                f'{{"msg":{msg.id},"reason":"{reason}"}}',
            )

    def _at(self, msg: Message) -> None:
        steps = msg.path.steps[msg.i]
        if steps is not None:
            node = msg.path.nodes[msg.i]
            delay = 0.0
            metrics = self.metrics
            trace = self.trace
            for step in steps:
                if not step.ok:
                    self._drop(msg, node, "untranslatable")
                    return
                metrics.translations += 1
                metrics.fields_lost += step.n_dropped
                msg.proto = step.target
                if trace.enabled:
                    o = msg.owner
                    trace.line(
                        self.env.now,
                        TRANSLATE,
                        node.j,
                        o.frag,
                        step.tj,
                        f'{{"msg":{msg.id},{step.detail}',
                    )
                if step.fail > 0.0 and self.translation_rng.random() < step.fail:
                    self._drop(msg, node, "translation_failed")
                    return
                delay += step.delay
            if delay > 0.0:
                self.later(delay, msg, self._translated_cb)
                return
        self._leave(msg)

    def _translated(self, event: Any) -> None:
        msg: Message = event._value
        node = msg.path.nodes[msg.i]
        if node.down:
            self._drop(msg, node, "node_down")
            return
        self._leave(msg)

    def _leave(self, msg: Message) -> None:
        i = msg.i
        path = msg.path
        if i == path.last:
            del self.in_flight[msg.id]
            self.metrics.delivered += 1
            trace = self.trace
            if trace.full:
                trace.line(
                    self.env.now,
                    DELIVER,
                    path.nodes[i].j,
                    msg.owner.frag,
                    pjs(msg.proto),
                    f'{{"msg":{msg.id},"kind":"{msg.kind}"}}',
                )
            msg.on_deliver(msg)
            return
        link, delay, rate, proto, proto_j, hop_detail, node_j = path.hops[i]
        if link.down:
            self._drop(msg, path.nodes[i], "link_down")
            return
        if rate:
            delay += self.expovariate(rate)
        msg.proto = proto
        link.hops += 1
        self.metrics.hops += 1
        trace = self.trace
        if trace.full:
            trace.line(
                self.env.now, HOP, node_j, msg.owner.frag, proto_j, f'{{"msg":{msg.id},{hop_detail}'
            )
        self.later(delay, msg, self._arrive_cb)

    def _arrive(self, event: Any) -> None:
        msg: Message = event._value
        i = msg.i + 1
        msg.i = i
        path = msg.path
        node = path.nodes[i]
        if node.down:
            self._drop(msg, node, "node_down")
        elif path.steps[i] is None:
            self._leave(msg)
        else:
            self._at(msg)


__all__ = ["NULL", "LinkState", "Message", "Node", "Path", "Step", "Transport"]
