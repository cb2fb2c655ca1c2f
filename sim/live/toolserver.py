"""The tool server of a live agent: the scenario's tools behind a real endpoint.

Input: a ``tools/list`` or a ``tools/call`` that reached the agent at the end of its
route (:class:`~sim.live.node.Node` hands it over after ``deliver``). Output: the
descriptors as the arrival protocol represents them, or the call's
:class:`~sim.live.payload.Outcome` (None: no reply, the request was discarded or lost).

Behaviour (the engine's tool server, docs/engine.md, made real):

- ``list`` is answered at once, without a slot: the ground truth projected to the fields
  of the protocol the request arrived in;
- approval by elicitation: a call whose envelope carries the caller's approval gate and
  no answer is answered with a request for approval (the 2026-07-28
  ``InputRequiredResult``) whose state is sealed to the invocation, the tool and its
  arguments (:class:`sim.interop.elicitation.StateSeal`); the answered call comes back
  with that state, which is consumed by one execution: a second call with the same state
  gets no reply (an approval is used once, SPEC §4);
- at most the agent's ``concurrency`` executions at once, the others wait in FIFO order
  (``execute``'s ``waited``); a queued request whose attempt's deadline passed before
  its turn is discarded (the caller gave the attempt up, MCP's
  ``notifications/cancelled``);
- the execution: ``execute`` (``approved`` for write and delete tools: whether an
  approval was consumed), the notice to the caller, then the tool runs
  (:class:`Executes`): :class:`Simulated` draws the service time from the tool's
  ``service_time`` (stream ``service``) and sleeps it (scaled by the speed), then the
  outcome from ``errors`` (stream ``errors``: error types in sorted order, one uniform
  draw), its text starting with the error type, as ``serve mcp`` writes it; an agent
  that names a real server in its ``live:`` entry calls it instead;
- an execution or a queued request that met an outage of the agent (its process was
  stopped meanwhile) is lost: ``drop`` with ``lost`` ``executing`` or ``queued``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio

from sim.calculus.mcp import ToolPlus
from sim.interop.elicitation import StateSeal, approval_message
from sim.live.clock import DownLog, SceneClock
from sim.live.envelope import Envelope
from sim.live.parts import PartWriter
from sim.live.payload import Ask, Call, Descriptor, Outcome
from sim.live.wire import Notice
from sim.scenario.model import Scenario, ToolSpec

__all__ = ["Executes", "Simulated", "ToolHost"]


class ToolHost:
    """The tools hosted at one agent (see the module)."""

    def __init__(
        self,
        agent: str,
        scenario: Scenario,
        tools: Sequence[str],
        table: Any,
        clock: SceneClock,
        part: PartWriter,
        downlog: DownLog,
        executes: Executes,
        concurrency: int,
    ) -> None:
        self.agent = agent
        specs = {t.name: t for t in scenario.tools}
        self.tools: dict[str, ToolSpec] = {name: specs[name] for name in tools}
        self.truth = {n: Descriptor.of_truth(executes.descriptor(s)) for n, s in self.tools.items()}
        self.table = table
        self.clock = clock
        self.part = part
        self.downlog = downlog
        self.executes = executes
        self.slots = anyio.Semaphore(concurrency)
        self.seal = StateSeal()
        self.consumed: set[str] = set()

    def listing(self, protocol: str) -> list[Descriptor]:
        fields = self.table.fields(protocol)
        return [d.keep(fields) for d in self.truth.values()]

    async def call(
        self, protocol: str, env: Envelope, call: Call, arrived: float, notice: Notice
    ) -> Outcome | None:
        name = call.name
        spec = self.tools.get(name)
        if spec is None:
            return Outcome("UnknownTool", f"UnknownTool: {name} is not hosted at {self.agent}")
        owner = env.owner
        inv = owner.inv if owner.inv is not None else -1
        state: str | None = None
        if call.answer is not None:
            state = str(call.answer.get("state", ""))
            if call.answer.get("action") != "accept":
                return Outcome("ApprovalDenied", f"ApprovalDenied: {name} was not executed")
            if state in self.consumed or self.seal.open(state, name, call.arguments) != inv:
                return None  # not an approval of this call, or one already used
        elif env.gate is not None:
            message = approval_message(name, call.arguments, env.gate)
            return Outcome(ask=Ask(message, self.seal.seal(inv, name, call.arguments)))
        async with self.slots:
            now = self.clock.now()
            if self.downlog.overlaps(arrived, now) is not None:
                self._lost(owner, protocol, "queued")
                return None
            if env.deadline is not None and now > env.deadline:
                return None  # the caller gave this attempt up while it waited
            if state is not None and state in self.consumed:
                return None  # a copy of this attempt used the approval meanwhile
            approved = state is not None
            if state is not None:
                self.consumed.add(state)  # an approval is used by one execution
            detail: dict[str, Any] = {"attempt": env.attempt, "waited": round(now - arrived, 9)}
            if spec.side_effects.writes:
                detail["approved"] = approved
            started = self.part.event("execute", self.agent, owner, protocol, **detail)
            await notice(env.attempt)
            outcome = await self.executes.run(name, call.arguments, started, env.traceparent)
            if self.downlog.overlaps(started, self.clock.now()) is not None:
                self._lost(owner, protocol, "executing")
                return None
        return outcome

    def _lost(self, owner: Any, protocol: str, what: str) -> None:
        self.part.event("drop", self.agent, owner, protocol, reason="node_down", lost=what)


class Executes(Protocol):
    """How the tools run: simulated (:class:`Simulated`) or by a real server."""

    def descriptor(self, spec: ToolSpec) -> ToolPlus:
        """The tool's ground truth as served."""
        ...

    async def run(
        self,
        name: str,
        arguments: Mapping[str, Any],
        started: float,
        traceparent: str | None = None,
    ) -> Outcome:
        """One execution of ``name`` that started at ``started`` (scenario seconds), its
        outcome; ``traceparent``: the request's W3C trace context (for a real server)."""
        ...


class Simulated:
    """The scenario's behaviour: the service time drawn from ``service_time`` (stream
    ``service``) and slept, then the outcome drawn from ``errors`` (stream ``errors``)."""

    def __init__(
        self,
        tools: Sequence[ToolSpec],
        clock: SceneClock,
        service: random.Random,
        errors: random.Random,
    ) -> None:
        self.clock = clock
        self.service = {t.name: t.service_time.law().sampler(service) for t in tools}
        self.errors_rng = errors
        self.draws = {t.name: _cumulative(t.errors) for t in tools}

    def descriptor(self, spec: ToolSpec) -> ToolPlus:
        return spec.descriptor()

    async def run(
        self,
        name: str,
        arguments: Mapping[str, Any],
        started: float,
        traceparent: str | None = None,
    ) -> Outcome:
        # the service time runs from the execution's start (the notice sent meanwhile)
        await self.clock.until(started + self.service[name]())
        u = self.errors_rng.random()
        for cumulative, error, p in self.draws[name]:
            if u < cumulative:
                return Outcome(error, f"{error}: simulated error of {name} (probability {p:g})")
        body = {"tool": name, "status": "ok", "simulated": True, "arguments": dict(arguments)}
        return Outcome(None, json.dumps(body, ensure_ascii=False, sort_keys=True))


def _cumulative(errors: Mapping[str, float]) -> tuple[tuple[float, str, float], ...]:
    """(cumulative probability, error type, its probability), types in sorted order."""
    out: list[tuple[float, str, float]] = []
    acc = 0.0
    for name in sorted(errors):
        p = float(errors[name])
        if p > 0:
            acc += p
            out.append((acc, name, p))
    return tuple(out)
