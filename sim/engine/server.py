"""The tool server at an agent: ``on_request(msg)`` / ``on_list(msg)`` in, replies out.

Inputs: requests and ``list`` requests delivered by the transport. Outputs: a
``response`` (carrying the outcome: ``None`` or an error type) or a ``list_reply``
sent back along the reverse path to the owner's ``reply`` handler.

Timing: a request that finds a free slot (of ``concurrency``) executes at once
(``execute``, the server's LTS step), else it waits in a FIFO queue; an execution
holds its slot for a service time drawn from the tool's ``service_time`` (stream
``service``), then the outcome is drawn (stream ``errors``: error types in sorted
order, one uniform draw), the reply leaves and the next queued request starts at the
same instant. The request message is itself the completion event on SimPy's queue
(queued as ``later`` would queue one: no other object per execution). A request whose
attempt the caller cancelled (it timed out) is discarded when its turn comes (MCP's
``notifications/cancelled``). ``list`` is answered at once, without a slot. When the
node goes down (``on_down``) the queue and the executions in progress are lost
(``drop`` with ``lost``), and executions finishing later are ignored (the node's epoch
changed).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

import simpy

from sim.engine.clock import NORMAL, Later, heappush
from sim.engine.invocation import Discovery, Invocation
from sim.engine.recorder import Recorder
from sim.engine.topology import Node
from sim.engine.trace import pjs
from sim.engine.transport import Message, Sends


class ToolServer:
    """Serves invocations with ``concurrency`` slots and a FIFO queue; answers ``list``.
    (``later``, the kernel's, is not used: an execution queues its request itself.)"""

    def __init__(
        self,
        env: simpy.Environment,
        later: Later,
        recorder: Recorder,
        transport: Sends,
        errors: random.Random,
        node: Node,
        concurrency: int,
    ) -> None:
        self.env = env
        self.rec = recorder
        self.transport = transport
        self.errors_rng = errors
        self.node = node
        self.concurrency = concurrency
        self.busy = 0
        self.queue: deque[tuple[Message, float]] = deque()
        self.running: dict[int, Message] = {}
        self._queue: Any = env._queue  # SimPy's event heap (SimPy 4.1, as the transport)
        self._eid: Callable[[], int] = env._eid.__next__  # its next insertion number
        self._done_cbs = (self._done,)
        node.server = self

    def on_request(self, msg: Message) -> None:
        """A ``tools/call`` request delivered here (``msg.t``, the delivery time, is now)."""
        if self.busy < self.concurrency:
            self._start(msg, msg.t, msg.t)  # a delivered message's t is now
        else:
            self.queue.append((msg, msg.t))

    def _start(self, msg: Message, queued_at: float, now: float) -> None:
        inv: Invocation = msg.owner
        if inv.done or inv.instance.dead or not inv.waiting or inv.attempt != msg.attempt:
            return  # the caller cancelled this attempt (it timed out): discard
        inv.take(inv.view.labels.execute)
        inv.executed = msg.attempt
        tool = inv.tool
        approved = inv.approved
        inv.approved = False  # an approval is consumed by one execute
        self.rec.execute(
            now,
            self.node.j,
            inv.frag,
            msg.path.endj,  # the protocol it arrived in
            msg.attempt,
            now - queued_at,
            tool.write,
            approved,
            inv.task.counters,
        )
        self.busy += 1
        self.running[msg.id] = msg
        # the request is its own completion event (as later() would queue it): its t the
        # completion time, its payload (a request carries none) the node's epoch now
        msg.payload = self.node.epoch
        msg.t = done = now + tool.service()
        msg.callbacks = self._done_cbs
        heappush(self._queue, (done, NORMAL, self._eid(), msg))

    def _done(self, msg: Message) -> None:
        if msg.payload != self.node.epoch:
            return  # lost when the node went down (traced then)
        del self.running[msg.id]
        self.busy -= 1
        inv: Invocation = msg.owner
        outcome: str | None = None
        errors = inv.tool.errors
        if errors:
            u = self.errors_rng.random()
            for cumulative, name in errors:
                if u < cumulative:
                    outcome = name
                    break
        self.transport.send("response", inv, msg.path.reverse(), msg.attempt, outcome, inv.reply)
        self._next()

    def _next(self) -> None:
        queue = self.queue
        if not queue:
            return
        now = self.env._now  # SimPy 4.1's clock, without the property (the hot path)
        while queue and self.busy < self.concurrency:
            msg, at = queue.popleft()
            self._start(msg, at, now)

    def on_list(self, msg: Message) -> None:
        """A ``tools/list`` request: answered at once (no slot), along the reverse path."""
        disc: Discovery = msg.owner
        self.transport.send("list_reply", disc, msg.path.reverse(), msg.attempt, None, disc.reply)

    def on_down(self) -> None:
        """The node went down: the queue and the executions in progress are lost."""
        now = self.env.now
        rec = self.rec
        for what, msgs in (
            ("executing", list(self.running.values())),
            ("queued", [m for m, _ in self.queue]),
        ):
            for msg in msgs:
                rec.lost(now, self.node.j, msg.owner.frag, pjs(msg.proto), what)
        self.running.clear()
        self.queue.clear()
        self.busy = 0
