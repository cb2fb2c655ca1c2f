"""Hop-by-hop transport: ``send(...)`` in, ``on_deliver(msg)`` out (or a drop).

A message follows a compiled :class:`~sim.engine.paths.Path`: at each node it is
translated when the route changes protocol there, then crosses the next link in that
link's protocol. Drops notify nobody: the sender learns of them only by its timeout.

Timing: ``send`` runs at once (the ``send`` line, then any translation at the first
node); a translation step takes its ``delay`` (the steps of one node add up; a zero
total continues at once); crossing a link takes ``latency + Exp(1/jitter)`` seconds, or
a draw from the link's law when its latency is a distribution (``Hop.draw``).
A message is dropped when it arrives at a down node (``node_down``), must leave over a
down link (``link_down``), is at a node that went down during its translation
(``node_down``), fails a destructive translation (``translation_failed``, a draw from
the ``translation`` stream), meets a pair the node cannot translate
(``untranslatable``), or is struck by a message fault of the link it leaves by
(:meth:`~sim.engine.faults.Fault.strike`: it crosses the link and is dropped at the far
end with the fault's reason; such a link and its ends are fallible, so it is a stretch
of its own). ``close()`` at the end of the run drops every message still
travelling (``run_end``) at the last node it reached (an arrival at the end's instant
counts), so each ``send`` ends in exactly one ``deliver`` or ``drop``.

Stretches: where nothing can happen at a node (it does not translate, no outage of the
scenario covers it or the link it leaves by: ``Path.reach``), the message does not stop
there. It crosses the whole stretch as one scheduled event, at the stretch's end; the
delays of the stretch's links are drawn from the ``latency`` stream, in order, when it
leaves the stretch's first node (as ``random.expovariate`` draws: ``-log(1 - u) /
rate``, one uniform each; a distribution's sampler as many as its family takes), and the
arrival times add up as they would hop by hop. At
level ``full`` the message is queued again at each node between, where its ``hop`` line
is written, so every level runs the same events in the same order (the ``hop`` events
only write); with every node marked fallible it is the hop-by-hop transport, and the
two give the same trace when no link has jitter (tested).

A message is its own SimPy event (SimPy's ``step`` reads ``callbacks`` and ``_ok``; the
callbacks are one shared tuple): no process, no event object per message. It carries
``t``, the simulated time of the end of its current step (``now + delay`` computed as
SimPy computes it), so the transport never reads the clock; it puts the message on
SimPy's queue itself, as ``Environment.schedule`` does (time, ``NORMAL``, SimPy's next
insertion number: it reads SimPy 4's ``_queue`` and ``_eid``). The messages sent and
delivered and the hops are counted here (a stretch's hops when it starts, taken back
by ``close()`` for the links not begun) and reported to the recorder by ``close()``.
The requests' timers of one timeout are one :class:`~sim.engine.clock.Deadlines`
shared by every caller (:meth:`Transport.deadlines`).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable
from math import log
from typing import Any, Protocol

import simpy

from sim.engine.clock import NORMAL, Deadlines, Later, Pending, heappush
from sim.engine.paths import Path
from sim.engine.recorder import Recorder
from sim.engine.topology import Node
from sim.engine.trace import pjs


class Message(Pending):
    """One message in flight. ``owner`` (an invocation or a discovery) carries the line's
    owner fields in ``owner.frag``; ``on_deliver(msg)`` runs at the destination. While
    it waits on SimPy's queue the message is its own event (``callbacks``, ``_ok``); ``t``
    is the time of its current step (seconds); ``idj`` and ``frag``, at level ``full``,
    its id as its lines write it and its owner's fields (``owner.frag``, read once)."""

    idj: str  # set by Transport.send at level full
    frag: str  # set by Transport.send at level full

    __slots__ = (
        "arrivals",
        "attempt",
        "fate",
        "frag",
        "i",
        "id",
        "idj",
        "kind",
        "on_deliver",
        "owner",
        "path",
        "payload",
        "proto",
        "t",
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
        t: float = 0.0,
    ) -> None:
        self.t = t
        self.callbacks = None  # (Message -> None, ...) while it waits on SimPy's queue
        #: the arrival times at the nodes inside its current stretch (None: one link)
        self.arrivals: list[float] | None = None
        self.id = mid
        self.kind = kind
        self.owner = owner
        self.path = path
        self.i = 0  # the position of the node the message is at
        self.proto = path.start
        self.attempt = attempt
        self.payload = payload
        self.on_deliver = on_deliver
        #: the drop reason a message fault gave it on its current link (None: none)
        self.fate: str | None = None


class Sends(Protocol):
    """What a component that sends needs of the transport (:class:`Transport`; a unit
    test gives a stand-in: a protocol, so the compiled engine does not check its type)."""

    def send(
        self,
        kind: str,
        owner: Any,
        path: Path,
        attempt: int,
        payload: Any,
        on_deliver: Callable[[Message], None],
    ) -> Message:
        """Start a message at ``path``'s first node."""

    def deadlines(self, timeout: float) -> Deadlines:
        """The timers of ``timeout`` seconds of the requests sent here."""


class Transport:
    """Moves messages hop by hop for one replication (see the module's timing)."""

    __slots__ = (
        "_arrive_cbs",
        "_deadlines",
        "_eid",
        "_hop_cbs",
        "_queue",
        "_struck_cbs",
        "_translated_cbs",
        "_uniform",
        "delivered",
        "env",
        "full",
        "hops",
        "in_flight",
        "later",
        "next_id",
        "rec",
        "reported",
        "translation_rng",
    )

    def __init__(
        self,
        env: simpy.Environment,
        later: Later,
        recorder: Recorder,
        latency: random.Random,
        translation: random.Random,
    ) -> None:
        self.env = env
        self.later = later
        self._queue: Any = env._queue  # SimPy's event heap
        #: the next of its insertion numbers (its counter's ``__next__``: no lookup of
        #: the builtin ``next`` per event)
        self._eid: Callable[[], int] = env._eid.__next__
        self.rec = recorder
        self.translation_rng = translation
        self._uniform = latency.random  # the jitter's one draw per crossing
        self.next_id = 0
        self.reported = 0  # the messages sent whose count close() reported
        self._arrive_cbs = (self._arrive,)  # what a message waiting for its arrival runs
        self._translated_cbs = (self._translated,)
        self._struck_cbs = (self._struck,)  # struck by a message fault: dropped on arrival
        self._hop_cbs = (self._hop,)  # level full: at a node inside a stretch
        self.full = recorder.full  # hop lines are kept
        #: hops crossed and messages delivered, counted here and reported to the recorder
        #: by close() with the messages sent (``next_id``)
        self.hops = 0
        self.delivered = 0
        #: messages sent and not yet delivered or dropped, by id (for the end of the run)
        self.in_flight: dict[int, Message] = {}
        #: the requests' timers, by timeout (seconds), shared by every caller: one queued
        #: event for all of them (the event heap stays small: each event costs comparisons
        #: in proportion to its depth)
        self._deadlines: dict[float, Deadlines] = {}

    def deadlines(self, timeout: float) -> Deadlines:
        """The timers of ``timeout`` seconds of the requests sent here (every caller's)."""
        shared = self._deadlines.get(timeout)
        if shared is None:
            shared = self._deadlines[timeout] = Deadlines(self.env, timeout)
        return shared

    def send(
        self,
        kind: str,
        owner: Any,
        path: Path,
        attempt: int,
        payload: Any,
        on_deliver: Callable[[Message], None],
    ) -> Message:
        """Start a message at ``path``'s first node (which must be up): the ``send`` line,
        then its first stretch (or its translation, or its delivery at once)."""
        mid = self.next_id
        self.next_id = mid + 1
        t = self.env._now  # the property's value, read directly (the hot path)
        msg = Message(mid, kind, owner, path, attempt, payload, on_deliver, t)
        self.in_flight[mid] = msg
        if self.full:
            msg.idj = idj = str(mid)  # written in each of its lines: formatted once
            msg.frag = frag = owner.frag  # so is its owner's part (owner is any type)
            self.rec.send(t, frag, idj, path, kind)
        if path.steps[0] is not None:
            self._at(msg)
        elif path.last == 0:
            self._deliver(msg)
        else:
            self._go(msg)
        return msg

    def close(self) -> None:
        """End of the run: every message still travelling is dropped with ``run_end`` at
        the last node it reached (an arrival at the end's instant counts); the hops
        counted are reported to the recorder."""
        now = self.env.now
        travelling = (self._arrive_cbs, self._hop_cbs)
        for mid in sorted(self.in_flight):
            msg = self.in_flight[mid]
            if msg.arrivals is not None and msg.callbacks in travelling:
                self._halt(msg, now)
        self.rec.metrics.counted(self.next_id - self.reported, self.delivered, self.hops)
        self.reported, self.delivered, self.hops = self.next_id, 0, 0
        for mid in sorted(self.in_flight):
            msg = self.in_flight[mid]
            msg.t = now
            self._drop(msg, msg.path.nodes[msg.i], "run_end")

    def _halt(self, msg: Message, now: float) -> None:
        """Put ``msg``, inside a stretch at ``now``, at the last node it reached (as the
        protocol level sees it: by the arrival times, not by the events popped); the
        hops it was counted for and has not begun are taken back."""
        arrivals = msg.arrivals
        assert arrivals is not None
        path = msg.path
        stop = path.reach[msg.i]
        i = stop - len(arrivals) - 1 + bisect_right(arrivals, now)
        hops = path.hops
        for k in range(i + 1, stop):
            hops[k].link.hops -= 1
            self.hops -= 1
        if self.full:  # the hop lines of the arrivals at the end's instant not popped yet
            start = stop - len(arrivals) - 1
            for k in range(msg.i + 1, i + 1):
                self.rec.hop(arrivals[k - start - 1], msg.frag, msg.idj, hops[k])
        msg.i = i
        msg.proto = hops[i].proto

    def _drop(self, msg: Message, node: Node, reason: str) -> None:
        del self.in_flight[msg.id]
        self.rec.drop(msg.t, node.j, msg.owner.frag, pjs(msg.proto), msg.id, reason)

    def _at(self, msg: Message) -> None:
        steps = msg.path.steps[msg.i]
        if steps is not None:
            node = msg.path.nodes[msg.i]
            delay = 0.0
            rec = self.rec
            for step in steps:
                if not step.ok:
                    self._drop(msg, node, "untranslatable")
                    return
                msg.proto = step.target
                rec.translate(
                    msg.t,
                    node.j,
                    msg.owner.frag,
                    step.tj,
                    msg.id,
                    step.n_dropped,
                    step.detail,
                )
                if step.fail > 0.0 and self.translation_rng.random() < step.fail:
                    self._drop(msg, node, "translation_failed")
                    return
                delay += step.delay
            if delay > 0.0:
                msg.t += delay
                msg.callbacks = self._translated_cbs
                heappush(self._queue, (msg.t, NORMAL, self._eid(), msg))
                return
        self._leave(msg)

    def _translated(self, msg: Message) -> None:
        node = msg.path.nodes[msg.i]
        if node.down:
            self._drop(msg, node, "node_down")
            return
        self._leave(msg)

    def _deliver(self, msg: Message) -> None:
        """The message is at its path's last node: ``deliver``, then its handler."""
        del self.in_flight[msg.id]
        self.delivered += 1
        # the protocol it arrives in is the path's end (msg.proto, as the trace writes it)
        if self.full:
            self.rec.deliver(msg.t, msg.frag, msg.id, msg.path, msg.kind)
        msg.on_deliver(msg)

    def _leave(self, msg: Message) -> None:
        """The message leaves the node it is at (translated if it had to be): delivered
        if it is the last, else over its next stretch."""
        if msg.i == msg.path.last:
            self._deliver(msg)
        else:
            self._go(msg)

    def _go(self, msg: Message) -> None:
        """Send ``msg`` from node ``msg.i`` at ``msg.t`` over its stretch (``reach``): one
        queued event at the stretch's end, each link's delay drawn now in order, each
        arrival time kept (``arrivals``) and each hop counted now; at level ``full`` the
        message is also queued at each node between, where its ``hop`` line is written
        (:meth:`_hop`). Dropped at once if the first link is down."""
        i = msg.i
        path = msg.path
        hops = path.hops
        hop = hops[i]
        link = hop.link
        if link.down:
            self._drop(msg, path.nodes[i], "link_down")
            return
        faults = link.faults
        if faults is not None:  # a message fault's link: a stretch of its own
            for fault in faults:
                fate = fault.strike(msg)
                if fate is not None:
                    msg.fate = fate
                    break
        t = msg.t
        full = self.full
        if full:
            self.rec.hop(t, msg.frag, msg.idj, hop)
        delay = hop.latency
        rate = hop.rate
        if rate:
            if rate > 0.0:
                delay += -log(1.0 - self._uniform()) / rate  # expovariate(rate)
            else:  # DRAWN: the link's latency is a distribution
                delay = hop.draw()
        link.hops += 1
        t += delay  # what SimPy's schedule computes: now + delay
        stop = path.reach[i]
        if stop == i + 1:
            msg.arrivals = None
            msg.callbacks = self._arrive_cbs if msg.fate is None else self._struck_cbs
        else:
            msg.arrivals = arrivals = []
            uniform = self._uniform
            queue, eid = self._queue, self._eid
            for k in range(i + 1, stop):
                arrivals.append(t)
                if full:
                    heappush(queue, (t, NORMAL, eid(), msg))
                hop = hops[k]
                delay = hop.latency
                rate = hop.rate
                if rate:
                    if rate > 0.0:
                        delay += -log(1.0 - uniform()) / rate
                    else:
                        delay = hop.draw()
                hop.link.hops += 1
                t += delay
            msg.callbacks = self._hop_cbs if full else self._arrive_cbs
        self.hops += stop - i
        msg.proto = hop.proto
        msg.t = t
        heappush(self._queue, (t, NORMAL, self._eid(), msg))

    def _struck(self, msg: Message) -> None:
        """A message fault struck ``msg`` on the link it crossed: dropped where it
        arrives, with the fault's reason."""
        path = msg.path
        msg.i = i = path.reach[msg.i]
        reason = msg.fate
        assert reason is not None
        self._drop(msg, path.nodes[i], reason)

    def _hop(self, msg: Message) -> None:
        """Level ``full``, a stretch of several links: the message is at a node between
        (its ``hop`` line, at the time SimPy popped it), or at the stretch's end."""
        i = msg.i + 1
        path = msg.path
        if i == path.reach[msg.i]:
            self._arrive(msg)
            return
        msg.i = i
        msg.callbacks = self._hop_cbs  # the message is queued again, further on
        self.rec.hop(self.env._now, msg.frag, msg.idj, path.hops[i])

    def _arrive(self, msg: Message) -> None:
        """The message reached the end of its stretch (``msg.t`` is now): dropped if the
        node is down; translated if the route changes protocol there; delivered if it is
        the last; else it leaves at once."""
        path = msg.path
        msg.i = i = path.reach[msg.i]
        node = path.nodes[i]
        if node.down:
            self._drop(msg, node, "node_down")
        elif path.steps[i] is not None:
            self._at(msg)
        elif i == path.last:
            self._deliver(msg)
        else:
            self._go(msg)
