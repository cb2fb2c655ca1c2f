"""LTS-driven agents: tool servers and callers (LLM agents, coordinators).

Gateways have no behaviour of their own: they forward and translate, which the
transport does at every node (:mod:`sim.engine.network`).

An invocation of tool ``n`` is one run of the tool's LTS (``tool_lts`` of the
calculus, built for what the caller knows: its view's approval decision and failure
modes), shared by the caller and the server. Each protocol label is taken only when
the LTS enables it (:meth:`Invocation.take` raises :class:`EngineBug` otherwise):

* at the caller: ``call(n)``, ``tau`` (traced ``validate``; ``error(n,ValidationError)``
  when the arguments miss a field the caller's schema requires), ``approve(n)`` /
  ``deny(n)`` (when the view asks for approval), then the request is sent; an
  invocation issued in SGD (the task's ρ) runs the LTS's ``sgd`` dialect instead:
  ``invoke(n)``, one ``collect(s)`` per input the caller's schema requires and the
  arguments lack (in ``required`` order, each after a user-answer delay drawn like an
  approval's), no validation, then the same gate;
* at the server: ``execute(n)`` when a concurrency slot is free (FIFO queue before);
  the outcome (``None`` or an error type drawn from ``errors``) rides back in the reply;
* at the caller again: ``result(n)`` or ``error(n,t)``, then the one recovery label the
  LTS enables after the error: ``retry(n)``, ``fallback(n,tool)``, ``prompt(n)``,
  ``abort(n)`` (abort when the caller knows no strategy for that error).

A caller whose attempt gets no reply within the timeout traces ``timeout``. If the
attempt was executed (the LTS is in its executing phase) it takes
``error(n,ServiceDown)`` and recovers as above; if the request never executed (lost
on the way, or still queued: the caller cancels it and the server discards it), no
protocol label is possible, so the caller re-sends the same request (its approval
was not consumed) as long as it knows ``Retry(k)`` for ServiceDown (at most k
re-sends), else gives the task up (``timeout`` with ``detail.action = "give_up"``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sim.calculus.lts import LTS, TAU, label
from sim.calculus.mcp import (
    VALIDATION_ERROR,
    Abort,
    Fallback,
    Relation,
    Retry,
    SideEffect,
    ToolPlus,
    ToolView,
    UserPrompt,
    caller_view,
    tool_lts,
)
from sim.engine.network import Message, Node, Path, pjs
from sim.engine.randomness import Sampler
from sim.engine.trace import (
    ABORT,
    APPROVE,
    CALL,
    COLLECT,
    DENY,
    DROP,
    ERROR,
    EXECUTE,
    FALLBACK,
    INVOKE,
    LIST,
    NULL,
    PROMPT,
    REROUTE,
    RESULT,
    RETRY,
    TIMEOUT,
    VALIDATE,
    js,
    owner_fragment,
)
from sim.mesh.errors import NoRoute
from sim.mesh.routing import NO_DOWN

if TYPE_CHECKING:
    from sim.engine.simulation import World
    from sim.engine.workflows import Instance, TaskRT

#: The protocol whose invocations take the LTS's ``sgd`` dialect (SPEC §4).
SGD = "SGD"
#: The error a timeout stands for (SPEC §4).
SERVICE_DOWN = "ServiceDown"
#: Seconds before the first retry or re-send; doubled each time, capped.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
#: Discovery attempts before the tasks waiting on it fail.
DISCOVERY_ATTEMPTS = 3
#: Fallback chains longer than this fail the task (guards against cycles).
MAX_FALLBACK_DEPTH = 8


class EngineBug(RuntimeError):
    """The engine tried a transition its LTS does not enable (a bug, never user input)."""


def backoff(k: int) -> float:
    """Delay before the ``k``-th retry or re-send (k ≥ 1), seconds."""
    return min(BACKOFF_CAP, BACKOFF_BASE * (2.0 ** (k - 1)))


# --- compiled tools and views ----------------------------------------------------------


class ToolRT:
    """A tool's ground truth, compiled once per replication."""

    __slots__ = ("error_types", "errors", "j", "name", "service", "truth", "write")

    def __init__(self, spec: Any, service: Sampler) -> None:
        self.name: str = spec.name
        self.j = js(spec.name)
        self.truth = ToolPlus.from_mapping(spec.model_dump(mode="json", exclude_none=True))
        self.write = spec.side_effects.value in ("write", "delete")
        self.service = service
        cumulative = 0.0
        errors: list[tuple[float, str]] = []
        for name in sorted(spec.errors):
            p = float(spec.errors[name])
            if p > 0:
                cumulative += p
                errors.append((cumulative, name))
        self.errors = tuple(errors)
        self.error_types: tuple[str, ...] = tuple(sorted({*spec.errors, SERVICE_DOWN}))


@dataclass(frozen=True, slots=True)
class Labels:
    """The interned LTS labels of one tool."""

    call: str
    invoke: str
    approve: str
    deny: str
    execute: str
    result: str
    retry: str
    prompt: str
    abort: str

    @staticmethod
    def of(name: str) -> Labels:
        return Labels(
            *(
                label(a, name)
                for a in (
                    "call",
                    "invoke",
                    "approve",
                    "deny",
                    "execute",
                    "result",
                    "retry",
                    "prompt",
                    "abort",
                )
            )
        )


class ViewRT:
    """What a caller knows of a tool (its :class:`ToolView`), with the LTS it runs."""

    __slots__ = (
        "_sgd_lts",
        "approval",
        "collect",
        "exclusive",
        "feeds",
        "fields",
        "labels",
        "list_detail",
        "lts",
        "reason_detail",
        "recovery",
        "required",
        "requires",
        "sd_retries",
        "tool",
        "view",
    )

    def __init__(self, tool: ToolRT, view: ToolView) -> None:
        self.tool = tool
        self.view = view
        self.approval = view.approval
        self.fields = view.fields
        self.lts: LTS = tool_lts(view, approval=view.approval, error_types=tool.error_types)
        self.labels = Labels.of(tool.name)
        d = view.descriptor
        schema = d.input_schema or {}
        self.required: tuple[str, ...] = tuple(schema.get("required", ()) or ())
        self._sgd_lts: LTS | None = None  # built on the first invocation issued in SGD
        self.collect: dict[str, str] = {}
        deps = d.dependencies or ()
        self.requires = tuple(x.tool for x in deps if x.relation == Relation.REQUIRES)
        self.feeds = tuple(x.tool for x in deps if x.relation == Relation.PRODUCES_INPUT_FOR)
        self.exclusive = tuple(x.tool for x in deps if x.relation == Relation.EXCLUSIVE_WITH)
        recovery: dict[str, Any] = {}
        for fm in d.failure_modes or ():
            recovery.setdefault(fm.error, fm.recovery)
        self.recovery = recovery
        sd = recovery.get(SERVICE_DOWN)
        self.sd_retries = sd.n if isinstance(sd, Retry) else 0
        self.reason_detail = f'{{"reason":{js(view.approval_reason)}}}'
        self.list_detail = (
            f'"fields":{js(sorted(view.fields))},"approval":{js(view.approval)},'
            f'"approval_reason":{js(view.approval_reason)}}}'
        )

    def sgd_lts(self) -> LTS:
        """The LTS of an invocation issued in SGD (``tool_lts`` dialect ``sgd``), built once."""
        lts = self._sgd_lts
        if lts is None:
            v = self.view
            lts = tool_lts(v, approval=v.approval, error_types=self.tool.error_types, dialect="sgd")
            self._sgd_lts = lts
            self.collect = {r: label("collect", r) for r in self.required}
        return lts


# --- invocations -----------------------------------------------------------------------


class Invocation:
    """One invocation of a tool by a caller for a task of an instance."""

    __slots__ = (
        "approved",
        "attempt",
        "caller",
        "depth",
        "done",
        "executed",
        "frag",
        "id",
        "inst",
        "instance",
        "lts",
        "need",
        "parent",
        "path",
        "pending",
        "resends",
        "retries",
        "rhoj",
        "state",
        "task",
        "taskj",
        "tool",
        "toolj",
        "view",
        "waiting",
        "wfj",
    )

    def __init__(
        self,
        inv_id: int,
        caller: Caller,
        instance: Instance,
        task: TaskRT,
        view: ViewRT,
        path: Path,
        need: str,
        parent: int | None,
        depth: int,
    ) -> None:
        self.id = inv_id
        self.caller = caller
        self.instance = instance
        self.task = task
        self.inst = instance.id
        self.wfj = task.wfj
        self.taskj = task.j
        self.tool = view.tool
        self.toolj = view.tool.j
        self.view = view
        self.lts: LTS = view.sgd_lts() if task.rho == SGD else view.lts
        self.state = self.lts.initial
        self.pending: tuple[str, ...] = ()  # SGD: the slots still to collect
        self.attempt = 0
        self.path = path
        self.need = need
        self.approved = False  # an approval not yet consumed by an execute
        self.executed = -1  # the attempt the server executed last
        self.waiting = False
        self.done = False
        self.resends = 0
        self.retries = 0
        self.parent = parent
        self.depth = depth
        self.rhoj = pjs(task.rho)
        self.frag = owner_fragment(self.wfj, self.inst, self.taskj, inv_id, self.toolj)

    def take(self, lab: str) -> None:
        """Take transition ``lab`` of the invocation's LTS; :class:`EngineBug` if not enabled."""
        nxt = self.lts.step(self.state, lab)
        if nxt is None:
            lts = self.lts
            raise EngineBug(
                f"invocation {self.id} of {self.tool.name}: '{lab}' is not enabled in state "
                f"{lts.name(self.state)} (enabled: {[a for a, _ in lts.enabled(self.state)]})"
            )
        self.state = nxt

    @property
    def live(self) -> bool:
        return not self.done and not self.instance.dead


class Discovery:
    """A ``list`` exchange: the caller learns the descriptor of ``tool`` at ``path``'s end."""

    __slots__ = (
        "attempt",
        "done",
        "frag",
        "id",
        "inst",
        "key",
        "need",
        "path",
        "rho",
        "taskj",
        "tool",
        "toolj",
        "waiters",
        "waiting",
        "wfj",
    )

    def __init__(
        self,
        disc_id: int,
        key: Any,
        tool: ToolRT,
        path: Path,
        need: str,
        rho: str,
        instance: Instance,
        task: TaskRT,
    ) -> None:
        self.id = disc_id
        self.key = key
        self.tool = tool
        self.toolj = tool.j
        self.path = path
        self.need = need
        self.rho = rho
        self.attempt = 0
        self.waiting = False
        self.done = False
        self.wfj = task.wfj
        self.inst = instance.id
        self.taskj = task.j
        self.waiters: list[Any] = []
        self.frag = owner_fragment(self.wfj, self.inst, self.taskj, disc_id, self.toolj)


# --- tool server -----------------------------------------------------------------------


class ToolServer:
    """Serves invocations with ``concurrency`` slots and a FIFO queue; answers ``list``."""

    def __init__(self, world: World, node: Node, concurrency: int) -> None:
        self.world = world
        self.env = world.env
        self.node = node
        self.concurrency = concurrency
        self.busy = 0
        self.queue: deque[tuple[Message, float]] = deque()
        self.running: dict[int, Message] = {}
        self.errors_rng = world.streams.errors
        self.later = world.later
        self._done_cb = self._done
        node.server = self

    def on_request(self, msg: Message) -> None:
        """A ``tools/call`` request delivered here."""
        if self.busy < self.concurrency:
            self._start(msg, self.env.now)
        else:
            self.queue.append((msg, self.env.now))

    def _start(self, msg: Message, queued_at: float) -> None:
        inv: Invocation = msg.owner
        if not inv.live or not inv.waiting or inv.attempt != msg.attempt:
            return  # the caller cancelled this attempt (it timed out): discard
        world = self.world
        inv.take(inv.view.labels.execute)
        inv.executed = msg.attempt
        metrics = world.metrics
        metrics.executions += 1
        counters = inv.task.counters
        counters.executions += 1
        tool = inv.tool
        unapproved = False
        if tool.write:
            metrics.writes_executed += 1
            counters.writes_executed += 1
            if not inv.approved:
                metrics.writes_without_approval += 1
                counters.writes_without_approval += 1
                unapproved = True
        inv.approved = False  # an approval is consumed by one execute
        now = self.env.now
        trace = world.trace
        if trace.enabled:
            detail = f'{{"attempt":{msg.attempt},"waited":{round(now - queued_at, 6)!r}'
            if tool.write:
                detail += f',"approved":{"false" if unapproved else "true"}'
            trace.line(now, EXECUTE, self.node.j, inv.frag, pjs(msg.proto), detail + "}")
        self.busy += 1
        self.running[msg.id] = msg
        service = tool.service()
        self.later(service, (msg, self.node.epoch), self._done_cb)

    def _done(self, event: Any) -> None:
        msg, epoch = event._value
        if epoch != self.node.epoch:
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
        world = self.world
        world.transport.send(
            "response", inv, msg.path.reverse(world), msg.attempt, outcome, inv.caller.on_response
        )
        self._next()

    def _next(self) -> None:
        queue = self.queue
        while queue and self.busy < self.concurrency:
            msg, at = queue.popleft()
            self._start(msg, at)

    def on_list(self, msg: Message) -> None:
        """A ``tools/list`` request: answered at once (no slot), along the reverse path."""
        world = self.world
        disc: Discovery = msg.owner
        world.transport.send(
            "list_reply",
            disc,
            msg.path.reverse(world),
            msg.attempt,
            None,
            world.callers[msg.path.nodes[0].id].on_list_reply,
        )

    def on_down(self) -> None:
        """The node went down: the queue and the executions in progress are lost."""
        world = self.world
        now = self.env.now
        trace = world.trace
        for what, msgs in (
            ("executing", list(self.running.values())),
            ("queued", [m for m, _ in self.queue]),
        ):
            for msg in msgs:
                world.metrics.lost_work[what] = world.metrics.lost_work.get(what, 0) + 1
                if trace.enabled:
                    o = msg.owner
                    trace.line(
                        now,
                        DROP,
                        self.node.j,
                        o.frag,
                        pjs(msg.proto),
                        f'{{"reason":"node_down","lost":"{what}"}}',
                    )
        self.running.clear()
        self.queue.clear()
        self.busy = 0


# --- callers ---------------------------------------------------------------------------


class Caller:
    """An LLM agent or coordinator: runs workflow instances' invocations and discovery."""

    def __init__(self, world: World, node: Node) -> None:
        self.world = world
        self.env = world.env
        self.node = node
        self.id = node.id
        self.views: dict[Any, ViewRT] = {}
        self.latest: dict[str, ViewRT] = {}  # tool → the view learned last
        self.discoveries: dict[Any, Discovery] = {}
        self.suspicion = world.new_suspicion()
        self.later = world.later
        self.live: dict[int, Instance] = {}
        self._approval_cb = self._approval
        self._collect_cb = self._collected
        self._timer_cb = self._timer
        self._resume_cb = self._resume
        self._disc_timer_cb = self._disc_timer

    # -- routes --

    def path_for(self, need: str, rho: str) -> Path:
        """The current path to a server of ``need`` (raises :class:`NoRoute`)."""
        world = self.world
        down = NO_DOWN if world.static else self.suspicion.down(self.env.now)
        try:
            return world.path_to(self.id, need, rho, down)
        except NoRoute:
            if not down:
                raise
            # nothing avoids every suspect: try the full topology rather than give up
            return world.path_to(self.id, need, rho, NO_DOWN)

    # -- discovery --

    def ensure_view(
        self, instance: Instance, task: TaskRT, need: str, tool: ToolRT, path: Path, then: Any
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
            world = self.world
            disc = Discovery(world.new_inv(), key, tool, path, need, task.rho, instance, task)
            self.discoveries[key] = disc
            disc.waiters.append(then)
            world.metrics.discoveries += 1
            self._disc_send(disc)
        else:
            disc.waiters.append(then)

    def _disc_send(self, disc: Discovery) -> None:
        world = self.world
        disc.attempt += 1
        disc.waiting = True
        server = disc.path.nodes[-1].server
        world.transport.send("list", disc, disc.path, disc.attempt, None, server.on_list)
        self.later(world.list_timeout, (disc, disc.attempt), self._disc_timer_cb)

    def on_list_reply(self, msg: Message) -> None:
        """The ``tools/list`` reply: the descriptor projected through the reply's path."""
        disc: Discovery = msg.owner
        if disc.done or not disc.waiting or msg.attempt != disc.attempt or self.node.down:
            return
        disc.waiting = False
        disc.done = True
        world = self.world
        view = world.view_of(disc.tool, msg.path.fields)
        self.views[disc.key] = view
        self.latest[disc.tool.name] = view
        del self.discoveries[disc.key]
        trace = world.trace
        if trace.enabled:
            trace.line(
                self.env.now,
                LIST,
                self.node.j,
                disc.frag,
                pjs(disc.rho),
                f'{{"host":{disc.path.nodes[-1].j},{view.list_detail}',
            )
        for then in disc.waiters:
            then(view, disc.path)

    def _disc_timer(self, event: Any) -> None:
        disc, attempt = event._value
        if disc.done or not disc.waiting or disc.attempt != attempt or self.node.down:
            return
        disc.waiting = False
        world = self.world
        world.metrics.timeouts += 1
        self._suspect(disc.path)
        give_up = disc.attempt >= DISCOVERY_ATTEMPTS
        if world.trace.enabled:
            world.trace.line(
                self.env.now,
                TIMEOUT,
                self.node.j,
                disc.frag,
                pjs(disc.rho),
                f'{{"attempt":{attempt},"kind":"list","action":'
                f'"{"give_up" if give_up else "resend"}"}}',
            )
        if give_up:
            disc.done = True
            del self.discoveries[disc.key]
            for then in disc.waiters:
                then(None, "discovery_timeout")
            return
        if not world.static:
            try:
                new = self.path_for(disc.need, disc.rho)
            except NoRoute:
                new = disc.path
            if new.nodes[-1].server is not None and new.key != disc.path.key:
                self._reroute(disc, disc.path, new)
                disc.path = new
        self._disc_send(disc)

    # -- invocations --

    def invoke(
        self,
        instance: Instance,
        task: TaskRT,
        view: ViewRT,
        path: Path,
        need: str,
        parent: int | None = None,
        depth: int = 0,
    ) -> Invocation:
        """Start an invocation: ``call``, then validation, then the approval gate; issued
        in SGD: ``invoke``, then collecting the missing required slots, then the gate."""
        world = self.world
        inv = Invocation(world.new_inv(), self, instance, task, view, path, need, parent, depth)
        world.metrics.calls += 1
        sgd = task.rho == SGD
        inv.take(view.labels.invoke if sgd else view.labels.call)
        trace = world.trace
        now = self.env.now
        if trace.enabled:
            detail = f'{{"target":{path.nodes[-1].j}'
            if parent is not None:
                detail += f',"parent":{parent}'
            trace.line(now, INVOKE if sgd else CALL, self.node.j, inv.frag, inv.rhoj, detail + "}")
        if sgd:
            args = task.args
            inv.pending = tuple(k for k in view.required if k not in args)
            self._collect(inv)
        else:
            self._validate(inv)
        return inv

    def _collect(self, inv: Invocation) -> None:
        """SGD: ask the user for the next missing slot (an approval's latency), or go on to
        the gate when none is left."""
        if inv.pending:
            world = self.world
            self.later(world.approval_latency(), inv, self._collect_cb)
        else:
            self._gate(inv)

    def _collected(self, event: Any) -> None:
        inv: Invocation = event._value
        if not inv.live:
            return
        slot, *rest = inv.pending
        inv.pending = tuple(rest)
        inv.take(inv.view.collect[slot])
        trace = self.world.trace
        if trace.enabled:
            trace.line(
                self.env.now, COLLECT, self.node.j, inv.frag, inv.rhoj, f'{{"slot":{js(slot)}}}'
            )
        self._collect(inv)

    def _validate(self, inv: Invocation) -> None:
        args = inv.task.args
        missing = [k for k in inv.view.required if k not in args]
        if missing:
            self._error(inv, VALIDATION_ERROR, f',"missing":{js(missing)}')
            return
        inv.take(TAU)
        trace = self.world.trace
        if trace.enabled:
            trace.line(self.env.now, VALIDATE, self.node.j, inv.frag, inv.rhoj, "{}")
        self._gate(inv)

    def _gate(self, inv: Invocation) -> None:
        if inv.view.approval and not inv.approved:
            world = self.world
            world.metrics.approvals_asked += 1
            inv.task.counters.approvals_asked += 1
            delay = world.approval_latency()
            self.later(delay, inv, self._approval_cb)
        else:
            self._dispatch(inv)

    def _approval(self, event: Any) -> None:
        inv: Invocation = event._value
        if not inv.live:
            return
        world = self.world
        granted = world.streams.approvals.random() < world.grant_probability
        labels = inv.view.labels
        trace = world.trace
        now = self.env.now
        if granted:
            world.metrics.approvals_granted += 1
            inv.take(labels.approve)
            inv.approved = True
            if trace.enabled:
                trace.line(now, APPROVE, self.node.j, inv.frag, inv.rhoj, inv.view.reason_detail)
            self._dispatch(inv)
        else:
            world.metrics.approvals_denied += 1
            inv.take(labels.deny)
            if trace.enabled:
                trace.line(now, DENY, self.node.j, inv.frag, inv.rhoj, inv.view.reason_detail)
            self._finish(inv, "cancelled", "denied")

    def _dispatch(self, inv: Invocation) -> None:
        """Send the request for a new attempt, over the route of the moment."""
        world = self.world
        if inv.attempt > 0 and not world.static:
            try:
                new = self.path_for(inv.need, inv.task.rho)
            except NoRoute:
                new = inv.path
            if (
                new.key != inv.path.key
                and new.nodes[-1].server is not None
                and inv.tool.name in world.hosted[new.nodes[-1].id]
            ):
                self._reroute(inv, inv.path, new)
                inv.path = new
        inv.attempt += 1
        inv.waiting = True
        server = inv.path.nodes[-1].server
        world.transport.send("request", inv, inv.path, inv.attempt, None, server.on_request)
        self.later(inv.task.timeout, (inv, inv.attempt), self._timer_cb)

    def _reroute(self, owner: Any, old: Path, new: Path) -> None:
        world = self.world
        world.metrics.reroutes += 1
        if world.trace.enabled:
            down = self.suspicion.down(self.env.now)
            world.trace.line(
                self.env.now,
                REROUTE,
                self.node.j,
                owner.frag,
                pjs(new.start),
                f'{{"from_path":{js(list(old.route.path))},'
                f'"to_path":{js(list(new.route.path))},'
                f'"avoid":{js(sorted(down.nodes))}}}',
            )

    def on_response(self, msg: Message) -> None:
        """The reply to an attempt: ``result`` or ``error(t)`` then recovery."""
        inv: Invocation = msg.owner
        if not inv.live or not inv.waiting or msg.attempt != inv.attempt or self.node.down:
            return  # late reply to an attempt the caller gave up
        inv.waiting = False
        outcome: str | None = msg.payload
        if outcome is None:
            inv.take(inv.view.labels.result)
            trace = self.world.trace
            if trace.enabled:
                trace.line(
                    self.env.now,
                    RESULT,
                    self.node.j,
                    inv.frag,
                    inv.rhoj,
                    f'{{"attempt":{msg.attempt}}}',
                )
            self._finish(inv, "succeeded", "")
        else:
            self._error(inv, outcome, f',"attempt":{msg.attempt}')

    def _timer(self, event: Any) -> None:
        inv, attempt = event._value
        if not inv.live or not inv.waiting or inv.attempt != attempt or self.node.down:
            return
        inv.waiting = False
        world = self.world
        world.metrics.timeouts += 1
        self._suspect(inv.path)
        executed = inv.executed == attempt
        if executed:
            action = "error"
        elif inv.resends < inv.view.sd_retries:
            action = "resend"
        else:
            action = "give_up"
        trace = world.trace
        if trace.enabled:
            trace.line(
                self.env.now,
                TIMEOUT,
                self.node.j,
                inv.frag,
                inv.rhoj,
                f'{{"attempt":{attempt},"after":{inv.task.timeout!r},'
                f'"executed":{"true" if executed else "false"},"action":"{action}"}}',
            )
        if action == "error":
            self._error(inv, SERVICE_DOWN, ',"cause":"timeout"')
        elif action == "resend":
            inv.resends += 1
            world.metrics.resends += 1
            self.later(backoff(inv.resends), inv, self._resume_cb)
        else:
            self._finish(inv, "failed", "timeout")

    def _suspect(self, path: Path) -> None:
        """The failure detector learns from a timeout (dynamic routers only): what it
        suspects is the router's policy (:meth:`sim.mesh.Router.suspects`)."""
        world = self.world
        if world.static:
            return
        nodes, links = world.router.suspects(path.route.path)
        self.suspicion.suspect(self.env.now, nodes, links)

    def _resume(self, event: Any) -> None:
        """After a re-send's backoff: send again (same approval, not consumed)."""
        inv: Invocation = event._value
        if inv.live:
            self._dispatch(inv)

    def _error(self, inv: Invocation, error: str, extra: str) -> None:
        world = self.world
        world.metrics.errors[error] = world.metrics.errors.get(error, 0) + 1
        inv.take(label("error", inv.tool.name, error))
        trace = world.trace
        now = self.env.now
        if trace.enabled:
            trace.line(
                now, ERROR, self.node.j, inv.frag, inv.rhoj, f'{{"error":{pjs(error)}{extra}}}'
            )
        # the one recovery label the LTS enables after this error
        (lab, _), *rest = inv.lts.enabled(inv.state)
        if rest:
            raise EngineBug(f"invocation {inv.id}: several recoveries enabled after {error}")
        labels = inv.view.labels
        strategy = inv.view.recovery.get(error, Abort())
        if lab == labels.retry:
            inv.take(lab)
            inv.retries += 1
            world.metrics.retries += 1
            wait = backoff(inv.retries)
            if trace.enabled:
                trace.line(
                    now,
                    RETRY,
                    self.node.j,
                    inv.frag,
                    inv.rhoj,
                    f'{{"error":{pjs(error)},"n":{inv.retries},"backoff":{wait!r}}}',
                )
            self.later(wait, inv, self._after_retry)
        elif lab == labels.prompt:
            inv.take(lab)
            world.metrics.prompts += 1
            message = strategy.message if isinstance(strategy, UserPrompt) else ""
            if trace.enabled:
                trace.line(
                    now,
                    PROMPT,
                    self.node.j,
                    inv.frag,
                    inv.rhoj,
                    f'{{"error":{pjs(error)},"message":{js(message)}}}',
                )
            self._finish(inv, "failed", "prompt")
        elif lab == labels.abort:
            inv.take(lab)
            world.metrics.aborts += 1
            if trace.enabled:
                trace.line(now, ABORT, self.node.j, inv.frag, inv.rhoj, f'{{"error":{pjs(error)}}}')
            self._finish(inv, "failed", "abort")
        elif isinstance(strategy, Fallback) and lab == label(
            "fallback", inv.tool.name, strategy.tool
        ):
            inv.take(lab)
            world.metrics.fallbacks += 1
            if trace.enabled:
                trace.line(
                    now,
                    FALLBACK,
                    self.node.j,
                    inv.frag,
                    inv.rhoj,
                    f'{{"error":{pjs(error)},"to":{js(strategy.tool)}}}',
                )
            inv.done = True
            world.workflows.fallback(inv, strategy.tool)
        else:
            raise EngineBug(f"invocation {inv.id}: unexpected recovery label {lab}")

    def _after_retry(self, event: Any) -> None:
        inv: Invocation = event._value
        if not inv.live:
            return
        if inv.lts.step(inv.state, TAU) is not None:  # a ValidationError retry
            self._validate(inv)
        else:
            self._gate(inv)

    def _finish(self, inv: Invocation, status: str, reason: str) -> None:
        inv.done = True
        inv.waiting = False
        self.world.workflows.task_done(inv.instance, inv.task, status, reason)


def views_equal(a: ViewRT, b: ViewRT) -> bool:
    """Whether two views carry the same knowledge (fields and approval)."""
    return a.fields == b.fields and a.approval == b.approval


def make_view(tool: ToolRT, fields: frozenset[str], mcp_policy: str) -> ViewRT:
    """The caller's view of ``tool`` from a descriptor projected to ``fields``."""
    return ViewRT(tool, caller_view(tool.truth, fields, mcp_policy))


__all__ = [
    "NULL",
    "SERVICE_DOWN",
    "SGD",
    "Caller",
    "Discovery",
    "EngineBug",
    "Invocation",
    "SideEffect",
    "ToolRT",
    "ToolServer",
    "ViewRT",
    "make_view",
]
