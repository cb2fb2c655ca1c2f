"""A live agent's workflows W = (T, ≺, ρ): arrivals, readiness, known dependencies,
outcomes, as the engine runs them (docs/engine.md, "What happens where"), on the real
clock.

Input: the scenario's workflows this agent initiates; each task's outcome from the
:class:`~sim.live.caller.Caller`. Output: ``wf_start``, ``skip``, ``wf_end`` lines and the
caller's discoveries and invocations. Timing: arrivals strictly before ``duration``
(listed times, or a Poisson process): each workflow draws its arrival times, and for a
workflow with several initiators the initiator of each arrival, from a stream of its own
that every initiator draws alike, so that each runs exactly its share without talking
to the others. Readiness, dependencies and skips are decided at once when a task ends or
a view arrives. An instance whose initiator was down (its process stopped) when it
arrived ends ``failed``/``initiator_down`` there; one that was running when the
initiator went down ends so at the outage's start (the caller's process learns of it
when it is resumed: :meth:`Workflows.resumed`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import anyio

from sim.calculus.mcp import MAX_FALLBACK_DEPTH
from sim.calculus.mcp.dialects import builtin_dialect
from sim.live.caller import Caller, Task
from sim.live.clock import DownLog, SceneClock
from sim.live.parts import IdSpace, Owner, PartWriter
from sim.live.routes import Routes
from sim.live.views import LiveView
from sim.mesh.errors import NoRoute
from sim.mesh.route import Route
from sim.scenario.model import Scenario

__all__ = ["Arrival", "Workflows", "arrivals"]

PENDING, PREPARING, RUNNING, SUCCEEDED, FAILED, CANCELLED, SKIPPED, WAITING = range(8)
_DONE_OK = (SUCCEEDED, SKIPPED)
_CODE = {"succeeded": SUCCEEDED, "failed": FAILED, "cancelled": CANCELLED}

Arrival = tuple[float, int]
"""(scenario time, workflow index)."""


def arrivals(
    scenario: Scenario, agent: str, stream: Callable[[int], random.Random]
) -> list[Arrival]:
    """The arrivals ``agent`` initiates, in time order; ``stream(w)`` is workflow w's
    random stream (the same in every initiator's process)."""
    out: list[Arrival] = []
    duration = scenario.duration
    for w, wf in enumerate(scenario.workflows):
        initiators = scenario.initiators_of(wf)
        if agent not in initiators:
            continue
        rng = stream(w)
        a = wf.arrivals
        if a.times is not None:
            times = [float(t) for t in a.times if t < duration]
        else:
            times = []
            t = 0.0
            rate = float(a.rate or 0.0)
            while rate > 0:
                t += rng.expovariate(rate)
                if t >= duration:
                    break
                times.append(t)
        for t in times:
            who = (
                initiators[0]
                if len(initiators) == 1
                else initiators[rng.randrange(len(initiators))]
            )
            if who == agent:
                out.append((t, w))
    out.sort()
    return out


class Instance:
    """A running workflow instance."""

    __slots__ = (
        "dead",
        "ended",
        "id",
        "reason",
        "running",
        "scope",
        "start",
        "state",
        "status",
        "tool_of",
        "wf",
    )

    def __init__(self, inst: int, wf: int, tasks: int, start: float) -> None:
        self.id = inst
        self.wf = wf
        self.start = start
        self.state = [PENDING] * tasks
        self.tool_of: list[str | None] = [None] * tasks
        self.running = 0
        self.status = ""
        self.reason = ""
        self.dead = False
        self.ended = False
        self.scope = anyio.CancelScope()


class Workflows:
    """The instances one agent initiates (see the module)."""

    def __init__(
        self,
        agent: str,
        scenario: Scenario,
        caller: Caller,
        routes: Routes,
        clock: SceneClock,
        part: PartWriter,
        ids: IdSpace,
        downlog: DownLog,
        spawn: Callable[[Any], None],
    ) -> None:
        self.agent = agent
        self.scenario = scenario
        self.caller = caller
        self.routes = routes
        self.clock = clock
        self.part = part
        self.ids = ids
        self.downlog = downlog
        self.spawn = spawn
        self.names = [wf.name for wf in scenario.workflows]
        self.tasks: list[tuple[Task, ...]] = []
        dialects = scenario.dialects()
        for wf in scenario.workflows:
            order = {t.id: i for i, t in enumerate(wf.tasks)}
            self.tasks.append(
                tuple(
                    Task(
                        wf.name,
                        t.id,
                        i,
                        t.tool,
                        t.capability,
                        dict(t.args),
                        wf.rho_of(t),
                        float(t.timeout if t.timeout is not None else wf.timeout),
                        tuple(order[a] for a in t.after),
                        dialects.get(wf.rho_of(t)) or builtin_dialect(wf.rho_of(t)),
                    )
                    for i, t in enumerate(wf.tasks)
                )
            )
        self.running: dict[int, Instance] = {}
        #: failed and cancelled tasks by reason (``metrics.json``'s ``tasks_failed_by_reason``)
        self.tasks_failed: dict[str, int] = {}
        self.idle = anyio.Event()
        self.arrivals_done = False
        self._seen_outages = 0

    # -- arrivals --

    async def run(self, planned: list[Arrival], since: float = 0.0) -> None:
        """Start each planned arrival at its time (from ``since``: a restarted process
        leaves the earlier ones to the one it replaces); then wait until none runs."""
        for t, w in planned:
            if t < since:
                continue
            await self.clock.until(t)
            self._arrive(w, t)
        self.arrivals_done = True
        self._check_idle()
        await self.idle.wait()

    def _arrive(self, w: int, planned: float) -> None:
        now = self.clock.now()
        inst = Instance(self.ids.new(), w, len(self.tasks[w]), now)
        owner = Owner(self.names[w], inst.id, None, None, None)
        traced = self.caller.context(self.names[w], inst.id)
        self.part.event("wf_start", self.agent, owner, traceparent=traced)
        if self.downlog.overlaps(planned, planned) is not None:
            inst.status, inst.reason = "failed", "initiator_down"
            self._end(inst)
            return
        self.running[inst.id] = inst
        self._advance(inst)

    def resumed(self) -> None:
        """The process was resumed after an outage: the instances running when it began
        are lost (``initiator_down`` at its start)."""
        outages = self.downlog.intervals()
        for down, _up in outages[self._seen_outages :]:
            for inst in list(self.running.values()):
                if inst.start <= down and not inst.ended:
                    inst.dead = True
                    inst.scope.cancel()
                    inst.status, inst.reason = "failed", "initiator_down"
                    self._end(inst, at=down)
        self._seen_outages = len(outages)

    def unfinished(self) -> None:
        """At the drain cap: every instance still running ends ``failed``/``drain_cap``."""
        for inst in list(self.running.values()):
            inst.dead = True
            inst.scope.cancel()
            inst.status, inst.reason = "failed", "drain_cap"
            self._end(inst)

    # -- readiness --

    def _advance(self, inst: Instance) -> None:
        if inst.ended or inst.dead:
            return
        state = inst.state
        if not inst.status:
            for task in self.tasks[inst.wf]:
                if state[task.index] != PENDING:
                    continue
                if all(state[j] in _DONE_OK for j in task.after):
                    self._prepare(inst, task)
                    if inst.ended:
                        return
        if inst.running == 0 and not inst.ended:
            if not inst.status:
                if all(s in _DONE_OK for s in state):
                    inst.status = "succeeded"
                else:
                    inst.status, inst.reason = "failed", "blocked"
            self._end(inst)

    def _prepare(self, inst: Instance, task: Task) -> None:
        inst.state[task.index] = PREPARING
        inst.running += 1
        try:
            route = self.routes.route(task.need, task.rho, self.clock.now())
        except NoRoute:
            self._task_over(inst, task, FAILED, "no_route")
            return
        tool = self.routes.tool_at(task.tool, task.capability, route)
        if tool is None:
            self._task_over(inst, task, FAILED, "no_tool")
            return
        inst.tool_of[task.index] = tool
        self._in(inst, self._discover, inst, task, tool, route)

    async def _discover(self, inst: Instance, task: Task, tool: str, route: Route) -> None:
        got = await self.caller.discover(
            task.wf, inst.id, task.id, tool, task.need, route, task.rho
        )
        if inst.ended or inst.dead:
            return
        if isinstance(got, str):
            self._task_over(inst, task, FAILED, got)
            return
        view, where = got
        self._ready(inst, task, tool, view, where)

    def _ready(self, inst: Instance, task: Task, me: str, view: LiveView, route: Route) -> None:
        state = inst.state
        known = view.known
        latest = self.caller.latest
        wait = False
        for j, other in enumerate(inst.tool_of):
            if j == task.index or other is None:
                continue
            required = other in known.requires
            if not required:
                theirs = latest.get(other)
                required = theirs is not None and me in theirs.known.feeds
            if required:
                if state[j] in (FAILED, CANCELLED, SKIPPED):
                    self._task_over(inst, task, FAILED, "dependency")
                    return
                if state[j] != SUCCEEDED:
                    wait = True
            if other in known.exclusive and state[j] in (RUNNING, SUCCEEDED, FAILED):
                owner = Owner(task.wf, inst.id, task.id, None, me)
                self.part.event("skip", self.agent, owner, exclusive_with=other)
                self._task_over(inst, task, SKIPPED, "exclusive")
                return
        if wait:
            state[task.index] = WAITING
            inst.running -= 1
            if inst.running == 0:
                self._advance(inst)
            return
        state[task.index] = RUNNING
        self._in(inst, self._invoke, inst, task, me, view, route)

    async def _invoke(
        self, inst: Instance, task: Task, tool: str, view: LiveView, route: Route
    ) -> None:
        caller = self.caller
        need, parent, depth = task.need, None, 0
        while True:
            ended = await caller.invoke(task.wf, inst.id, task, tool, view, route, need, parent)
            if ended.status != "fallback":
                self._task_over(inst, task, _CODE[ended.status], ended.reason)
                return
            depth += 1
            if depth > MAX_FALLBACK_DEPTH:
                self._task_over(inst, task, FAILED, "fallback_depth")
                return
            tool, need, parent = ended.tool, ended.tool, ended.inv
            try:
                route = self.routes.route(tool, task.rho, self.clock.now())
            except NoRoute:
                self._task_over(inst, task, FAILED, "no_route")
                return
            got = await caller.discover(task.wf, inst.id, task.id, tool, tool, route, task.rho)
            if isinstance(got, str):
                self._task_over(inst, task, FAILED, got)
                return
            view, route = got

    def _in(self, inst: Instance, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` in the caller's task group, inside the instance's scope."""

        async def scoped() -> None:
            with inst.scope:
                await fn(*args)

        self.spawn(scoped)

    # -- outcomes --

    def _task_over(self, inst: Instance, task: Task, code: int, reason: str) -> None:
        if inst.ended or inst.dead:
            return
        state = inst.state
        state[task.index] = code
        inst.running -= 1
        if WAITING in state:
            for j, s in enumerate(state):
                if s == WAITING:
                    state[j] = PENDING
        if code in (FAILED, CANCELLED):
            self.tasks_failed[reason] = self.tasks_failed.get(reason, 0) + 1
            if not inst.status:
                inst.status = "failed" if code == FAILED else "cancelled"
                inst.reason = reason
        self._advance(inst)

    def _end(self, inst: Instance, at: float | None = None) -> None:
        inst.ended = True
        self.running.pop(inst.id, None)
        t = self.clock.now() if at is None else at
        detail: dict[str, Any] = {
            "status": inst.status or "failed",
            "latency": round(t - inst.start, 9),
        }
        if inst.reason:
            detail["reason"] = inst.reason
        owner = Owner(self.names[inst.wf], inst.id, None, None, None)
        self.part.event("wf_end", self.agent, owner, t=t, **detail)
        self._check_idle()

    def _check_idle(self) -> None:
        if self.arrivals_done and not self.running:
            self.idle.set()
