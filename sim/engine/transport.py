"""Hop-by-hop transport: ``send(...)`` in, ``on_deliver(msg)`` out (or a drop).

A message follows a compiled :class:`~sim.engine.paths.Path`: at each node it is
translated when the route changes protocol there, then crosses the next link in that
link's protocol. Drops notify nobody: the sender learns of them only by its timeout.

Timing: ``send`` runs at once (the ``send`` line, then any translation at the first
node); a translation step takes its ``delay`` (the steps of one node add up; a zero
total continues at once); crossing a link takes ``latency + Exp(1/jitter)`` seconds,
drawn from the ``latency`` stream at departure. A message is dropped when it arrives at
a down node (``node_down``), must leave over a down link (``link_down``), is at a node
that went down during its translation (``node_down``), fails a destructive
translation (``translation_failed``, a draw from the ``translation`` stream) or meets a
pair the node cannot translate (``untranslatable``). ``close()`` at the end of the run
drops every message still travelling (``run_end``), so each ``send`` ends in exactly
one ``deliver`` or ``drop``. Each hop is one scheduled event and the message is that
event itself (SimPy's ``step`` reads ``callbacks`` and ``_ok``; the callbacks are one
shared tuple): no process, no event object per message. A message carries ``t``, the
simulated time of its current step (the time SimPy pops it at, ``now + delay`` computed
as SimPy computes it), so the transport never reads the clock per hop; it puts the
message on SimPy's queue itself, as ``Environment.schedule`` does (time, ``NORMAL``,
SimPy's next insertion number: it reads SimPy 4's ``_queue`` and ``_eid``), and draws
the jitter as ``random.expovariate`` does (``-log(1 - u) / rate``, one uniform).
The messages sent and delivered and the hops are counted here and reported to the
recorder by ``close()``; a send and its first hop are one call, an arrival's delivery or
departure one callback (the ``send``, ``hop`` and ``deliver`` lines, at level ``full``,
written in them, with the time text of a new instant). The
requests' timers of one timeout are one :class:`~sim.engine.clock.Deadlines` shared by
every caller (:meth:`Transport.deadlines`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from heapq import heappush
from math import log
from typing import Any

import simpy
from simpy.events import NORMAL

from sim.engine.clock import Deadlines, Later
from sim.engine.paths import Path
from sim.engine.recorder import Recorder
from sim.engine.topology import Node
from sim.engine.trace import FAST_HIGH, FAST_LOW, pjs


class Message:
    """One message in flight. ``owner`` (an invocation or a discovery) carries the line's
    owner fields in ``owner.frag``; ``on_deliver(msg)`` runs at the destination. While
    it waits on SimPy's queue the message is its own event (``callbacks``, ``_ok``); ``t``
    is the time of its current step (seconds); ``idj``, at level ``full``, its id as its
    lines write it."""

    _ok = True  # what SimPy's step reads of a processed event: it never fails
    idj: str  # set by Transport.send at level full

    __slots__ = (
        "attempt",
        "callbacks",
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
        self.callbacks: tuple[Callable[[Message], None], ...] | None = None
        self.id = mid
        self.kind = kind
        self.owner = owner
        self.path = path
        self.i = 0  # the position of the node the message is at
        self.proto = path.start
        self.attempt = attempt
        self.payload = payload
        self.on_deliver = on_deliver


class Transport:
    """Moves messages hop by hop for one replication (see the module's timing)."""

    __slots__ = (
        "_arrive_cbs",
        "_deadlines",
        "_eid",
        "_queue",
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
        self._eid: Any = env._eid  # its insertion counter
        self.rec = recorder
        self.translation_rng = translation
        self._uniform = latency.random  # the jitter's one draw per crossing
        self.next_id = 0
        self.reported = 0  # the messages sent whose count close() reported
        self._arrive_cbs = (self._arrive,)  # what a message waiting for its arrival runs
        self._translated_cbs = (self._translated,)
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
        then its first hop (:meth:`_leave`'s body inlined for a node that does not
        translate: the hot path, one call per message)."""
        mid = self.next_id
        self.next_id = mid + 1
        t = self.env._now  # the property's value, read directly (the hot path)
        msg = Message(mid, kind, owner, path, attempt, payload, on_deliver, t)
        self.in_flight[mid] = msg
        full = self.full
        if full:  # Recorder.send's body
            msg.idj = idj = str(mid)  # written in each of its lines: formatted once
            rec = self.rec
            ts = rec._last_ts if t == rec._last_t else rec._tick(t)
            rec.seq = (seq := rec.seq) + 1
            rec._buffer.append(
                f'{{"t":{ts},"seq":{seq}{rec._send}{path.send_at}{owner.frag}{path.send_via}'
                f'{idj},"kind":"{kind}"{path.send_tail}'
            )
        if path.steps[0] is not None:
            self._at(msg)
            return msg
        if path.last == 0:
            self._deliver(msg)
            return msg
        hop = path.hops[0]
        link = hop.link
        if link.down:
            self._drop(msg, path.nodes[0], "link_down")
            return msg
        delay = hop.latency
        rate = hop.rate
        if rate:
            delay += -log(1.0 - self._uniform()) / rate  # expovariate(rate)
        msg.proto = hop.proto
        link.hops += 1
        self.hops += 1
        if full:  # Recorder.hop's body, at the instant of the send line (its text)
            rec.seq = (seq := rec.seq) + 1
            rec._buffer.append(
                f'{{"t":{rec._last_ts},"seq":{seq}{rec._hop}{hop.at}{owner.frag}{hop.via}'
                f'{{"msg":{idj}{hop.tail}'
            )
        msg.t = t = t + delay  # what SimPy's schedule computes: now + delay
        msg.callbacks = self._arrive_cbs
        heappush(self._queue, (t, NORMAL, next(self._eid), msg))
        return msg

    def close(self) -> None:
        """End of the run: every message still travelling is dropped with ``run_end``; the
        hops counted are reported to the recorder."""
        self.rec.counted(self.next_id - self.reported, self.delivered, self.hops)
        self.reported, self.delivered, self.hops = self.next_id, 0, 0
        now = self.env.now
        for mid in sorted(self.in_flight):
            msg = self.in_flight[mid]
            msg.t = now
            self._drop(msg, msg.path.nodes[msg.i], "run_end")

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
                heappush(self._queue, (msg.t, NORMAL, next(self._eid), msg))
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
            self.rec.deliver(msg.t, msg.owner.frag, msg.id, msg.path, msg.kind)
        msg.on_deliver(msg)

    def _leave(self, msg: Message) -> None:
        """The message leaves the node it is at (translated if it had to be): delivered
        if it is the last, else over the next link (:meth:`_arrive` repeats this for the
        common case, the hot path)."""
        i = msg.i
        path = msg.path
        if i == path.last:
            self._deliver(msg)
            return
        hop = path.hops[i]
        link = hop.link
        if link.down:
            self._drop(msg, path.nodes[i], "link_down")
            return
        delay = hop.latency
        rate = hop.rate
        if rate:
            delay += -log(1.0 - self._uniform()) / rate  # expovariate(rate)
        msg.proto = hop.proto
        link.hops += 1
        self.hops += 1
        t = msg.t
        if self.full:
            self.rec.hop(t, msg.owner.frag, msg.id, hop)
        t += delay  # what SimPy's schedule computes: now + delay
        msg.t = t
        msg.callbacks = self._arrive_cbs
        heappush(self._queue, (t, NORMAL, next(self._eid), msg))

    def _arrive(self, msg: Message) -> None:
        """The message reached the next node of its path (``msg.t`` is now): dropped if
        the node is down; translated if the route changes protocol there; else it leaves
        at once (:meth:`_leave`'s body, :meth:`_deliver`'s and the lines' inlined, the
        time text too when it is new: the hot path, one call per hop)."""
        i = msg.i + 1
        msg.i = i
        path = msg.path
        node = path.nodes[i]
        if node.down:
            self._drop(msg, node, "node_down")
            return
        if path.steps[i] is not None:
            self._at(msg)
            return
        t = msg.t
        full = self.full
        if full:  # the line's time text: Recorder._tick's fast case inlined
            rec = self.rec
            if t == rec._last_t:
                ts = rec._last_ts
            elif FAST_LOW <= t < FAST_HIGH and len(rec._buffer) < rec._limit:
                ts = "%.6f" % t  # noqa: UP031 (faster than format/f-string)
                if ts[-1] == "0":
                    ts = ts.rstrip("0")
                    if ts[-1] == ".":
                        ts += "0"
                rec._last_t, rec._last_ts = t, ts
            else:
                ts = rec._tick(t)
        if i == path.last:  # _deliver's body
            del self.in_flight[msg.id]
            self.delivered += 1
            if full:  # Recorder.deliver's body
                rec.seq = (seq := rec.seq) + 1
                rec._buffer.append(
                    f'{{"t":{ts},"seq":{seq}{rec._deliver}{path.deliver_at}{msg.owner.frag}'
                    f'{path.deliver_via}{msg.idj},"kind":"{msg.kind}"}}}}\n'
                )
            msg.on_deliver(msg)
            return
        hop = path.hops[i]
        link = hop.link
        if link.down:
            self._drop(msg, node, "link_down")
            return
        delay = hop.latency
        rate = hop.rate
        if rate:
            delay += -log(1.0 - self._uniform()) / rate  # expovariate(rate)
        msg.proto = hop.proto
        link.hops += 1
        self.hops += 1
        if full:  # Recorder.hop's body
            rec.seq = (seq := rec.seq) + 1
            rec._buffer.append(
                f'{{"t":{ts},"seq":{seq}{rec._hop}{hop.at}{msg.owner.frag}{hop.via}'
                f'{{"msg":{msg.idj}{hop.tail}'
            )
        t += delay  # what SimPy's schedule computes: now + delay
        msg.t = t
        msg.callbacks = self._arrive_cbs
        heappush(self._queue, (t, NORMAL, next(self._eid), msg))
