"""Workflows W = (T, ≺, ρ): arrivals, readiness, ordering by known dependencies, outcomes.

An instance starts (``wf_start``) at each arrival before ``duration``. A task becomes
*ready* when its ≺-predecessors have succeeded (or were skipped). A ready task first
resolves the route to a server of its tool (or capability) and makes sure its caller
knows the tool's descriptor at that server (discovery, ``list``); then, with what the
caller knows:

* ``Requires``: if the task's tool requires tool Y (its view lists ``(Y, Requires)``),
  every task of the instance that calls Y must have succeeded first; ``ProducesInputFor``:
  if the caller's view of a tool Y of another task lists ``(X, ProducesInputFor)``, that
  task must have succeeded before the task calling X. A required task that failed, was
  cancelled or skipped fails the waiting task (reason ``dependency``);
* ``ExclusiveWith``: if its tool is exclusive with a tool a task of the instance already
  started (declared on either tool: :func:`~sim.calculus.mcp.excluders`), the task is
  skipped (``skip``) and counts as done for ≺.

Unknown dependencies (a descriptor that lost ``dependencies`` on its way) add no order.
A failed task (abort, prompt, time-out given up, no route) fails the instance, a denied
approval cancels it (the first such outcome decides the status); no readiness pass
after that starts a task (the pass under way when a task fails at once, e.g. a call
refused by validation, still starts the rest of its batch), and the instance ends
(``wf_end``) when its running tasks are over. The end-to-end latency is
``wf_end.t − wf_start.t``.

Inputs: the compiled workflows, the callers and their tool discovery (by initiator),
the route service, the tools; from each caller, a task's outcome through
:class:`~sim.engine.caller.Outcomes` (``task_done``, ``fallback``). Outputs: ``invoke``
calls to the callers, lines and counts to the recorder, and ``on_idle()`` whenever the
number of running instances or open arrival processes drops (the composition root
stops the run when both are 0 after ``duration``). Timing: arrivals strictly before
``duration`` (listed times, or a Poisson process on the ``arrivals`` stream, which
also draws the initiator when a workflow has several); readiness, dependencies and
skips are decided at once when a task ends or a view arrives.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from math import log
from typing import Any, Final, Protocol

import simpy

from sim.calculus.mcp import MAX_FALLBACK_DEPTH
from sim.calculus.mcp.dialects import Dialect, builtin_dialect
from sim.engine.clock import Agenda, Later
from sim.engine.discovery import ToolDiscovery
from sim.engine.invocation import Invocation, Plan
from sim.engine.paths import Path
from sim.engine.recorder import Recorder
from sim.engine.routes import RouteService
from sim.engine.topology import Node
from sim.engine.trace import js, owner_fragment
from sim.engine.views import ToolRT, ViewRT
from sim.mesh.errors import NoRoute

# task states (Final: the compiled engine reads them as constants, not module globals)
PENDING: Final = 0
PREPARING: Final = 1
RUNNING: Final = 2
SUCCEEDED: Final = 3
FAILED: Final = 4
CANCELLED: Final = 5
SKIPPED: Final = 6
WAITING: Final = 7
_DONE_OK: Final = (SUCCEEDED, SKIPPED)
_CODE: Final = {"succeeded": SUCCEEDED, "failed": FAILED, "cancelled": CANCELLED}


class Invoker(Protocol):
    """What the workflows need of a caller (:class:`~sim.engine.caller.Caller`; a unit
    test gives a stand-in: a protocol, so the compiled engine does not check its type)."""

    id: str
    node: Node

    def path_for(self, need: str, rho: str) -> Path:
        """The current path to a server of ``need`` (raises ``NoRoute``)."""

    def invoke(
        self,
        instance: Instance,
        task: TaskRT,
        view: ViewRT,
        path: Path,
        need: str,
        parent: int | None = None,
        depth: int = 0,
    ) -> object:
        """Start an invocation of ``task`` over ``path`` (what it returns is not used)."""


class TaskRT:
    """A compiled task: its tool or capability, ρ, timeout, ≺-predecessors (indices)."""

    __slots__ = (
        "after",
        "args",
        "capability",
        "counters",
        "dialect",
        "id",
        "index",
        "j",
        "need",
        "plans",
        "rho",
        "settled",
        "successors",
        "timeout",
        "tool",
        "wfj",
    )

    def __init__(
        self,
        index: int,
        spec: Any,
        wf: Any,
        order: dict[str, int],
        dialects: Mapping[str, Dialect],
    ) -> None:
        self.index = index
        self.id: str = spec.id
        self.j = js(spec.id)
        self.wfj = js(wf.name)
        self.tool: str | None = spec.tool
        self.capability: str | None = spec.capability
        self.need: str = spec.tool if spec.tool is not None else spec.capability
        self.args: dict[str, Any] = dict(spec.args)
        self.rho: str = wf.rho_of(spec)
        #: how ρ's invocations go, as its protocol declares
        self.dialect: Dialect = dialects.get(self.rho) or builtin_dialect(self.rho)
        self.timeout = float(spec.timeout if spec.timeout is not None else wf.timeout)
        self.after: tuple[int, ...] = tuple(order[a] for a in spec.after)
        self.successors: tuple[int, ...] = ()
        self.counters: Any = None  # the workflow's WorkflowCounters, set by Workflows
        #: its invocations' plans, by view (or by (view, decision) for a policy that
        #: decides per call): :class:`~sim.engine.invocation.Plan`, made by the caller
        self.plans: dict[Any, Plan] = {}
        #: per caller, its path, tool and view for this task once they no longer change
        #: (a static router's route, a view learned: what ``_prepare`` resolves each time)
        self.settled: dict[Any, tuple[Path, str, ViewRT]] = {}


class WorkflowRT:
    """A compiled workflow."""

    __slots__ = ("counters", "initiators", "j", "name", "rate", "tasks", "times")

    def __init__(
        self, spec: Any, initiators: tuple[str, ...], dialects: Mapping[str, Dialect]
    ) -> None:
        self.name: str = spec.name
        self.j = js(spec.name)
        #: the agents that may start an instance (one drawn per instance when several)
        self.initiators = initiators
        order = {t.id: i for i, t in enumerate(spec.tasks)}
        self.tasks = tuple(TaskRT(i, t, spec, order, dialects) for i, t in enumerate(spec.tasks))
        for task in self.tasks:
            task.successors = tuple(t.index for t in self.tasks if task.index in t.after)
        a = spec.arrivals
        self.times: tuple[float, ...] | None = (
            tuple(float(x) for x in a.times) if a.times is not None else None
        )
        self.rate: float | None = float(a.rate) if a.rate is not None else None
        self.counters: Any = None  # the workflow's WorkflowCounters, set by Workflows


class Instance:
    """A running workflow instance."""

    __slots__ = (
        "caller",
        "dead",
        "ended",
        "id",
        "known",
        "reason",
        "running",
        "start",
        "state",
        "status",
        "tool_of",
        "wf",
    )

    def __init__(
        self, inst_id: int, wf: WorkflowRT, caller: Invoker, known: ToolDiscovery, start: float
    ) -> None:
        self.id = inst_id
        self.wf = wf
        self.caller = caller
        self.known = known  # the initiator's tool discovery (what it knows of tools)
        self.start = start
        self.state = [PENDING] * len(wf.tasks)
        self.tool_of: list[str | None] = [t.tool for t in wf.tasks]
        self.running = 0
        self.status = ""  # "" while nothing failed; then "failed" or "cancelled"
        self.reason = ""
        self.dead = False
        self.ended = False


class Workflows:
    """Arrivals, readiness and outcomes of every workflow of one replication."""

    def __init__(
        self,
        env: simpy.Environment,
        later: Later,
        recorder: Recorder,
        arrivals: random.Random,
        duration: float,
        workflows: list[WorkflowRT],
        callers: Mapping[str, Invoker],
        known: dict[str, ToolDiscovery],
        routes: RouteService,
        tools: dict[str, ToolRT],
        on_idle: Callable[[], None],
    ) -> None:
        self.env = env
        self.later = later
        self.rec = recorder
        self.rng = arrivals
        self.duration = duration
        self.workflows = workflows
        for wf in self.workflows:
            wf.counters = recorder.metrics.workflow(wf.name)
            for task in wf.tasks:
                task.counters = wf.counters
        self.callers = callers
        self.known = known
        self.routes = routes
        self.tools = tools
        self.on_idle = on_idle
        #: the running instances of each initiator, by instance id
        self.running: dict[str, dict[int, Instance]] = {a: {} for a in callers}
        self.next_inst = 0
        self.live = 0
        self.arrivals_open = 0
        #: the next arrival of every workflow, one of them on SimPy's queue at a time
        self.agenda = Agenda(env)
        self._listed_cb = self._listed_fire
        self._poisson_cb = self._poisson_fire

    # -- arrivals --

    def start(self) -> None:
        """Schedule the arrivals (they stop at ``duration``)."""
        duration = self.duration
        rng = self.rng
        for wf in self.workflows:
            if wf.times is not None:
                times = [t for t in wf.times if t < duration]
                if times:
                    self.arrivals_open += 1
                    self._listed(wf, times, 0)
            elif wf.rate is not None:
                self.arrivals_open += 1
                self._poisson(wf, rng.expovariate(wf.rate))

    def _listed(self, wf: WorkflowRT, times: list[float], k: int) -> None:
        self.agenda.later(max(0.0, times[k] - self.env.now), (wf, times, k), self._listed_cb)

    def _listed_fire(self, event: Any) -> None:
        wf, times, k = event._value
        self._arrive(wf)
        if k + 1 < len(times):
            self._listed(wf, times, k + 1)
        else:
            self._closed()

    def _poisson(self, wf: WorkflowRT, gap: float) -> None:
        if self.env._now + gap >= self.duration:  # SimPy 4.1's clock (the hot path)
            self._closed()
            return
        self.agenda.later(gap, wf, self._poisson_cb)

    def _poisson_fire(self, event: Any) -> None:
        wf: WorkflowRT = event._value
        rate = wf.rate
        assert rate is not None
        self._arrive(wf)
        self._poisson(wf, -log(1.0 - self.rng.random()) / rate)  # expovariate(rate)'s body

    def _closed(self) -> None:
        self.arrivals_open -= 1
        self.on_idle()

    def _arrive(self, wf: WorkflowRT) -> None:
        ids = wf.initiators
        # one initiator: no draw, so single-initiator runs keep their streams unchanged
        who = ids[0] if len(ids) == 1 else ids[self.rng.randrange(len(ids))]
        caller = self.callers[who]
        now = self.env._now  # SimPy 4.1's clock, without the property (the hot path)
        inst = Instance(self.next_inst, wf, caller, self.known[who], now)
        self.next_inst += 1
        self.live += 1
        self.rec.wf_start(now, caller.node.j, wf.j, inst.id, wf.counters)
        if caller.node.down:
            inst.status, inst.reason = "failed", "initiator_down"
            self._end(inst)
            return
        self.running[who][inst.id] = inst
        self._advance(inst)

    # -- readiness --

    def _advance(self, inst: Instance) -> None:
        """Start every task that can start; end the instance when nothing is left.

        The status is read once, before the pass: a task failing at once inside the pass
        does not stop its siblings (sim/verify models exactly this; docs/verify.md)."""
        if inst.ended or inst.dead:
            return
        state = inst.state
        if not inst.status:
            for task in inst.wf.tasks:
                if state[task.index] != PENDING:
                    continue
                for j in task.after:
                    if state[j] != SUCCEEDED and state[j] != SKIPPED:
                        break  # a predecessor is not done (_DONE_OK)
                else:
                    self._prepare(inst, task)
                    if inst.ended:
                        return
        if inst.running == 0 and not inst.ended:
            if not inst.status:
                if all(s in _DONE_OK for s in state):
                    inst.status = "succeeded"
                else:  # nothing runs and nothing can start: tasks wait on each other
                    inst.status, inst.reason = "failed", "blocked"
            self._end(inst)

    def _prepare(self, inst: Instance, task: TaskRT) -> None:
        """Resolve the route and the caller's view, then check known dependencies."""
        inst.state[task.index] = PREPARING
        inst.running += 1
        caller = inst.caller
        settled = task.settled.get(caller)
        if settled is not None:  # what the lines below would find, memoised
            kept_path, kept_tool, kept_view = settled
            inst.tool_of[task.index] = kept_tool
            if not (inst.ended or inst.dead):
                self._ready(inst, task, kept_view, kept_path)
            return
        try:
            path = caller.path_for(task.need, task.rho)
        except NoRoute:
            self._task_over(inst, task, FAILED, "no_route")
            return
        tool = self.routes.tool_at(task.tool, task.capability, path)
        if tool is None:
            self._task_over(inst, task, FAILED, "no_tool")
            return
        inst.tool_of[task.index] = tool
        view = inst.known.known(tool, path)
        if view is not None:  # known: what ensure_view would answer at once, no closure
            if self.routes.static:  # the route never changes, nor a view once learned
                task.settled[caller] = (path, tool, view)
            if not (inst.ended or inst.dead):
                self._ready(inst, task, view, path)
            return

        def then(view: ViewRT | None, where: Path | str) -> None:
            if inst.ended or inst.dead:
                return
            if view is None or not isinstance(where, Path):
                self._task_over(inst, task, FAILED, str(where))
                return
            self._ready(inst, task, view, where)

        inst.known.ensure_view(inst, task, task.need, self.tools[tool], path, then)

    def _ready(self, inst: Instance, task: TaskRT, view: ViewRT, path: Path) -> None:
        """The view is known: wait for known dependencies, skip an exclusive, or invoke."""
        state = inst.state
        tools = inst.tool_of
        caller = inst.caller
        me = tools[task.index]
        if not (view.requires or view.exclusive or me in inst.known.fed):
            # no known dependency can apply: the loop below would find none
            state[task.index] = RUNNING
            caller.invoke(inst, task, view, path, task.need)
            return
        wait = False
        requires, latest = view.requires, inst.known.latest
        for j, other in enumerate(tools):
            if j == task.index or other is None:
                continue
            required = other in requires
            if not required:
                theirs = latest.get(other)
                required = theirs is not None and me in theirs.feeds
            if required:
                if state[j] in (FAILED, CANCELLED, SKIPPED):
                    self._task_over(inst, task, FAILED, "dependency")
                    return
                if state[j] != SUCCEEDED:
                    wait = True
            if other in view.exclusive and state[j] in (RUNNING, SUCCEEDED, FAILED):
                owner = owner_fragment(task.wfj, inst.id, task.j, None, js(me))
                self.rec.skip(self.env.now, caller.node.j, owner, other)
                self._task_over(inst, task, SKIPPED, "exclusive")
                return
        if wait:
            # re-examined whenever a task of the instance ends
            state[task.index] = WAITING
            inst.running -= 1
            if inst.running == 0:
                self._advance(inst)
            return
        state[task.index] = RUNNING
        caller.invoke(inst, task, view, path, task.need)

    # -- outcomes --

    def task_done(self, inst: Instance, task: TaskRT, status: str, reason: str) -> None:
        """An invocation (or its last fallback) ended with ``status``."""
        self._task_over(inst, task, _CODE[status], reason)

    def _task_over(self, inst: Instance, task: TaskRT, code: int, reason: str) -> None:
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
            self.rec.metrics.task_failed(reason)
            if not inst.status:
                inst.status = "failed" if code == FAILED else "cancelled"
                inst.reason = reason
        self._advance(inst)

    def fallback(self, inv: Invocation, tool: str) -> None:
        """Recovery Fallback(tool): a new invocation of ``tool`` for the same task."""
        inst, task = inv.instance, inv.task
        if inv.depth + 1 > MAX_FALLBACK_DEPTH:
            self._task_over(inst, task, FAILED, "fallback_depth")
            return
        caller = inst.caller
        try:
            path = caller.path_for(tool, task.rho)
        except NoRoute:
            self._task_over(inst, task, FAILED, "no_route")
            return

        def then(view: ViewRT | None, where: Path | str) -> None:
            if inst.ended or inst.dead:
                return
            if view is None or not isinstance(where, Path):
                self._task_over(inst, task, FAILED, str(where))
                return
            caller.invoke(inst, task, view, where, tool, parent=inv.id, depth=inv.depth + 1)

        inst.known.ensure_view(inst, task, tool, self.tools[tool], path, then)

    def _end(self, inst: Instance) -> None:
        inst.ended = True
        self.running[inst.caller.id].pop(inst.id, None)
        now = self.env._now  # SimPy 4.1's clock, without the property (the hot path)
        status = inst.status or "failed"
        wf = inst.wf
        self.rec.wf_end(
            now,
            inst.caller.node.j,
            wf.j,
            inst.id,
            status,
            now - inst.start,
            inst.reason,
            wf.counters,
        )
        self.live -= 1
        self.on_idle()

    def initiator_down(self, agent: str) -> None:
        """The initiator ``agent`` went down: its running instances are lost."""
        for inst in list(self.running.get(agent, {}).values()):
            inst.dead = True
            inst.status, inst.reason = "failed", "initiator_down"
            self._end(inst)

    def unfinished(self) -> None:
        """At the drain cap: end every instance still running (``failed``, ``drain_cap``)."""
        for running in self.running.values():
            for inst in list(running.values()):
                inst.dead = True
                inst.status, inst.reason = "failed", "drain_cap"
                self.rec.metrics.unfinished()
                self._end(inst)
