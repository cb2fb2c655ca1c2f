"""A live LLM agent: tool invocations run through the tool's LTS over real messages.

Input: from the workflows (:mod:`sim.live.workflows`), ``discover(...)`` and
``invoke(...)`` for a task; from the network, replies (through :meth:`Node.start`).
Output: trace lines (``list``, ``call`` … ``result``/``error``, recovery, ``timeout``,
``reroute``) and each invocation's outcome, returned to the workflows.

Timing (scenario seconds, the engine's rules, docs/engine.md; what differs is said):

- ``call`` (``invoke`` in SGD, then one ``collect`` per missing required slot after a
  user's answer, drawn from the approval latency), τ (``validate``);
- the approval gate when the approval policy asks for this call, on the caller's view:
  the request goes to the server carrying the gate; the server answers with a request
  for approval (an elicitation); the caller answers it after the approval latency
  (stream ``approvals``) with ``approve`` (probability ``grant_probability``) or
  ``deny``, and sends the call again with the answer. *Unlike the engine*, where the
  human answers before anything is sent, the question is a real round trip;
- each request has the task's ``timeout`` from its send. A reply that comes later is
  delivered (``deliver``) and ignored. On a timeout: if the server's notice that it
  started executing the attempt arrived (*the engine knows this at once; a real caller
  only from the notice*), ``error(ServiceDown)``; else the request is re-sent after the
  backoff 0.5 s × 2^(k−1) if the view knows ``Retry(k)`` for ServiceDown (k re-sends at
  most), else the task is given up; dynamic routers suspect the route and reroute;
- recovery after an error is the one label the LTS enables: ``retry`` (after the
  backoff, back to validation or the gate: an approval is used by one execution),
  ``fallback``, ``prompt`` or ``abort``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from sim.approval import ApprovalPolicy, approval, simulated_denial
from sim.calculus.lts import TAU, label
from sim.calculus.mcp import (
    DISCOVERY_ATTEMPTS,
    SERVICE_DOWN,
    VALIDATION_ERROR,
    Fallback,
    ToolPlus,
    UserPrompt,
    backoff,
    excluders,
)
from sim.live.clock import SceneClock
from sim.live.envelope import Envelope, Leg, route_json
from sim.live.invocation import Ended, LiveBug, Run, Task, inv_of
from sim.live.node import Node
from sim.live.parts import IdSpace, Owner, PartWriter
from sim.live.payload import PLUS_FIELDS, Call, Outcome
from sim.live.routes import Routes
from sim.live.views import TOOL_ERROR, LiveView, error_type
from sim.mesh.errors import NoRoute
from sim.mesh.route import Route
from sim.otel.context import TRACEPARENT, instance_context

__all__ = ["Caller", "Ended", "LiveBug", "Task"]


_TIMED_OUT = "protomesh: the executed attempt timed out"


class _Reply:
    """What came back for one request: the reply (None until it came) and whether the
    server's notice that it executed the attempt arrived."""

    __slots__ = ("arrived", "executed", "value")

    def __init__(self) -> None:
        self.arrived = anyio.Event()
        self.executed = False
        self.value: tuple[Envelope, Any, float] | None = None


class Caller:
    """One agent's invocations and discoveries (see the module)."""

    def __init__(
        self,
        agent: str,
        node: Node,
        routes: Routes,
        clock: SceneClock,
        part: PartWriter,
        ids: IdSpace,
        policy: ApprovalPolicy,
        mcp_policy: str,
        approval_latency: Callable[[], float],
        grant_probability: float,
        approvals: random.Random,
        error_types: Mapping[str, tuple[str, ...]],
        list_timeout: float,
        spawn: Callable[[Any], None],
        truths: Mapping[str, ToolPlus],
        scenario: str = "",
    ) -> None:
        self.agent = agent
        self.node = node
        self.routes = routes
        self.clock = clock
        self.part = part
        self.ids = ids
        self.policy = policy
        self.mcp_policy = mcp_policy
        self.approval_latency = approval_latency
        self.grant_probability = grant_probability
        self.approvals = approvals
        self.error_types = error_types
        self.list_timeout = list_timeout
        self.spawn = spawn  #: runs a coroutine function in the caller's long-lived task group
        self.scenario = scenario  #: the scenario's name (the instances' trace contexts)
        #: each tool's ground truth (its demand in the approval decision)
        self.truths = truths
        #: per tool, the tools that declare it ExclusiveWith (both are bound)
        self.excluded_by = excluders(truths.values())
        self.in_flight = 0  #: exchanges waiting for their reply (late ones included)
        self.views: dict[Any, LiveView] = {}
        self.latest: dict[str, LiveView] = {}
        self._pending: dict[Any, tuple[anyio.Event, list[tuple[LiveView, Route] | str]]] = {}

    # -- messages --

    def context(self, wf: str, inst: int) -> str:
        """The W3C ``traceparent`` of this caller's instance ``inst`` of ``wf``: its trace
        and its root span, derived from the scenario, router, run, caller and instance
        (unique in the run: each caller numbers its own instances)."""
        key = f"protomesh-live/{self.scenario}/{self.routes.router.name}/{self.part.rep}"
        return instance_context(f"{key}/{self.agent}/{wf}/{inst}").text

    async def exchange(
        self,
        route: Route,
        rho: str,
        owner: Owner,
        kind: str,
        payload: Any,
        attempt: int,
        timeout: float,
        gate: str | None = None,
    ) -> _Reply:
        """Send one message along ``route`` and wait at most ``timeout`` for its reply
        (the exchange goes on in the background: a late reply is delivered, then
        ignored)."""
        leg = Leg.of(self.node.graph, route, rho)
        now = self.clock.now()
        traced = (
            None if owner.wf is None or owner.inst is None else self.context(owner.wf, owner.inst)
        )
        env = Envelope(
            route_json(route, rho),
            0,
            kind,
            self.ids.new(),
            owner,
            attempt,
            now,
            deadline=now + timeout,
            gate=gate,
            caller=self.agent,
            traceparent=traced,
        )
        box = _Reply()

        async def notice(done: int) -> None:
            if done == attempt:
                box.executed = True

        async def go() -> None:
            self.in_flight += 1
            try:
                box.value = await self.node.start(leg, env, payload, notice)
            finally:
                self.in_flight -= 1
            box.arrived.set()

        self.spawn(go)
        with anyio.move_on_after(self.clock.seconds(timeout)):
            await box.arrived.wait()
        return box

    # -- discovery --

    async def discover(
        self, wf: str, inst: int, task: str, tool: str, need: str, route: Route, rho: str
    ) -> tuple[LiveView, Route] | str:
        """The caller's view of ``tool`` at the end of ``route`` (learned by ``list``
        once per tool, route and ρ, the waiting tasks sharing one exchange, which has
        an ``inv`` of its own), with the route it was learned over (another one after a
        reroute); or the failed task's reason."""
        key = (tool, route.path, route.protocols, route.translations, rho)
        hit = self.views.get(key)
        if hit is not None:
            return hit, route
        shared = self._pending.get(key)
        if shared is not None:
            await shared[0].wait()
            return shared[1][0]
        done = anyio.Event()
        result: list[tuple[LiveView, Route] | str] = ["discovery_timeout"]
        self._pending[key] = (done, result)
        try:
            owner = Owner(wf, inst, task, self.ids.new(), tool)
            result[0] = await self._list(owner, tool, need, route, rho)
            return result[0]
        finally:
            del self._pending[key]
            done.set()

    async def _list(
        self, owner: Owner, tool: str, need: str, route: Route, rho: str
    ) -> tuple[LiveView, Route] | str:
        for attempt in range(1, DISCOVERY_ATTEMPTS + 1):
            box = await self.exchange(route, rho, owner, "list", None, attempt, self.list_timeout)
            if box.value is not None:
                _env, descriptors, _t = box.value
                found = [d for d in descriptors if d.values.get("name") == tool]
                if not found:
                    return "no_tool"
                view = LiveView(
                    found[0],
                    self.mcp_policy,
                    self.error_types.get(tool, ()),
                    self.excluded_by.get(tool, frozenset()),
                )
                self.views[(tool, route.path, route.protocols, route.translations, rho)] = view
                self.latest[tool] = view
                self.part.event(
                    "list", self.agent, owner, rho, host=route.target, **view.list_detail()
                )
                return view, route
            now = self.clock.now()
            self.routes.suspect(route, now)
            give_up = attempt >= DISCOVERY_ATTEMPTS
            action = "give_up" if give_up else "resend"
            self.part.event(
                "timeout", self.agent, owner, rho, attempt=attempt, kind="list", action=action
            )
            if give_up:
                break
            route = self._rerouted(owner, route, need, tool, rho)
        return "discovery_timeout"

    def _rerouted(self, owner: Owner, route: Route, need: str, tool: str, rho: str) -> Route:
        """A dynamic router's next attempt: the route of the moment (``reroute`` when it
        changed and still reaches a host of ``tool``)."""
        if self.routes.static:
            return route
        now = self.clock.now()
        try:
            new = self.routes.route(need, rho, now)
        except NoRoute:
            return route
        same = (new.path, new.protocols, new.translations) == (
            route.path,
            route.protocols,
            route.translations,
        )
        if same or not self.routes.hosts(new, tool):
            return route
        self.part.event(
            "reroute",
            self.agent,
            owner,
            rho,
            from_path=list(route.path),
            to_path=list(new.path),
            avoid=self.routes.avoided(now),
        )
        return new

    # -- invocations --

    async def invoke(
        self,
        wf: str,
        inst: int,
        task: Task,
        tool: str,
        view: LiveView,
        route: Route,
        need: str,
        parent: int | None = None,
    ) -> Ended:
        """One invocation of ``tool`` for ``task`` (see the module)."""
        inv = self.ids.new()
        owner = Owner(wf, inst, task.id, inv, tool)
        rho, args = task.rho, task.args
        dialect = task.dialect
        decision = approval(self.truths[tool], view.view, self.policy, args)
        gate, why = decision.asks, decision.reason
        lts = view.lts(gate, dialect)
        run = Run(lts, tool, route, owner)
        target: dict[str, Any] = {"target": route.target}
        if parent is not None:
            target["parent"] = parent
        traced: dict[str, Any] = {TRACEPARENT: self.context(wf, inst)}
        part, agent = self.part, self.agent
        missing = [k for k in view.known.required if k not in args]
        opening = dialect.opening
        run.take(label(opening, tool))
        # the vocabulary gives ``call`` a traceparent, ``invoke`` none (SPEC §5)
        part.event(opening, agent, owner, rho, **target, **(traced if opening == "call" else {}))
        if dialect.collects:
            for slot in missing:
                await self.clock.sleep(self.approval_latency())
                run.take(label("collect", slot))
                part.event("collect", agent, owner, rho, slot=slot)
        # MCP+'s request metadata: the approval this call requires (the gate of the
        # caller's view, first-class in MCP+) and the side effect the caller believes in
        plus: dict[str, Any] = {"requires_approval": gate}
        known = view.view.descriptor.side_effects
        if known is not None:
            plus["side_effects"] = known.value
        call = Call(tool, args, {k: plus[k] for k in PLUS_FIELDS if k in plus})
        phase = "gate" if dialect.collects else "validate"
        answer: dict[str, str] | None = None
        while True:
            if phase == "validate":
                if missing:
                    ended = await self._error(run, view, rho, VALIDATION_ERROR, missing=missing)
                    if ended is not None:
                        return ended
                    phase = "validate" if run.lts.step(run.state, TAU) is not None else "gate"
                    continue
                run.take(TAU)
                part.event("validate", agent, owner, rho)
                phase = "gate"
            if phase == "gate":
                answer = None
                if gate:  # the server's question first, then the human's answer
                    got = await self._send(run, view, task, call, why, need, question=True)
                    if got is None:
                        continue
                    if isinstance(got, Ended):
                        return got
                    asked = got[1].ask
                    if asked is None:
                        raise LiveBug(f"{tool}: the server answered a gated call without asking")
                    await self.clock.sleep(self.approval_latency())
                    if self.approvals.random() >= self.grant_probability:
                        run.take(label("deny", tool))
                        denial = simulated_denial(self.grant_probability)
                        part.event("deny", agent, owner, rho, reason=denial, asked=why)
                        return Ended("cancelled", "denied", inv=inv)
                    run.take(label("approve", tool))
                    part.event("approve", agent, owner, rho, reason=why)
                    answer = {"action": "accept", "state": asked.state}
                phase = "attempt"
            answered = Call(call.name, call.arguments, call.plus, answer)
            got = await self._send(run, view, task, answered, None, need, question=False)
            if got is None:
                continue  # the same attempt again (its approval was not used)
            if isinstance(got, Ended):
                return got
            attempt, outcome = got
            if outcome.ask is not None:  # a server asking again: not an outcome
                outcome = Outcome(TOOL_ERROR, "asked for approval again")
            # the server's step of the shared LTS: a reply (or its notice) says it executed
            run.take(label("execute", tool))
            if outcome.error is None:
                run.take(label("result", tool))
                part.event("result", agent, owner, rho, attempt=attempt)
                return Ended("succeeded", inv=inv)
            if outcome.text == _TIMED_OUT:
                ended = await self._error(run, view, rho, SERVICE_DOWN, cause="timeout")
            else:
                ended = await self._error(
                    run, view, rho, outcome.error, attempt=attempt, cause=outcome.cause
                )
            if ended is not None:
                return ended
            phase = "validate" if run.lts.step(run.state, TAU) is not None else "gate"

    async def _send(
        self,
        run: Run,
        view: LiveView,
        task: Task,
        call: Call,
        gate: str | None,
        need: str,
        *,
        question: bool,
    ) -> tuple[int, Outcome] | Ended | None:
        """One request and its reply: (attempt, outcome); None after a
        timeout that re-sends (its backoff slept); or how the invocation ended. A
        ``question`` (the gate's round) is not an attempt: it carries the number of the
        attempt it precedes. An executed attempt that timed out is ServiceDown."""
        if run.sent > 0:
            run.route = self._rerouted(run.owner, run.route, need, run.tool, task.rho)
        run.sent += 1
        if question:
            attempt = run.attempt + 1
        else:
            run.attempt += 1
            attempt = run.attempt
        box = await self.exchange(
            run.route, task.rho, run.owner, "request", call, attempt, task.timeout, gate
        )
        if box.value is not None:
            outcome = box.value[1]
            if not isinstance(outcome, Outcome):
                raise LiveBug(f"{run.tool}: a reply that is not an outcome")
            if outcome.error is not None:
                known = frozenset(view.error_types)
                error = error_type(outcome.text, known, run.tool)
                outcome = Outcome(error, outcome.text, cause=outcome.cause)
            return attempt, outcome
        now = self.clock.now()
        self.routes.suspect(run.route, now)
        executed = box.executed
        if executed:
            action = "error"
        elif run.resends < view.known.sd_retries:
            action = "resend"
        else:
            action = "give_up"
        self.part.event(
            "timeout",
            self.agent,
            run.owner,
            task.rho,
            attempt=attempt,
            after=task.timeout,
            executed=executed,
            action=action,
        )
        if action == "error":
            return attempt, Outcome(SERVICE_DOWN, _TIMED_OUT)
        if action == "give_up":
            return Ended(
                "failed", "timeout", inv=run.owner.inv if run.owner.inv is not None else -1
            )
        run.resends += 1
        await self.clock.sleep(backoff(run.resends))
        return None

    async def _error(
        self,
        run: Run,
        view: LiveView,
        rho: str,
        error: str,
        *,
        attempt: int | None = None,
        missing: list[str] | None = None,
        cause: str | None = None,
    ) -> Ended | None:
        """``error`` and its recovery; None after a retry's backoff (the caller goes on),
        else how the invocation ended."""
        tool, owner, part, agent = run.tool, run.owner, self.part, self.agent
        run.take(label("error", tool, error))
        detail: dict[str, Any] = {"error": error}
        if missing is not None:
            detail["missing"] = missing
        if attempt is not None:
            detail["attempt"] = attempt
        if cause is not None:
            detail["cause"] = cause
        part.event("error", agent, owner, rho, **detail)
        (lab, _), *rest = run.lts.enabled(run.state)
        if rest:
            raise LiveBug(f"{tool}: several recoveries enabled after {error}")
        strategy = view.known.recovery.get(error)
        if lab == label("retry", tool):
            run.take(lab)
            run.retries += 1
            wait = backoff(run.retries)
            part.event("retry", agent, owner, rho, error=error, n=run.retries, backoff=wait)
            await self.clock.sleep(wait)
            return None
        if lab == label("prompt", tool):
            run.take(lab)
            message = strategy.message if isinstance(strategy, UserPrompt) else ""
            part.event("prompt", agent, owner, rho, error=error, message=message)
            return Ended("failed", "prompt", inv=inv_of(owner))
        if lab == label("abort", tool):
            run.take(lab)
            part.event("abort", agent, owner, rho, error=error)
            return Ended("failed", "abort", inv=inv_of(owner))
        if isinstance(strategy, Fallback) and lab == label("fallback", tool, strategy.tool):
            run.take(lab)
            part.event("fallback", agent, owner, rho, error=error, to=strategy.tool)
            return Ended("fallback", tool=strategy.tool, inv=inv_of(owner))
        raise LiveBug(f"{tool}: unexpected recovery label {lab}")
