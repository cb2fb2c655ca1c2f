"""``requires_order`` and ``exclusive``: P4's Requires and ExclusiveWith, per workflow
instance (SPEC §6.4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler, InstanceKey, where
from sim.conformance.truth import Truth


class _ReqState:
    """One instance's requires_order state; only tools some tool Requires (the targets)
    are recorded in ``succeeded`` and ``task_tools`` (no other is ever asked about)."""

    __slots__ = ("deferred", "first_call", "succeeded", "task_tools")

    def __init__(self) -> None:
        self.succeeded: set[Any] = set()
        self.task_tools: dict[Any, set[Any]] = {}
        self.first_call: dict[Any, bytes] = {}
        self.deferred: dict[Any, list[tuple[Any, bytes, int]]] = {}


class RequiresOrder(Check):
    """P4 Requires: within an instance, ``H(execute_i → O result_j)`` for Ti Requires Tj,
    when Tj is part of the instance (a task of its workflow names it, or it is called)."""

    name = "requires_order"
    labels: tuple[str, ...] = ("call", "invoke", "result", "execute")
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.requires = {n: f.requires for n, f in truth.tools.items() if f.requires}
        self.targets = frozenset(t for r in self.requires.values() for t in r)
        self.static = truth.workflow_tools
        self.inst: dict[tuple[Any, Any], _ReqState] = {}

    def handlers(self) -> Mapping[str, Handler]:
        if not self.requires:
            return {}
        return {
            "call": self.on_call,
            "invoke": self.on_call,
            "result": self.on_result,
            "execute": self.on_execute,
        }

    def _state(self, ev: Any) -> _ReqState:
        key = (ev.wf, ev.inst)
        st = self.inst.get(key)
        if st is None:
            st = self.inst[key] = _ReqState()
        return st

    def on_call(self, ev: Any, raw: bytes) -> None:
        tool = ev.tool
        if tool not in self.targets:  # only a tool some tool Requires is ever asked about
            return
        st = self.inst.get((ev.wf, ev.inst)) or self._state(ev)  # a state is true
        tools = st.task_tools.get(ev.task)
        if tools is None:
            st.task_tools[ev.task] = {tool}
        else:
            tools.add(tool)
        if tool not in st.first_call:
            st.first_call[tool] = raw
            waiting = st.deferred.pop(tool, None)
            for ti, exec_raw, seq in waiting or ():
                self.violation(
                    f"{ti} executed (seq {seq}) in instance {ev.wf}#{ev.inst} before any "
                    f"successful result of {tool}, which it Requires and which the instance "
                    f"calls later (seq {ev.seq})",
                    [exec_raw, raw],
                    seq,
                    ev.wf,
                )

    def on_result(self, ev: Any, raw: bytes) -> None:
        key = (ev.wf, ev.inst)
        st = self.inst.get(key)
        if ev.tool in self.targets:
            if st is None:
                st = self.inst[key] = _ReqState()
            st.succeeded.add(ev.tool)
        if st is not None:
            # a fallback's success is its task's: the tools the task called succeeded
            tools = st.task_tools.get(ev.task)
            if tools:
                st.succeeded.update(tools)

    def on_execute(self, ev: Any, raw: bytes) -> None:
        reqs = self.requires.get(ev.tool)
        if not reqs:
            return
        st = self._state(ev)
        for tj in reqs:
            if tj in st.succeeded:
                continue
            called = st.first_call.get(tj)
            if called is not None or tj in self.static.get(ev.wf, ()):
                why = "called in the instance" if called else "a task of the workflow"
                self.violation(
                    f"execute (seq {ev.seq}) of {where(ev)} without a successful result of "
                    f"{tj} before it ({ev.tool} Requires {tj}; {tj} is {why})",
                    [*([called] if called else []), *self.ctx.history(ev.inv, raw)],
                    ev.seq,
                    ev.wf,
                )
            else:
                st.deferred.setdefault(tj, []).append((ev.tool, raw, ev.seq))

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        self.inst.pop(key, None)


class Exclusive(Check):
    """P4 ExclusiveWith: no instance executes both tools of a pair,
    ``H(execute_a → ¬O execute_b)`` per instance (the relation is symmetric)."""

    name = "exclusive"
    labels: tuple[str, ...] = ("execute",)

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.partners = {n: f.exclusive for n, f in truth.tools.items() if f.exclusive}
        self.inst: dict[tuple[Any, Any], dict[Any, bytes]] = {}

    def handlers(self) -> Mapping[str, Handler]:
        return {"execute": self.on_execute} if self.partners else {}

    def on_execute(self, ev: Any, raw: bytes) -> None:
        partners = self.partners.get(ev.tool)
        if not partners:
            return
        key = (ev.wf, ev.inst)
        done = self.inst.get(key)
        if done is None:  # nothing executed yet: nothing excluded
            self.inst[key] = {ev.tool: raw}
            return
        for other in sorted(partners):
            first = done.get(other)
            if first is not None:
                self.violation(
                    f"instance {ev.wf}#{ev.inst} executes both {other} and {ev.tool} "
                    f"(ExclusiveWith): execute of {ev.tool} at seq {ev.seq}",
                    [first, raw],
                    ev.seq,
                    ev.wf,
                )
                break
        done.setdefault(ev.tool, raw)

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        self.inst.pop(key, None)
