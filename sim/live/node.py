"""One agent of the live mesh as a node of the network: it receives messages, translates
them, forwards them along their route and sends the replies back.

Input: a message that arrived over a link (:meth:`Node.on_message`, the wire's
:class:`~sim.live.wire.Receiver`), or one its own caller starts (:meth:`Node.start`).
Output: the message sent on to the next node of its route (through the wire of the
link's protocol), handed to the local tool server at the route's end, or dropped; the
reply walked back the same way. Every step is a trace line of the agent's part.

Timing (scenario seconds; wall = scenario / speed), the engine's (docs/engine.md):

- ``hop`` is written when the message leaves a node; the sender then waits the link's
  latency for that protocol (drawn from the agent's own ``latency`` stream) before the
  message goes on the wire, so the wire carries the scenario's latency plus the real cost
  of sending, receiving and parsing it;
- a translation at a node (``translate``, one line per step of its chain, when the
  message arrives) changes the real message (:mod:`sim.live.payload`) and then waits the
  step's delay; a destructive step fails with its probability (``translation_failed``),
  a pair the node cannot translate is ``untranslatable``;
- a message that reached this node while it was down (its process stopped: the
  :class:`~sim.live.clock.DownLog`) is dropped ``node_down`` when the process is back,
  at the time it is handled, as a restarted process finds nothing of what was sent to it;
- a link the controller marked down refuses what would leave over it (``link_down``);
- a drop notifies nobody: the node answers the hop before it with a *silent* reply,
  which its caller treats as no reply at all (it waits for its timeout).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from sim.live.clock import DownLog, SceneClock
from sim.live.envelope import Envelope, Leg
from sim.live.parts import IdSpace, Owner, PartWriter
from sim.live.payload import Call, Descriptor, Outcome
from sim.live.wire import Notice, Unreachable
from sim.mesh.graph import ProtocolGraph

__all__ = ["DROPPED", "Link", "Node", "Sender", "Serves"]

DROPPED: Any = object()
"""What a translation returns for a message it dropped."""


class Sender(Protocol):
    """What the node needs of a wire's sender to one neighbour."""

    async def warm(self) -> None:
        """Open the connection before the run (its first use costs a handshake)."""
        ...

    async def send(
        self,
        protocol: str,
        env: Envelope,
        payload: Any,
        fields: frozenset[str],
        on_notice: Notice | None,
    ) -> tuple[Envelope, Any]: ...


class Serves(Protocol):
    """The tool server behind a node (:class:`sim.live.toolserver.ToolHost`)."""

    def listing(self, protocol: str) -> list[Descriptor]:
        """The hosted tools' descriptors as ``protocol`` represents them."""
        ...

    async def call(
        self, protocol: str, env: Envelope, call: Call, arrived: float, notice: Notice
    ) -> Outcome | None:
        """Execute ``call`` (None: no reply, the request was discarded or lost)."""
        ...


class Link:
    """A link's latency for each protocol as its sender draws it: a sampler of scenario
    seconds per protocol, and whether the controller has marked the link down."""

    __slots__ = ("down", "latency")

    def __init__(self, latency: dict[str, Callable[[], float]]) -> None:
        self.latency = latency
        self.down = False


class Node:
    """One agent's network side (see the module)."""

    def __init__(
        self,
        agent: str,
        graph: ProtocolGraph,
        clock: SceneClock,
        part: PartWriter,
        downlog: DownLog,
        ids: IdSpace,
        links: dict[str, Link],
        senders: Callable[[str, str], Sender],
        translation: random.Random,
        server: Serves | None = None,
    ) -> None:
        self.agent = agent
        self.graph = graph
        self.table = graph.table
        self.clock = clock
        self.part = part
        self.downlog = downlog
        self.ids = ids
        self.links = links  #: by neighbour
        self.senders = senders  #: (neighbour, protocol) → the sender to it
        self.translation = translation
        self.server = server
        #: messages this node holds (waiting a latency or a translation), for the end
        self.holding: dict[int, tuple[Owner, str]] = {}

    # -- accounting --

    def _was_down(self, since: float) -> bool:
        return self.downlog.overlaps(since, self.clock.now()) is not None

    def drop(self, msg: int | None, owner: Owner, proto: str, reason: str) -> None:
        """Trace the drop of ``msg`` here."""
        if msg is not None:
            self.holding.pop(msg, None)
        self.part.event("drop", self.agent, owner, proto, msg=msg, reason=reason)

    async def translate(self, leg: Leg, pos: int, msg: int, owner: Owner, payload: Any) -> Any:
        """The translation steps of ``leg`` at ``pos`` on ``payload`` (one ``translate``
        line each, then their delays); :data:`DROPPED` when a step fails."""
        steps = leg.steps[pos]
        if steps is None:
            return payload
        delay = 0.0
        for step in steps:
            if not step.ok:
                self.drop(msg, owner, step.source, "untranslatable")
                return DROPPED
            self.part.event(
                "translate",
                self.agent,
                owner,
                step.target,
                msg=msg,
                at=self.agent,
                chain=list(step.chain),
                dropped=list(step.dropped),
                from_proto=step.source,
                kind=step.kind,
                to_proto=step.target,
            )
            if step.fail > 0.0 and self.translation.random() < step.fail:
                self.drop(msg, owner, step.target, "translation_failed")
                return DROPPED
            payload = _through(payload, self.table, step.chain)
            delay += step.delay
        if delay > 0.0:
            started = self.clock.now()
            self.holding[msg] = (owner, steps[-1].target)
            await self.clock.sleep(delay)
            self.holding.pop(msg, None)
            if self._was_down(started):
                self.drop(msg, owner, steps[-1].target, "node_down")
                return DROPPED
        return payload

    async def leave(self, leg: Leg, pos: int, msg: int, owner: Owner) -> bool:
        """``msg`` leaves position ``pos`` of ``leg`` over the next link: ``hop``, then the
        link's latency. False (traced) when the link is down."""
        here, there = leg.route.path[pos], leg.route.path[pos + 1]
        proto = leg.route.protocols[pos]
        link = self.links.get(there)
        if link is None or link.down or proto not in link.latency:
            self.drop(msg, owner, proto, "link_down")
            return False
        self.part.event("hop", here, owner, proto, msg=msg, from_=here, proto=proto, to=there)
        self.holding[msg] = (owner, proto)
        await self.clock.sleep(link.latency[proto]())
        self.holding.pop(msg, None)
        return True

    # -- a message that arrived --

    async def on_message(
        self, protocol: str, env: Envelope, payload: Any, notice: Notice
    ) -> tuple[Envelope, Any]:
        """A request or ``list`` arrived at position ``env.i`` of its route."""
        try:
            leg = Leg.from_json(self.graph, env.route)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{self.agent}: the envelope's route: {exc}") from None
        i = env.i
        if leg.route.path[i] != self.agent:
            raise ValueError(f"{self.agent}: the route puts {leg.route.path[i]} at {i}")
        owner, msg = env.owner, env.msg
        if self._was_down(env.sent):
            self.drop(msg, owner, protocol, "node_down")
            return _silent(env), None
        payload = await self.translate(leg, i, msg, owner, payload)
        if payload is DROPPED:
            return _silent(env), None
        if i == leg.last:
            return await self._serve(leg, env, payload, notice)
        reply_env, reply = await self.forward(leg, env, payload, notice)
        if reply_env.silent:
            return _silent(env), None
        back = leg.reverse(self.graph)
        pos = leg.last - i
        if self._was_down(reply_env.sent):
            self.drop(reply_env.msg, owner, leg.route.protocols[i], "node_down")
            return _silent(env), None
        reply = await self.translate(back, pos, reply_env.msg, owner, reply)
        if reply is DROPPED or not await self.leave(back, pos, reply_env.msg, owner):
            return _silent(env), None
        return reply_env.at(i - 1, self.clock.now()), reply

    async def forward(
        self, leg: Leg, env: Envelope, payload: Any, notice: Notice | None
    ) -> tuple[Envelope, Any]:
        """Send the message at position ``env.i`` on to the next node and wait for the
        reply (a silent one when it was dropped, here or further on)."""
        i = env.i
        if not await self.leave(leg, i, env.msg, env.owner):
            return _silent(env), None
        there, proto = leg.route.path[i + 1], leg.route.protocols[i]
        sender = self.senders(there, proto)
        out = env.at(i + 1, self.clock.now())
        try:
            return await sender.send(proto, out, payload, self._fields(proto), notice)
        except Unreachable:
            # the next process is gone (killed): what it held is lost with it
            self.drop(env.msg, env.owner, proto, "node_down")
            return _silent(env), None

    def _fields(self, protocol: str) -> frozenset[str]:
        return frozenset(self.table.fields(protocol))

    async def _serve(
        self, leg: Leg, env: Envelope, payload: Any, notice: Notice
    ) -> tuple[Envelope, Any]:
        """The route's end: ``deliver``, the tool server's work, the reply sent back."""
        owner = env.owner
        arrived = self.part.event("deliver", self.agent, owner, leg.end, msg=env.msg, kind=env.kind)
        server = self.server
        if server is None:
            return _silent(env), None
        reply: Any
        if env.kind == "list":
            reply, kind = server.listing(leg.end), "list_reply"
        else:
            reply, kind = await server.call(leg.end, env, payload, arrived, notice), "response"
            if reply is None:
                return _silent(env), None
        back = leg.reverse(self.graph)
        msg = self.ids.new()
        self.part.event(
            "send",
            self.agent,
            owner,
            back.start,
            msg=msg,
            kind=kind,
            path=list(back.route.path),
            to=back.route.path[-1],
        )
        reply = await self.translate(back, 0, msg, owner, reply)
        if reply is DROPPED or (back.last > 0 and not await self.leave(back, 0, msg, owner)):
            return _silent(env), None
        reply_env = Envelope(
            env.route,
            env.i - 1,
            kind,
            msg,
            owner,
            env.attempt,
            self.clock.now(),
            caller=env.caller,
        )
        return reply_env, reply

    # -- a message this agent's caller starts --

    async def start(
        self, leg: Leg, env: Envelope, payload: Any, notice: Notice | None
    ) -> tuple[Envelope, Any, float] | None:
        """Send a new message (``env.i`` 0, a fresh ``env.msg``) along ``leg`` and wait
        for its reply: ``send``, the translation at the source, the hops; the reply's
        translation back and ``deliver``. Returns the reply's envelope, payload and
        delivery time, or None when nothing came back (dropped somewhere)."""
        owner, msg = env.owner, env.msg
        self.part.event(
            "send",
            self.agent,
            owner,
            leg.start,
            msg=msg,
            kind=env.kind,
            path=list(leg.route.path),
            to=leg.route.path[-1],
        )
        payload = await self.translate(leg, 0, msg, owner, payload)
        if payload is DROPPED:
            return None
        if leg.last == 0:  # the caller hosts the tool itself: no link to cross
            reply_env, reply = await self._serve(leg, env, payload, notice or _no_notice)
        else:
            reply_env, reply = await self.forward(leg, env, payload, notice)
        if reply_env.silent:
            return None
        back = leg.reverse(self.graph)
        if back.last == 0:
            t = self.part.event(
                "deliver", self.agent, owner, back.end, msg=reply_env.msg, kind=reply_env.kind
            )
            return reply_env, reply, t
        if self._was_down(reply_env.sent):
            self.drop(reply_env.msg, owner, back.route.protocols[-1], "node_down")
            return None
        reply = await self.translate(back, back.last, reply_env.msg, owner, reply)
        if reply is DROPPED:
            return None
        t = self.part.event(
            "deliver", self.agent, owner, back.end, msg=reply_env.msg, kind=reply_env.kind
        )
        return reply_env, reply, t

    # -- the end --

    def run_end(self) -> None:
        """The run is over: what this node still holds is dropped ``run_end``."""
        for msg, (owner, proto) in sorted(self.holding.items()):
            self.part.event("drop", self.agent, owner, proto, msg=msg, reason="run_end")
        self.holding.clear()


async def _no_notice(attempt: int) -> None:
    """A notice nobody waits for."""


def _silent(env: Envelope) -> Envelope:
    kind = "list_reply" if env.kind in ("list", "list_reply") else "response"
    return Envelope(env.route, env.i, kind, -1, env.owner, env.attempt, env.sent, silent=True)


def _through(payload: Any, table: Any, chain: tuple[str, ...]) -> Any:
    """``payload`` translated through ``chain`` (descriptors and calls lose fields;
    outcomes carry no descriptor)."""
    if isinstance(payload, Call):
        return payload.through(table, chain)
    if isinstance(payload, list):
        return [d.through(table, chain) for d in payload]
    return payload
