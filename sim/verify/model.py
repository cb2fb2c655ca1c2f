"""The untimed model of one workflow instance (SPEC §11): tasks × caller views × choices.

A state is a plain tuple ``(tasks, status, known, latest)``:

* ``tasks``: per task, an int code (``PENDING`` … ``WAITING``) or a tuple:
  ``(PREPARING, need, depth)`` (its route and view not chosen yet; ``need`` None for
  the task's own need, else a fallback tool) or ``(RUNNING, option, gate, lts state,
  phase, resends, depth, pending slots)`` for its current invocation;
* ``status``: ``""`` while nothing failed, else (``failed``|``cancelled``, reason), the
  first deciding, when ``exact``, else ``"x"``;
* ``known``: the option ids discovered (no second ``list``); ``latest``: (tool, option
  id learned last) pairs, kept only when some tool declares ``ProducesInputFor``.

Initial state :data:`INIT`, final :data:`END`. A transition is one group of events the
engine writes at one instant, synchronously (``error`` and its recovery), with its task's
index (-1: the instance's). Events: :data:`~sim.verify.states.Event`. The environment
chooses each discovery's route and view (its own ``list``, or with no event the view
the caller learned in an earlier instance), grant or deny, result or each error of non-zero
probability, a timeout before or after execution (always possible: service times,
queueing and outages are abstracted), a failed discovery, and the initiator going down
when a failure can take it down. The caller follows ``sim.engine`` (SPEC §4): the view's
LTS and its one recovery, readiness under ≺ and known dependencies, ExclusiveWith skips,
and a failure at once in a batch of ready tasks ending the instance
(:func:`~sim.verify.states.batch_cuts`).
"""

from __future__ import annotations

from typing import Any

from sim.approval import make_policy, reason
from sim.calculus.lts import LTS, TAU, label
from sim.calculus.mcp import (
    MAX_FALLBACK_DEPTH,
    SERVICE_DOWN,
    VALIDATION_ERROR,
    Fallback,
    UserPrompt,
)
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.scenario.model import Scenario
from sim.verify.knowledge import (
    RouteOption,
    ToolModel,
    down_sets,
    failed_elements,
    list_events,
    route_options,
)
from sim.verify.states import (
    ASK,
    CANCELLED,
    COLLECT,
    DONE_OK,
    END,
    EXEC,
    FAILED,
    FLIGHT,
    INIT,
    INITIATOR_DOWN,
    PENDING,
    PREPARING,
    RESUME,
    RUNNING,
    SGD,
    SKIPPED,
    SUCCEEDED,
    WAITING,
    Event,
    Task,
    Transition,
    batch_cuts,
    code_of,
    isolated_tasks,
)


class Model:
    """One instance of ``workflow`` started by ``initiator`` under ``router`` (see the
    module). ``exact``: keep the instance's status and reason in the state (needed
    when a property reads ``wf_end``; partial-order reduction runs without it)."""

    def __init__(
        self,
        scenario: Scenario,
        workflow: str,
        router: str,
        initiator: str | None = None,
        exact: bool = True,
    ) -> None:
        wf = next(w for w in scenario.workflows if w.name == workflow)
        self.scenario = scenario
        self.workflow = wf.name
        self.router_name = router
        self.exact = exact
        initiators = scenario.initiators_of(wf)
        self.initiator = initiator if initiator is not None else initiators[0]
        order = {t.id: i for i, t in enumerate(wf.tasks)}
        self.tasks = tuple(Task(i, t, wf, order) for i, t in enumerate(wf.tasks))
        self.graph = ProtocolGraph.from_scenario(scenario)
        self.router = make_router(router, self.graph, scenario)
        self.downs = down_sets(scenario, self.router.static)
        self.policy = make_policy(scenario.approval)
        self.mcp_policy = scenario.approval.mcp_policy.value
        self.grant = float(scenario.approval.grant_probability)
        specs = {t.name: t for t in scenario.tools}
        self.truth = {name: s.descriptor() for name, s in specs.items()}
        self.errors = {name: dict(s.errors) for name, s in specs.items()}
        self.write = {name: s.side_effects.writes for name, s in specs.items()}
        self.raised = {
            name: tuple(e for e in sorted(errs) if float(errs[e]) > 0)
            for name, errs in self.errors.items()
        }
        self.result_possible = {
            name: sum(float(p) for p in errs.values()) < 1.0 for name, errs in self.errors.items()
        }
        nodes, _ = failed_elements(scenario)
        self.initiator_fails = self.initiator in nodes
        self.options: dict[tuple[str, str], tuple[int, ...]] = {}
        #: every route option, by id (states hold ids; ``known`` holds ids of their keys)
        self.option_list: list[RouteOption] = []
        self._option_ids: dict[tuple[Any, ...], int] = {}
        self.views: dict[tuple[str, frozenset[str]], ToolModel] = {}
        #: tasks whose outcome no other task reads: with ``exact`` off their final code is
        #: kept as SUCCEEDED (the failure is in ``status``), so outcomes do not multiply
        self.isolated = isolated_tasks(self.tasks, self.truth)
        self.feeds_known = any(
            d.relation.value == "ProducesInputFor" for s in specs.values() for d in s.dependencies
        )

    # -- knowledge --

    def options_for(self, task: Task, need: str | None) -> tuple[int, ...]:
        """The route options (ids) of ``task``'s own need (``need`` None) or a fallback."""
        key = (need or task.need, task.rho)
        hit = self.options.get(key)
        if hit is None:
            tool = need if need is not None else task.tool
            capability = None if need is not None else task.capability
            found = route_options(
                self.router, self.graph, self.downs, self.initiator, tool, capability, task.rho
            )
            hit = self.options[key] = tuple(self._intern(o) for o in found)
        return hit

    def _intern(self, option: RouteOption) -> int:
        k = option.key()
        hit = self._option_ids.get(k)
        if hit is None:
            hit = self._option_ids[k] = len(self.option_list)
            self.option_list.append(option)
        return hit

    def view(self, option: RouteOption) -> ToolModel:
        """The caller's view of the option's tool through its fields."""
        key = (option.tool, option.fields)
        hit = self.views.get(key)
        if hit is None:
            hit = self.views[key] = ToolModel(
                self.truth[option.tool], option.fields, self.mcp_policy, self.errors[option.tool]
            )
        return hit

    def _ev(self, lab: str, task: Task, tool: str | None, *detail: tuple[str, Any]) -> Event:
        return (lab, task.index, tool, self.initiator, task.rho, tuple(detail))

    def successors(self, state: tuple[Any, ...]) -> list[Transition]:
        """Every transition enabled in ``state``: (task index or -1, events, next state)."""
        if state is END:
            return []
        if state == INIT:
            tasks: tuple[Any, ...] = (PENDING,) * len(self.tasks)
            start = ("wf_start", -1, None, self.initiator, None, ())
            evs, nxt = self._advance([start], list(tasks), "", (), ())
            return [(-1, tuple(evs), nxt)]
        tasks, _status, _known, _latest = state
        out: list[Transition] = []
        for task in self.tasks:
            ts = tasks[task.index]
            if isinstance(ts, int):
                continue
            if ts[0] == PREPARING:
                first = len(out)
                self._discover(state, task, ts, out)
                out.extend(batch_cuts(out[first:], task.index, self.initiator, self.exact))
            else:
                self._step(state, task, ts, out)
        if self.initiator_fails:
            out.append((-1, (("wf_end", -1, None, self.initiator, None, INITIATOR_DOWN),), END))
        return out

    def _advance(
        self,
        evs: list[Event],
        tasks: list[Any],
        status: Any,
        known: tuple[int, ...],
        latest: tuple[Any, ...],
    ) -> tuple[list[Event], tuple[Any, ...]]:
        """Prepare every task that can start; end the instance when nothing runs."""
        if not status:
            for task in self.tasks:
                if tasks[task.index] == PENDING and all(tasks[j] in DONE_OK for j in task.after):
                    tasks[task.index] = (PREPARING, None, 0)
        running = sum(1 for s in tasks if code_of(s) in (PREPARING, RUNNING))
        if running == 0:
            detail: tuple[tuple[str, Any], ...] = ()
            if not status:
                if all(s in DONE_OK for s in tasks):
                    detail = (("status", "succeeded"),)
                else:
                    detail = (("status", "failed"), ("reason", "blocked"))
            elif self.exact:
                detail = (("status", status[0]), ("reason", status[1]))
            evs.append(("wf_end", -1, None, self.initiator, None, detail))
            return evs, END
        return evs, (tuple(tasks), status, known, latest)

    def _over(
        self,
        state: tuple[Any, ...],
        task: Task,
        code: int,
        reason: str,
        evs: list[Event],
        known: tuple[int, ...] | None = None,
        latest: tuple[Any, ...] | None = None,
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        """Task ``task`` is over with ``code``: waiting tasks re-examined, status set."""
        tasks, status, k0, l0 = state
        new = [PENDING if s == WAITING else s for s in tasks]
        new[task.index] = code
        if not self.exact and task.index in self.isolated:
            new[task.index] = SUCCEEDED
            mine = self.isolated[task.index]
            held = known if known is not None else k0
            known = tuple(o for o in held if self.option_list[o].tool not in mine)
        if code in (FAILED, CANCELLED):
            evs.append(
                ("_failed", task.index, None, "", None, (("code", code), ("reason", reason)))
            )
            if not status:
                status = (
                    (("failed" if code == FAILED else "cancelled"), reason) if self.exact else "x"
                )
        out, nxt = self._advance(
            evs,
            new,
            status,
            known if known is not None else k0,
            latest if latest is not None else l0,
        )
        return tuple(out), nxt

    def _with(self, state: tuple[Any, ...], task: Task, ts: Any, **kw: Any) -> tuple[Any, ...]:
        tasks, status, known, latest = state
        new = list(tasks)
        new[task.index] = ts
        return (tuple(new), status, kw.get("known", known), kw.get("latest", latest))

    def _discover(self, state: tuple[Any, ...], task: Task, ts: Any, out: list[Transition]) -> None:
        _, need, _depth = ts
        _tasks, _status, known, latest = state
        options = self.options_for(task, need)
        if not options:
            out.append((task.index, *self._over(state, task, FAILED, "no_route", [])))
            return
        unknown = False
        for oid in options:
            option = self.option_list[oid]
            if oid in known:
                self._discovered(state, task, ts, oid, [], known, latest, out)
                continue
            unknown = True
            k2 = tuple(sorted((*known, oid)))
            l2 = latest
            if self.feeds_known:
                l2 = tuple(sorted({**dict(latest), option.tool: oid}.items()))
            # this instance's own `list` exchange, or (no event, at once) the caller's
            # view from an earlier instance: views outlive instances (engine discovery)
            self._discovered(state, task, ts, oid, self._list_events(task, option), k2, l2, out)
            self._discovered(state, task, ts, oid, [], k2, l2, out)
        if unknown:
            fail = self._ev(
                "timeout", task, need or task.tool, ("action", "give_up"), ("kind", "list")
            )
            out.append((task.index, *self._over(state, task, FAILED, "discovery_timeout", [fail])))
            # the exchange that gave up was another instance's (its events are in that one)
            out.append((task.index, *self._over(state, task, FAILED, "discovery_timeout", [])))

    def _discovered(
        self,
        state: tuple[Any, ...],
        task: Task,
        ts: Any,
        oid: int,
        evs: list[Event],
        known: tuple[int, ...],
        latest: tuple[Any, ...],
        out: list[Transition],
    ) -> None:
        """The view of option ``oid`` is known after ``evs``: go on as the engine does."""
        st = self._with(state, task, ts, known=known, latest=latest)
        if ts[2] == 0:
            self._ready(st, task, oid, evs, out)
        else:
            evs_t, nxt = self._invoke(st, task, oid, ts[2], evs)
            out.append((task.index, evs_t, nxt))

    def _list_events(self, task: Task, option: RouteOption) -> list[Event]:
        view = self.view(option).view
        return list_events(option, view, task.index, self.initiator, task.rho)

    def _tool_of(self, tasks: tuple[Any, ...], j: int) -> str | None:
        task = self.tasks[j]
        if task.tool is not None:
            return task.tool
        ts = tasks[j]
        if isinstance(ts, tuple) and ts[0] == RUNNING and ts[6] == 0:
            return self.option_list[ts[1]].tool
        return None

    def _ready(
        self,
        state: tuple[Any, ...],
        task: Task,
        oid: int,
        evs: list[Event],
        out: list[Transition],
    ) -> None:
        """As the engine's ``_ready``: wait for known dependencies, skip, or invoke."""
        tasks, status, known, latest = state
        option = self.option_list[oid]
        view = self.view(option)
        me = option.tool
        wait = False
        for j in range(len(self.tasks)):
            other = self._tool_of(tasks, j)
            if j == task.index or other is None:
                continue
            required = other in view.requires
            if not required and latest:
                theirs = dict(latest).get(other)
                if theirs is not None:
                    required = me in self.view(self.option_list[theirs]).feeds
            code = code_of(tasks[j])
            if required:
                if code in (FAILED, CANCELLED, SKIPPED):
                    out.append((task.index, *self._over(state, task, FAILED, "dependency", evs)))
                    return
                if code != SUCCEEDED:
                    wait = True
            if other in view.exclusive and code in (RUNNING, SUCCEEDED, FAILED):
                evs.append(self._ev("skip", task, me, ("exclusive_with", other)))
                out.append((task.index, *self._over(state, task, SKIPPED, "exclusive", evs)))
                return
        if wait:
            new = list(tasks)
            new[task.index] = WAITING
            evs2, nxt = self._advance(evs, new, status, known, latest)
            out.append((task.index, tuple(evs2), nxt))
            return
        evs_t, nxt = self._invoke(state, task, oid, 0, evs)
        out.append((task.index, evs_t, nxt))

    def lts_of(self, option: RouteOption, gate: bool, task: Task) -> LTS:
        return self.view(option).lts(gate, task.rho == SGD)

    def _invoke(
        self, state: tuple[Any, ...], task: Task, oid: int, depth: int, evs: list[Event]
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        """Start an invocation: call (or invoke), validation, then the gate."""
        option = self.option_list[oid]
        view = self.view(option)
        gate = view.gate(self.policy, task.args)
        lts = self.lts_of(option, gate, task)
        tool = option.tool
        sgd = task.rho == SGD
        opening = "invoke" if sgd else "call"
        evs.append(self._ev(opening, task, tool, ("target", option.host), ("depth", depth)))
        s = lts.step(lts.initial, label(opening, tool))
        assert s is not None
        inv = (RUNNING, oid, gate, s, ASK, 0, depth, ())
        if sgd:
            pending = tuple(k for k in view.required if k not in task.args)
            if pending:
                return tuple(evs), self._with(state, task, (*inv[:4], COLLECT, 0, depth, pending))
            return self._gate(state, task, inv, evs)
        return self._validate(state, task, inv, evs)

    def _validate(
        self, state: tuple[Any, ...], task: Task, inv: tuple[Any, ...], evs: list[Event]
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        option = self.option_list[inv[1]]
        view = self.view(option)
        missing = [k for k in view.required if k not in task.args]
        lts = self.lts_of(option, inv[2], task)
        if missing:
            return self._error(state, task, inv, VALIDATION_ERROR, evs, ("missing", tuple(missing)))
        s = lts.step(inv[3], TAU)
        assert s is not None
        evs.append(self._ev("validate", task, option.tool))
        return self._gate(state, task, (*inv[:3], s, *inv[4:]), evs)

    def _gate(
        self, state: tuple[Any, ...], task: Task, inv: tuple[Any, ...], evs: list[Event]
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        phase = ASK if inv[2] else FLIGHT
        return tuple(evs), self._with(state, task, (*inv[:4], phase, *inv[5:]))

    def _error(
        self,
        state: tuple[Any, ...],
        task: Task,
        inv: tuple[Any, ...],
        error: str,
        evs: list[Event],
        *more: tuple[str, Any],
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        """``error(t)`` and the one recovery the view's LTS enables after it."""
        option = self.option_list[inv[1]]
        tool = option.tool
        lts = self.lts_of(option, inv[2], task)
        s = lts.step(inv[3], label("error", tool, error))
        assert s is not None, f"error {error} not enabled for {tool}"
        evs.append(self._ev("error", task, tool, ("error", error), *more))
        (lab, nxt), *rest = lts.enabled(s)
        assert not rest
        view = self.view(option)
        chosen = view.recovery.get(error)
        if lab == label("retry", tool):
            evs.append(self._ev("retry", task, tool, ("error", error)))
            inv2 = (*inv[:3], nxt, *inv[4:])
            if lts.step(nxt, TAU) is not None:
                return tuple(evs), self._with(state, task, (*inv2[:4], RESUME, *inv2[5:]))
            return self._gate(state, task, inv2, evs)
        if lab == label("prompt", tool):
            message = chosen.message if isinstance(chosen, UserPrompt) else ""
            evs.append(self._ev("prompt", task, tool, ("error", error), ("message", message)))
            return self._over(state, task, FAILED, "prompt", evs)
        if lab == label("abort", tool):
            evs.append(self._ev("abort", task, tool, ("error", error)))
            return self._over(state, task, FAILED, "abort", evs)
        assert isinstance(chosen, Fallback) and lab == label("fallback", tool, chosen.tool)
        evs.append(self._ev("fallback", task, tool, ("error", error), ("to", chosen.tool)))
        depth = inv[6]
        if depth + 1 > MAX_FALLBACK_DEPTH:
            return self._over(state, task, FAILED, "fallback_depth", evs)
        return tuple(evs), self._with(state, task, (PREPARING, chosen.tool, depth + 1))

    def _step(
        self, state: tuple[Any, ...], task: Task, inv: tuple[Any, ...], out: list[Transition]
    ) -> None:
        """The enabled steps of ``task``'s running invocation."""
        _, oid, gate, s, phase, resends, _depth, pending = inv
        option = self.option_list[oid]
        tool = option.tool
        lts = self.lts_of(option, gate, task)
        i = task.index
        if phase == COLLECT:
            slot = pending[0]
            s2 = lts.step(s, label("collect", slot))
            assert s2 is not None
            evs = [self._ev("collect", task, tool, ("slot", slot))]
            inv2 = (*inv[:3], s2, *inv[4:7], pending[1:])
            if len(pending) > 1:
                out.append((i, tuple(evs), self._with(state, task, inv2)))
            else:
                out.append((i, *self._gate(state, task, inv2, evs)))
        elif phase == ASK:
            why = ("reason", reason(self.policy, self.view(option).view, task.args))
            if self.grant > 0:
                s2 = lts.step(s, label("approve", tool))
                assert s2 is not None
                evs = [self._ev("approve", task, tool, why)]
                out.append(
                    (i, tuple(evs), self._with(state, task, (*inv[:3], s2, FLIGHT, *inv[5:])))
                )
            if self.grant < 1:
                s2 = lts.step(s, label("deny", tool))
                assert s2 is not None
                out.append(
                    (
                        i,
                        *self._over(
                            state, task, CANCELLED, "denied", [self._ev("deny", task, tool, why)]
                        ),
                    )
                )
        elif phase == FLIGHT:
            s2 = lts.step(s, label("execute", tool))
            assert s2 is not None
            approved = (("approved", gate),) if self.write[tool] else ()
            evs = [("execute", i, tool, option.host, option.arrives, approved)]
            out.append((i, tuple(evs), self._with(state, task, (*inv[:3], s2, EXEC, *inv[5:]))))
            view = self.view(option)
            if resends < view.sd_retries:
                t_ev = self._ev("timeout", task, tool, ("executed", False), ("action", "resend"))
                out.append((i, (t_ev,), self._with(state, task, (*inv[:5], resends + 1, *inv[6:]))))
            else:
                t_ev = self._ev("timeout", task, tool, ("executed", False), ("action", "give_up"))
                out.append((i, *self._over(state, task, FAILED, "timeout", [t_ev])))
        elif phase == EXEC:
            if self.result_possible[tool]:
                s2 = lts.step(s, label("result", tool))
                assert s2 is not None
                out.append(
                    (i, *self._over(state, task, SUCCEEDED, "", [self._ev("result", task, tool)]))
                )
            for error in self.raised[tool]:
                out.append((i, *self._error(state, task, inv, error, [])))
            t_ev = self._ev("timeout", task, tool, ("executed", True), ("action", "error"))
            out.append(
                (i, *self._error(state, task, inv, SERVICE_DOWN, [t_ev], ("cause", "timeout")))
            )
        else:  # RESUME: validation again after a ValidationError's retry
            out.append((i, *self._validate(state, task, inv, [])))
