"""Tool discovery at one caller: what it knows of each tool at each path (``list``).

Inputs: ``ensure_view(instance, task, need, tool, path, then)`` from the workflows;
``list_reply`` messages from the transport. Outputs: ``then(view, path)`` once the
caller knows ``tool`` at ``path``, or ``then(None, "discovery_timeout")``; ``latest``,
the view of each tool the caller learned last (what it knows of dependencies).

Timing: a known (tool, path) answers at once. Otherwise a ``list`` request is sent at
once (one exchange per (tool, path), shared by every task waiting on it); the server
answers at once and the reply's arrival traces ``list`` with the fields every protocol
on the way kept. No reply within ``list_timeout`` (the largest task timeout): the
caller traces ``timeout`` (``kind: list``), suspects the path like an invocation's
timeout, and re-sends (re-routed for dynamic routers, to a host of the same tool, as an
invocation's later attempt) up to 3 attempts in all, then the waiting tasks fail. The
view is kept for the path the reply came over, and the waiting tasks go on over it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import simpy

from sim.calculus.mcp import DISCOVERY_ATTEMPTS
from sim.engine.invocation import Discovery
from sim.engine.paths import Path
from sim.engine.recorder import Recorder
from sim.engine.trace import pjs
from sim.engine.transport import Message, Transport
from sim.engine.views import ToolRT, ViewRT, Views
from sim.mesh.errors import NoRoute

if TYPE_CHECKING:
    from sim.engine.caller import Caller
    from sim.engine.workflows import Instance, TaskRT

Then = Callable[[ViewRT | None, Path | str], None]


class ToolDiscovery:
    """The views one caller holds, and its ``list`` exchanges in progress."""

    def __init__(
        self,
        env: simpy.Environment,
        recorder: Recorder,
        transport: Transport,
        views: Views,
        caller: Caller,
        list_timeout: float,
    ) -> None:
        self.env = env
        self.rec = recorder
        self.transport = transport
        self.shared = views
        self.caller = caller
        self.node = caller.node
        self.list_timeout = list_timeout
        #: the timers of its ``list`` requests (shared with every caller's of that delay)
        self._deadlines = transport.deadlines(list_timeout)
        self.views: dict[Any, ViewRT] = {}
        self.latest: dict[str, ViewRT] = {}  # tool → the view learned last
        #: the tools some view of ``latest`` feeds (``ProducesInputFor``)
        self.fed: frozenset[str] = frozenset()
        self.discoveries: dict[Any, Discovery] = {}
        self._timer_cb = self._timer
        self._reply_cb = self.on_list_reply

    def known(self, tool: str, path: Path) -> ViewRT | None:
        """The view of ``tool`` at ``path`` the caller holds, if any (no discovery)."""
        return self.views.get((tool, path))

    def ensure_view(
        self, instance: Instance, task: TaskRT, need: str, tool: ToolRT, path: Path, then: Then
    ) -> None:
        """Call ``then(view, path)`` once the caller knows ``tool`` at ``path`` (discovering
        it first if needed), or ``then(None, reason)`` when discovery fails."""
        key = (tool.name, path)  # compiled paths are unique per (route, start protocol)
        view = self.views.get(key)
        if view is not None:
            then(view, path)
            return
        disc = self.discoveries.get(key)
        if disc is None:
            disc = Discovery(
                self.caller.new_id(),
                self._reply_cb,
                key,
                tool,
                path,
                need,
                task.rho,
                instance,
                task,
            )
            self.discoveries[key] = disc
            disc.waiters.append(then)
            self.rec.metrics.discovery()
            self._send(disc)
        else:
            disc.waiters.append(then)

    def _send(self, disc: Discovery) -> None:
        disc.attempt += 1
        disc.waiting = True
        server = disc.path.nodes[-1].server
        self.transport.send("list", disc, disc.path, disc.attempt, None, server.on_list)
        # the reply usually comes first: one shared, cancellable timer (no event for it)
        disc.timer = self._deadlines.set((disc, disc.attempt), self._timer_cb)

    def on_list_reply(self, msg: Message) -> None:
        """The ``tools/list`` reply: the descriptor projected through the reply's path."""
        disc: Discovery = msg.owner
        if disc.done or not disc.waiting or msg.attempt != disc.attempt or self.node.down:
            return
        disc.waiting = False
        disc.done = True
        timer = disc.timer
        if timer is not None:
            timer.cancel()  # its callback would return at once: no event for it
            disc.timer = None
        view = self.shared.of(disc.tool, msg.path.fields)
        self.views[(disc.tool.name, disc.path)] = view  # where it was learned (maybe rerouted)
        latest = self.latest
        latest[disc.tool.name] = view
        self.fed = frozenset(x for v in latest.values() for x in v.feeds)
        del self.discoveries[disc.key]
        host = disc.path.nodes[-1].j
        self.rec.list_(self.env.now, self.node.j, disc.frag, pjs(disc.rho), host, view.list_detail)
        for then in disc.waiters:
            then(view, disc.path)

    def _timer(self, event: Any) -> None:
        disc, attempt = event._value
        if disc.timer is event:
            disc.timer = None  # fired (the timer holds the discovery: no cycle left)
        if disc.done or not disc.waiting or disc.attempt != attempt or self.node.down:
            return
        disc.waiting = False
        caller = self.caller
        caller.suspect(disc.path)
        give_up = disc.attempt >= DISCOVERY_ATTEMPTS
        action = "give_up" if give_up else "resend"
        self.rec.timeout(self.env.now, self.node.j, disc.frag, pjs(disc.rho), attempt, action)
        if give_up:
            disc.done = True
            del self.discoveries[disc.key]
            for then in disc.waiters:
                then(None, "discovery_timeout")
            return
        if not caller.routes.static:
            try:
                new = caller.path_for(disc.need, disc.rho)
            except NoRoute:
                new = disc.path
            if new.key != disc.path.key and caller.routes.hosts(new, disc.tool.name):
                caller.reroute(disc, disc.path, new)
                disc.path = new
        self._send(disc)
