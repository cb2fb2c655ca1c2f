"""Compiled routes: what the transport needs at each position, computed once per route.

A :class:`Path` holds the route's nodes and links, one :class:`Hop` per link (its
protocol, latency, jitter rate and the trace fragments of the ``hop`` line), the
translation :class:`Step`\\ s at each position, the protocol the message ends in, and
``fields``: the descriptor fields kept by every protocol the message passes through
(what a ``list`` reply can carry). ``reverse()`` is the same path walked back, every
translation undone at the same node (replies). Paths are immutable; they carry no time.

A *stretch* is the run of links a message crosses without anything happening at the
nodes between: ``reach[i]`` is where the stretch that leaves node ``i`` stops, the first
later node that is the path's end, translates, can go down (``fallible``) or must
send the message over a link that can go down. The transport crosses a stretch as one
event (:mod:`sim.engine.transport`); a path is compiled after the topology's fallible
elements are marked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sim.engine.bugs import EngineBug
from sim.engine.recorder import target
from sim.engine.topology import LinkState, Node, Topology
from sim.engine.trace import around, js, members, pjs
from sim.mesh.graph import ProtocolGraph
from sim.mesh.route import (
    arrival,
    position_of,
    reversed_route,
    route_fields,
    translation_step,
)
from sim.mesh.routing import Route


class Step:
    """One translation at a route position: ``source → target`` (a chain at one node).

    ``fail`` is the probability the transformer fails (⊥); ``ok`` is False for a pair
    the node cannot translate (the message is dropped ``untranslatable``); ``detail``
    is the members of the ``translate`` line after ``msg``."""

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
        self.detail = members(
            {
                "at": at,
                "from_proto": source,
                "to_proto": target,
                "dropped": list(dropped),
                "kind": kind,
                "chain": list(chain),
            }
        )


#: :attr:`Hop.rate` of a crossing drawn from a distribution (no rate is negative).
DRAWN = -1.0


def _unused() -> float:
    """The ``draw`` of a hop whose latency is a number (never called)."""
    raise EngineBug("a numeric latency has no sampler")


class Hop:
    """Crossing one link of a path: from ``frm`` over ``link`` in ``proto``.

    ``latency`` is the link's weight for ``proto`` (seconds); ``rate`` is 1/jitter (0:
    no jitter), the rate of the exponential delay added per crossing, or :data:`DRAWN`
    when the link's latency for ``proto`` is a distribution: each crossing then takes
    ``draw()`` seconds (its sampler on the ``latency`` stream) instead. ``at``, ``via``
    and ``tail`` are the constant text of its ``hop`` line (:func:`around`: before and
    after the owner fields; after ``msg``: the hop's members and the line's end)."""

    __slots__ = ("at", "draw", "latency", "link", "proto", "rate", "tail", "via")

    def __init__(self, link: LinkState, latency: float, proto: str, frm: str, to: str) -> None:
        self.link = link
        self.latency = latency
        self.rate = 1.0 / link.jitter if link.jitter > 0 else 0.0
        self.draw: Callable[[], float] = _unused
        if proto in link.laws:
            draw = link.draws.get(proto)
            if draw is None:
                raise EngineBug(
                    f"link {link.a}-{link.b}: {proto}'s latency law is not bound to a stream "
                    "(Topology.draw_latencies before any path is compiled)"
                )
            self.draw = draw
            self.rate = DRAWN
        self.proto = proto
        pj = pjs(proto)
        self.at, self.via = around(pjs(frm), pj)
        # members({"from": frm, "to": to, "proto": proto}) (keys sorted), from cached parts
        self.tail = f',"from":{pjs(frm)},"proto":{pj},"to":{pjs(to)}}}}}\n'


class Path:
    """A compiled route: nodes, links, hops, translations, end protocol (``end``, and
    ``endj`` as the trace writes it), fields kept, the tools hosted at its end, and the
    constant text of its ``send`` and ``deliver`` lines (``send_at``/``send_via``/
    ``send_tail`` and ``deliver_at``/``deliver_via``: :meth:`Recorder.send`) and of a
    ``call`` over it (``target``)."""

    __slots__ = (
        "_reverse",
        "_topology",
        "deliver_at",
        "deliver_via",
        "end",
        "endj",
        "fields",
        "hops",
        "hosted",
        "key",
        "last",
        "links",
        "nodes",
        "protos",
        "reach",
        "route",
        "send_at",
        "send_detail",
        "send_tail",
        "send_via",
        "start",
        "startj",
        "steps",
        "target",
    )

    def __init__(
        self, topology: Topology, route: Route, start: str, reverse_of: Path | None = None
    ) -> None:
        graph = topology.graph
        nodes = topology.nodes
        self._topology = topology
        self.route = route
        ids = route.path
        self.nodes: tuple[Node, ...] = tuple(nodes[a] for a in ids)
        self.links: tuple[LinkState, ...] = tuple(
            topology.link(ids[i], ids[i + 1]) for i in range(len(ids) - 1)
        )
        self.protos = route.protocols
        self.last = len(ids) - 1
        self.start = start
        self.startj = pjs(start)
        steps: list[tuple[Step, ...] | None] = [None] * (self.last + 1)
        for tr in route.translations:
            pos = position_of(route, tr)
            step = _step(graph, ids[pos], tr.source, tr.target)
            steps[pos] = (*(steps[pos] or ()), step)
        self.steps = tuple(steps)
        self.reach = stretch_ends(self.nodes, self.links, self.steps)
        self.end = arrival(route, start)
        self.endj = pjs(self.end)  # the protocol a message arrives in, as the trace writes it
        self.fields = route_fields(graph, route, start)
        self.key = (
            ids,
            route.protocols,
            tuple((s.source, s.target) for st in steps for s in st or ()),
        )
        self._reverse = reverse_of
        self.hops = tuple(
            Hop(link, link.latency[p], p, ids[i], ids[i + 1])
            for i, (link, p) in enumerate(zip(self.links, self.protos, strict=True))
        )
        # members({"to": ids[-1], "path": list(ids)}) (keys sorted), from the encoded ids
        self.send_detail = f'"path":[{",".join(n.j for n in self.nodes)}],"to":{self.nodes[-1].j}'
        # the constant text of its send and deliver lines (around the owner, after msg)
        self.send_at, via = around(self.nodes[0].j, self.startj)
        self.send_via = via + '{"msg":'
        self.send_tail = f",{self.send_detail}}}}}\n"
        self.deliver_at, via = around(self.nodes[-1].j, self.endj)
        self.deliver_via = via + '{"msg":'
        self.target = target(self.nodes[-1].j, None)  # the detail of a call over it
        self.hosted = topology.hosted.get(ids[-1], ())  # the tools served at its end

    def reverse(self) -> Path:
        """The same path walked back (replies): links reversed, each translation undone."""
        if self._reverse is None:
            route = self.route
            start = route.protocols[-1] if route.protocols else self.end
            self._reverse = Path(self._topology, reversed_route(route), start, reverse_of=self)
        return self._reverse


def stretch_ends(
    nodes: Sequence[Node], links: Sequence[LinkState], steps: Sequence[object]
) -> tuple[int, ...]:
    """``reach[i]`` of a path of ``nodes``, ``links`` and translation ``steps`` (None:
    none at that position): the node where the stretch leaving node ``i`` stops."""
    last = len(nodes) - 1
    reach = [last] * last
    stop = last
    for i in range(last - 1, -1, -1):
        reach[i] = stop
        if i and (steps[i] is not None or nodes[i].fallible or links[i].fallible):
            stop = i
    return tuple(reach)


def _step(graph: ProtocolGraph, at: str, source: str, target: str) -> Step:
    """The engine's :class:`Step` of the mesh's :func:`translation_step`."""
    f = translation_step(graph, at, source, target)
    return Step(f.at, f.source, f.target, f.delay, f.fail, f.dropped, f.kind, f.ok, f.chain)
