"""The caller (an LLM agent or coordinator): invocations stepped through the tool's LTS.

Inputs: from the workflows, ``invoke(instance, task, view, path, need)`` once the view
is known (:mod:`sim.engine.discovery` gets it); from the transport, the server's
response (``on_response``, the handler each invocation carries as ``reply``).
Outputs: requests to the transport, lines and counts to the recorder, and the task's
outcome to the workflows through the small :class:`Outcomes` protocol (``task_done``,
``fallback``); the caller never reaches into the workflows' state.

Timing, per invocation: ``call`` (or, issued in SGD, ``invoke`` then one ``collect`` per
missing required slot, each after a user-answer delay drawn from the approval latency),
τ (``validate``), then the approval gate when the approval policy asks for this call
(decided once per invocation, from the view and the task's arguments): after the
approval latency (stream ``approvals``) ``approve`` with ``grant_probability`` (one draw),
else ``deny``; then the request is sent at once and the attempt's timer set to the
task's ``timeout``. The reply gives ``result`` or ``error(t)`` and the one recovery the
LTS enables: ``retry`` after a backoff of 0.5 s × 2^(k−1) (capped at 30 s; back
through the gate), ``fallback`` (a new invocation of the fallback tool, via the
workflows), ``prompt`` or ``abort`` (the task fails). On a timeout the caller traces
``timeout``: an executed attempt becomes ``error(ServiceDown)``; one that never executed
is re-sent after the backoff if the view knows ``Retry(k)`` for ServiceDown (k re-sends
at most), else the task is given up. A timeout also feeds the caller's failure
detector (what it suspects is the router's policy, :meth:`RouteService.suspects`), and
a dynamic router's next attempt is routed around the suspects (``reroute``).
"""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import simpy

from sim.approval import ApprovalPolicy, Decision, DescriptorRule, approval, simulated_denial
from sim.calculus.lts import TAU, label
from sim.calculus.mcp import (
    SERVICE_DOWN,
    VALIDATION_ERROR,
    Abort,
    Fallback,
    UserPrompt,
    backoff,
)
from sim.engine.bugs import EngineBug
from sim.engine.clock import Later
from sim.engine.failures import Suspicion
from sim.engine.invocation import Invocation, Plan
from sim.engine.paths import Path
from sim.engine.randomness import Sampler
from sim.engine.recorder import Recorder, target
from sim.engine.routes import RouteService
from sim.engine.topology import Node
from sim.engine.trace import js
from sim.engine.transport import Message, Sends
from sim.engine.views import ViewRT
from sim.mesh.errors import NoRoute
from sim.mesh.routing import NO_DOWN

if TYPE_CHECKING:
    from sim.engine.workflows import Instance, TaskRT


class Outcomes(Protocol):
    """What a caller reports to the workflows about a task."""

    def task_done(self, inst: Instance, task: TaskRT, status: str, reason: str) -> None:
        """The task's invocation (or its last fallback) ended: succeeded, failed, cancelled."""

    def fallback(self, inv: Invocation, tool: str) -> None:
        """Recovery ``Fallback(tool)``: invoke ``tool`` for the same task."""


class Approval:
    """The approval gate: the policy deciding whether a call asks (default: the built-in
    rule with ``mcp_policy`` hints), the answer's latency and the grant draw. The
    decision is :func:`sim.approval.approval`'s; the built-in rule's depends on the view
    only (``by_view``: a task's plan per view holds it)."""

    __slots__ = (
        "_decided",
        "_denial",
        "by_view",
        "grant_probability",
        "latency",
        "policy",
        "rng",
    )

    def __init__(
        self,
        latency: Sampler,
        grant_probability: float,
        rng: random.Random,
        policy: ApprovalPolicy | None = None,
    ) -> None:
        self.latency = latency  #: seconds until the human answers (also SGD's collects)
        self.grant_probability = grant_probability
        self.rng = rng
        self.policy = policy if policy is not None else DescriptorRule()
        #: the policy's answers depend on the view alone (the built-in rule, exactly)
        self.by_view = type(self.policy) is DescriptorRule
        self._decided: dict[ViewRT, Decision] = {}  # by view, when the policy is by_view
        self._denial = js(simulated_denial(grant_probability))

    def decision(self, view: ViewRT, args: dict[str, Any]) -> Decision:
        """The approval of a call of ``view``'s tool with ``args`` (the policy's checked
        answer, the ground truth's demand); the built-in rule's once per view."""
        if not self.by_view:
            return approval(view.tool.truth, view.view, self.policy, MappingProxyType(args))
        hit = self._decided.get(view)
        if hit is None:
            hit = approval(view.tool.truth, view.view, self.policy, MappingProxyType(args))
            self._decided[view] = hit
        return hit

    def reason(self, inv: Invocation) -> str:
        """The ``{"reason":..}`` detail of an ``approve`` of ``inv``."""
        return f'{{"reason":{inv.plan.why}}}'

    def denial(self, inv: Invocation) -> str:
        """The ``{"reason":..,"asked":..}`` detail of a ``deny`` of ``inv``."""
        return f'{{"reason":{self._denial},"asked":{inv.plan.why}}}'

    def granted(self) -> bool:
        """One draw: whether the human grants this approval."""
        return self.rng.random() < self.grant_probability


class Caller:
    """Runs the invocations of the instances started at one agent (see the module)."""

    outcomes: Outcomes  #: set by the composition root once the workflows exist

    def __init__(
        self,
        env: simpy.Environment,
        later: Later,
        recorder: Recorder,
        transport: Sends,
        routes: RouteService,
        approval: Approval,
        new_id: Any,
        node: Node,
        suspect_ttl: float,
    ) -> None:
        self.env = env
        self.later = later
        self.rec = recorder
        self.transport = transport
        self.routes = routes
        self.approval = approval
        self.new_id = new_id
        self.node = node
        self.id = node.id
        self.suspicion = Suspicion(suspect_ttl)
        self._approval_cb = self._approval
        self._collect_cb = self._collected
        self._timer_cb = self._timer
        self._resume_cb = self._resume
        self._retry_cb = self._after_retry
        self._response_cb = self.on_response

    # -- routes and the failure detector --

    def path_for(self, need: str, rho: str) -> Path:
        """The current path to a server of ``need`` (raises :class:`NoRoute`)."""
        routes = self.routes
        if routes.static:  # the full topology: no fall-back to try
            return routes.path_to(self.id, need, rho, NO_DOWN)
        return routes.current(self.id, need, rho, self.suspicion.down(self.env.now))

    def suspect(self, path: Path) -> None:
        """The failure detector learns from a timeout on ``path`` (dynamic routers only)."""
        if not self.routes.static:
            nodes, links = self.routes.suspects(path)
            self.suspicion.suspect(self.env.now, nodes, links)

    def reroute(self, owner: Any, old: Path, new: Path) -> None:
        """Trace that ``owner``'s next attempt takes ``new`` instead of ``old``."""
        now = self.env.now
        suspects = self.suspicion

        def avoid() -> Any:
            return suspects.down(now).nodes

        self.rec.reroute(
            now, self.node.j, owner.frag, js(new.start), old.route.path, new.route.path, avoid
        )

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
        """Start an invocation: ``call``, then validation, then the approval gate (if the
        policy asks for this call); issued in SGD: ``invoke``, then collecting the missing
        required slots, then the gate. The steps up to the gate follow the task's
        :class:`Plan` for this view (and decision), made on first use."""
        approval = self.approval
        plans = task.plans
        if approval.by_view:  # the decision depends on the view alone
            plan = plans.get(view)
            if plan is None:
                d = approval.decision(view, task.args)
                plan = plans[view] = Plan(task, view, d.asks, js(d.reason))
        else:  # the policy answers each call
            d = approval.decision(view, task.args)
            plan = plans.get((view, d))
            if plan is None:
                plan = plans[(view, d)] = Plan(task, view, d.asks, js(d.reason))
        inv = Invocation(
            self.new_id(),
            self._response_cb,
            instance,
            task,
            view,
            path,
            need,
            parent,
            depth,
            plan.gate,
            plan,
            self.rec.enabled,  # its owner fields are read only by the lines written
        )
        inv.state = plan.opened
        now = self.env._now  # SimPy 4.1's clock, without the property (the hot path)
        agent = self.node.j
        detail = path.target if parent is None else target(path.nodes[-1].j, parent)
        if plan.invokes:
            self.rec.invoke(now, agent, inv.frag, plan.rhoj, detail)
        else:
            self.rec.call(now, agent, inv.frag, plan.rhoj, detail)
        if plan.collects:
            inv.pending = plan.missing
            self._collect(inv)
            return inv
        if plan.missing:
            self._error(inv, VALIDATION_ERROR, plan.missingj)
        else:
            inv.state = plan.validated
            self.rec.validate(now, agent, inv.frag, plan.rhoj)
            self._gate(inv)
        return inv

    def _collect(self, inv: Invocation) -> None:
        """A collecting dialect: ask the user for the next missing slot (an approval's
        latency), or go on to the gate when none is left."""
        if inv.pending:
            self.later(self.approval.latency(), inv, self._collect_cb)
        else:
            self._gate(inv)

    def _collected(self, event: Any) -> None:
        inv: Invocation = event._value
        if not inv.live:
            return
        slot, *rest = inv.pending
        inv.pending = tuple(rest)
        inv.take(inv.view.collect[slot])
        self.rec.collect(self.env.now, self.node.j, inv.frag, inv.rhoj, slot)
        self._collect(inv)

    def _validate(self, inv: Invocation) -> None:
        """τ again (a retry after a ValidationError): the plan's missing slots decide."""
        if inv.plan.missing:
            self._error(inv, VALIDATION_ERROR, inv.plan.missingj)
            return
        inv.take(TAU)
        self.rec.validate(self.env.now, self.node.j, inv.frag, inv.rhoj)
        self._gate(inv)

    def _gate(self, inv: Invocation) -> None:
        if inv.gate and not inv.approved:
            self.rec.metrics.asked(inv.task.counters)
            self.later(self.approval.latency(), inv, self._approval_cb)
        else:
            self._dispatch(inv)

    def _approval(self, event: Any) -> None:
        inv: Invocation = event._value
        if not inv.live:
            return
        labels = inv.view.labels
        now = self.env._now  # SimPy 4.1's clock, without the property (the hot path)
        approval = self.approval
        if approval.granted():
            inv.take(labels.approve)
            inv.approved = True
            detail = approval.reason(inv)
            self.rec.approve(now, self.node.j, inv.frag, inv.rhoj, detail)
            self._dispatch(inv)
        else:
            inv.take(labels.deny)
            detail = approval.denial(inv)
            self.rec.deny(now, self.node.j, inv.frag, inv.rhoj, detail)
            self._finish(inv, "cancelled", "denied")

    def _dispatch(self, inv: Invocation) -> None:
        """Send the request for a new attempt, over the route of the moment."""
        routes = self.routes
        if inv.attempt > 0 and not routes.static:
            try:
                new = self.path_for(inv.need, inv.task.rho)
            except NoRoute:
                new = inv.path
            if new.key != inv.path.key and routes.hosts(new, inv.tool.name):
                self.reroute(inv, inv.path, new)
                inv.path = new
        inv.attempt += 1
        inv.waiting = True
        server = inv.path.nodes[-1].server
        self.transport.send("request", inv, inv.path, inv.attempt, None, server.on_request)
        inv.timer = self.transport.deadlines(inv.task.timeout).set(
            (inv, inv.attempt), self._timer_cb
        )

    def on_response(self, msg: Message) -> None:
        """The reply to an attempt: ``result`` or ``error(t)`` then recovery (``msg.t``, the
        delivery time, is now)."""
        inv: Invocation = msg.owner
        if (
            inv.done
            or inv.instance.dead
            or not inv.waiting
            or msg.attempt != inv.attempt
            or self.node.down
        ):
            return  # late reply to an attempt the caller gave up (or a dead instance)
        inv.waiting = False
        timer = inv.timer
        if timer is not None:
            timer.cancel()  # its callback would return at once: no event for it
            inv.timer = None  # (the timer held the invocation: no cycle left for the GC)
        outcome: str | None = msg.payload
        if outcome is None:
            inv.take(inv.view.labels.result)
            self.rec.result(msg.t, self.node.j, inv.frag, inv.rhoj, msg.attempt)
            inv.done = True
            self.outcomes.task_done(inv.instance, inv.task, "succeeded", "")
        else:
            self._error(inv, outcome, f',"attempt":{msg.attempt}')

    def _timer(self, event: Any) -> None:
        inv, attempt = event._value
        if inv.timer is event:
            inv.timer = None  # fired (the timer holds the invocation: no cycle left)
        if not inv.live or not inv.waiting or inv.attempt != attempt or self.node.down:
            return
        inv.waiting = False
        self.suspect(inv.path)
        executed = inv.executed == attempt
        if executed:
            action = "error"
        elif inv.resends < inv.view.sd_retries:
            action = "resend"
        else:
            action = "give_up"
        timeout = inv.task.timeout
        self.rec.timeout(
            self.env.now, self.node.j, inv.frag, inv.rhoj, attempt, action, timeout, executed
        )
        if action == "error":
            self._error(inv, SERVICE_DOWN, ',"cause":"timeout"')
        elif action == "resend":
            inv.resends += 1
            self.rec.metrics.resend()
            self.later(backoff(inv.resends), inv, self._resume_cb)
        else:
            self._finish(inv, "failed", "timeout")

    def _resume(self, event: Any) -> None:
        """After a re-send's backoff: send again (same approval, not consumed)."""
        inv: Invocation = event._value
        if inv.live:
            self._dispatch(inv)

    def _error(self, inv: Invocation, error: str, more: str) -> None:
        now = self.env._now  # SimPy 4.1's clock, without the property
        rec = self.rec
        agent = self.node.j
        inv.take(label("error", inv.tool.name, error))
        rec.error(now, agent, inv.frag, inv.rhoj, error, more)
        # the one recovery label the LTS enables after this error
        (lab, _), *rest = inv.lts.enabled(inv.state)
        if rest:
            raise EngineBug(f"invocation {inv.id}: several recoveries enabled after {error}")
        labels = inv.view.labels
        strategy = inv.view.recovery.get(error, Abort())
        if lab == labels.retry:
            inv.take(lab)
            inv.retries += 1
            wait = backoff(inv.retries)
            rec.retry(now, agent, inv.frag, inv.rhoj, error, inv.retries, wait)
            self.later(wait, inv, self._retry_cb)
        elif lab == labels.prompt:
            inv.take(lab)
            message = strategy.message if isinstance(strategy, UserPrompt) else ""
            rec.prompt(now, agent, inv.frag, inv.rhoj, error, message)
            self._finish(inv, "failed", "prompt")
        elif lab == labels.abort:
            inv.take(lab)
            rec.abort(now, agent, inv.frag, inv.rhoj, error)
            self._finish(inv, "failed", "abort")
        elif isinstance(strategy, Fallback) and lab == label(
            "fallback", inv.tool.name, strategy.tool
        ):
            inv.take(lab)
            rec.fallback(now, agent, inv.frag, inv.rhoj, error, strategy.tool)
            inv.done = True
            self.outcomes.fallback(inv, strategy.tool)
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
        self.outcomes.task_done(inv.instance, inv.task, status, reason)
