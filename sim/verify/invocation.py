"""The steps of the untimed model (:mod:`sim.verify.model`) inside one instance: the
instance's readiness and status (``_advance``, ``_over``) and each task's invocation
through the LTS of its tool as the caller's view knows it (call or invoke, collect,
validation, the gate, execute, result, each error and its one recovery, timeouts).

:class:`Steps` holds no state of its own: a state is the plain tuple the model module
describes, and every step returns its events and the next state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import compress, repeat
from operator import eq
from typing import Any

from sim.approval import ApprovalPolicy, simulated_denial
from sim.calculus.lts import LTS, TAU, label
from sim.calculus.mcp import (
    MAX_FALLBACK_DEPTH,
    SERVICE_DOWN,
    VALIDATION_ERROR,
    Fallback,
    ToolPlus,
    UserPrompt,
)
from sim.verify.knowledge import RouteOption, ToolModel
from sim.verify.states import (
    ASK,
    CANCELLED,
    COLLECT,
    DONE_OK,
    END,
    EXEC,
    FAILED,
    FLIGHT,
    FRESH,
    PENDING,
    PREPARING,
    RESUME,
    RUNNING,
    SKIPPED,
    SUCCEEDED,
    WAITING,
    Event,
    Task,
    Transition,
    active,
)


class Steps:
    """The steps shared by every task of the modelled instance; the attributes are the
    model's compiled scenario (set by :class:`~sim.verify.model.Model`)."""

    tasks: tuple[Task, ...]
    initiator: str
    exact: bool
    isolated: dict[int, frozenset[str]]
    #: per task, the tasks ordered after it (:func:`~sim.verify.states.dependents`)
    dependents: tuple[tuple[int, ...], ...]
    option_list: list[RouteOption]
    views: dict[tuple[str, frozenset[str]], ToolModel]
    truth: dict[str, ToolPlus]
    #: per tool, the tools that declare it ExclusiveWith (:func:`~sim.calculus.mcp.excluders`)
    excluded_by: dict[str, frozenset[str]]
    errors: dict[str, dict[str, Any]]
    mcp_policy: str
    policy: ApprovalPolicy
    grant: float
    write: dict[str, bool]
    raised: dict[str, tuple[str, ...]]
    result_possible: dict[str, bool]
    #: where a re-sent or retried attempt can be served (the model's; see there)
    placements: Callable[[Task, int, int], tuple[tuple[str, str], ...]]

    def view(self, option: RouteOption) -> ToolModel:
        """The caller's view of the option's tool through its fields."""
        key = (option.tool, option.fields)
        hit = self.views.get(key)
        if hit is None:
            hit = self.views[key] = ToolModel(
                self.truth[option.tool],
                option.fields,
                self.mcp_policy,
                self.errors[option.tool],
                self.excluded_by.get(option.tool, frozenset()),
            )
        return hit

    def _ev(self, lab: str, task: Task, tool: str | None, *detail: tuple[str, Any]) -> Event:
        return (lab, task.index, tool, self.initiator, task.rho, tuple(detail))

    def _advance(
        self,
        evs: list[Event],
        tasks: list[Any],
        status: Any,
        known: tuple[int, ...],
        latest: tuple[Any, ...],
        woken: Iterable[int] | None = None,
    ) -> tuple[list[Event], tuple[Any, ...]]:
        """Prepare every task that can start; end the instance when nothing runs.
        ``woken``: the only tasks that can have become ready (None: any). Invariant of
        every state: no pending task has all its ≺ predecessors ended well while the
        instance has not failed, so only the dependents of a task that just ended and the
        waiting tasks it releases need looking at (a cost per step flat in the tasks)."""
        prepared = False
        if not status:
            for i in range(len(tasks)) if woken is None else woken:
                if tasks[i] == PENDING and all(tasks[j] in DONE_OK for j in self.tasks[i].after):
                    tasks[i] = FRESH
                    prepared = True
        if not prepared and next(active(tasks), None) is None:
            detail: tuple[tuple[str, Any], ...] = ()
            if not status:
                if tasks.count(SUCCEEDED) + tasks.count(SKIPPED) == len(tasks):
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
        new = list(tasks)
        woken = self.dependents[task.index]
        if WAITING in new:
            waiting = tuple(compress(range(len(new)), map(eq, new, repeat(WAITING))))
            for j in waiting:
                new[j] = PENDING
            woken = (*woken, *waiting)
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
            woken,
        )
        return tuple(out), nxt

    def _with(self, state: tuple[Any, ...], task: Task, ts: Any, **kw: Any) -> tuple[Any, ...]:
        tasks, status, known, latest = state
        new = list(tasks)
        new[task.index] = ts
        return (tuple(new), status, kw.get("known", known), kw.get("latest", latest))

    def lts_of(self, option: RouteOption, gate: bool, task: Task) -> LTS:
        return self.view(option).lts(gate, task.dialect)

    def _invoke(
        self, state: tuple[Any, ...], task: Task, oid: int, depth: int, evs: list[Event]
    ) -> tuple[tuple[Event, ...], tuple[Any, ...]]:
        """Start an invocation: its dialect's opening, intake (validation or collecting the
        missing slots), then the gate."""
        option = self.option_list[oid]
        view = self.view(option)
        gate = view.decision(self.policy, task.args).asks
        lts = self.lts_of(option, gate, task)
        tool = option.tool
        dialect = task.dialect
        opening = dialect.opening
        evs.append(self._ev(opening, task, tool, ("target", option.host), ("depth", depth)))
        s = lts.step(lts.initial, label(opening, tool))
        assert s is not None
        inv: tuple[Any, ...] = (RUNNING, oid, gate, s, ASK, 0, depth, (), False)
        if dialect.collects:
            pending = tuple(k for k in view.required if k not in task.args)
            if pending:
                inv = (*inv[:4], COLLECT, 0, depth, pending, False)
                return tuple(evs), self._with(state, task, inv)
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
        _, oid, gate, s, phase, resends, depth, pending, sent = inv
        option = self.option_list[oid]
        tool = option.tool
        lts = self.lts_of(option, gate, task)
        i = task.index
        if phase == COLLECT:
            slot = pending[0]
            s2 = lts.step(s, label("collect", slot))
            assert s2 is not None
            evs = [self._ev("collect", task, tool, ("slot", slot))]
            inv2 = (*inv[:3], s2, *inv[4:7], pending[1:], inv[8])
            if len(pending) > 1:
                out.append((i, tuple(evs), self._with(state, task, inv2)))
            else:
                out.append((i, *self._gate(state, task, inv2, evs)))
        elif phase == ASK:
            why = ("reason", self.view(option).decision(self.policy, task.args).reason)
            if self.grant > 0:
                s2 = lts.step(s, label("approve", tool))
                assert s2 is not None
                evs = [self._ev("approve", task, tool, why)]
                out.append(
                    (i, tuple(evs), self._with(state, task, (*inv[:3], s2, FLIGHT, *inv[5:])))
                )
            if self.grant < 1:
                denial = ("reason", simulated_denial(self.grant))
                s2 = lts.step(s, label("deny", tool))
                assert s2 is not None
                out.append(
                    (
                        i,
                        *self._over(
                            state,
                            task,
                            CANCELLED,
                            "denied",
                            [self._ev("deny", task, tool, denial, ("asked", why[1]))],
                        ),
                    )
                )
        elif phase == FLIGHT:
            s2 = lts.step(s, label("execute", tool))
            assert s2 is not None
            approved = (("approved", gate),) if self.write[tool] else ()
            # the first attempt goes over the discovered route; a later one may be rerouted
            places = self.placements(task, oid, depth) if sent else ((option.host, option.arrives),)
            for host, arrives in places:
                evs = [("execute", i, tool, host, arrives, approved)]
                inv2 = (*inv[:3], s2, EXEC, resends, depth, pending, True)
                out.append((i, tuple(evs), self._with(state, task, inv2)))
            view = self.view(option)
            if resends < view.sd_retries:
                t_ev = self._ev("timeout", task, tool, ("executed", False), ("action", "resend"))
                inv2 = (*inv[:4], FLIGHT, resends + 1, depth, pending, True)
                out.append((i, (t_ev,), self._with(state, task, inv2)))
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
