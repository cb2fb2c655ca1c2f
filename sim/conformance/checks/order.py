"""``requires_order`` and ``exclusive``: P4's Requires and ExclusiveWith, per workflow
instance (SPEC §6.4).

Each rule is a pure core (:class:`RequiresCore`, :class:`ExclusiveCore`) over one
instance's hashable state; the check classes stream it over a trace (a state per open
instance, beside the raw lines their messages quote) and ``verify`` steps it in its
search state (:class:`sim.verify.observe.CoreTracker`), so both decide by the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler, InstanceKey, where
from sim.conformance.truth import Truth

#: One instance's requires_order state, a plain tuple (``verify`` digests it with
#: :mod:`marshal`, so it holds ints, task ids and tuples only, in a canonical order):
#: ``(succeeded, task_tools, called, deferred)``, each set of targets (tools some tool
#: Requires; no other is ever asked about) a bit mask over :attr:`RequiresCore.bit`:
#: the targets with a success in the instance (their ``result``, or their task's), per
#: task that called targets ``(task, mask)`` (ordered by ``repr`` of the task), the
#: targets called in the instance, and the targets an execute lacked while they were not
#: yet part of it.
RequiresState = tuple[int, tuple[tuple[Any, int], ...], int, int]


class RequiresCore:
    """P4 Requires within one instance: for Ti Requires Tj, every ``execute`` of Ti
    follows a success of Tj (a ``result`` of Tj, or a ``result`` in a task that called
    Tj: a fallback's success is its task's), when Tj is part of the instance: a task of
    its workflow names it (``static``), or it is called there, before or after (an
    execute that lacked Tj is a violation at Tj's first call)."""

    __slots__ = ("bit", "canonical", "requires", "static")
    scope = "instance"
    labels: tuple[str, ...] = ("call", "invoke", "result", "execute")
    initial: RequiresState = (0, (), 0, 0)

    def __init__(
        self,
        requires: Mapping[str, Sequence[str]],
        static: Mapping[Any, Iterable[str]],
        canonical: bool = True,
    ) -> None:
        #: keep the per-task entries ordered (equal states are equal tuples, as ``verify``
        #: digests them); the streaming check, which never compares states, appends
        self.canonical = canonical
        targets = sorted({tj for tjs in requires.values() for tj in tjs})
        #: each target's bit
        self.bit = {t: 1 << k for k, t in enumerate(targets)}
        #: Ti → its targets (Tj, bit), in declaration order
        self.requires = {
            ti: tuple((tj, self.bit[tj]) for tj in tjs) for ti, tjs in requires.items() if tjs
        }
        #: workflow → the mask of its task tools that are targets
        self.static = {
            wf: sum(self.bit[t] for t in set(tools) if t in self.bit)
            for wf, tools in static.items()
        }

    def on_call(self, st: RequiresState, task: Any, tool: Any) -> tuple[RequiresState, bool]:
        """(the state after a call or invoke, whether it is Tj's first call after an
        execute that lacked it: a violation certain now)."""
        b = self.bit.get(tool)
        if b is None:
            return st, False
        succeeded, task_tools, called, deferred = st
        if not task_tools:  # the instance's first call of a target
            return ((succeeded, ((task, b),), called | b, deferred & ~b), bool(deferred & b))
        for k, (t, mask) in enumerate(task_tools):
            if t == task:
                if mask & b:
                    if called & b:
                        return st, False
                else:
                    task_tools = (*task_tools[:k], (t, mask | b), *task_tools[k + 1 :])
                break
        else:  # a new task: in the place its repr orders it at (canonical), or last
            at = None
            if self.canonical and task_tools:
                key = repr(task)
                at = next((k for k, (t, _) in enumerate(task_tools) if repr(t) > key), None)
            if at is None:
                task_tools = (*task_tools, (task, b))
            else:
                task_tools = (*task_tools[:at], (task, b), *task_tools[at:])
        if called & b:
            return (succeeded, task_tools, called, deferred), False
        return (succeeded, task_tools, called | b, deferred & ~b), bool(deferred & b)

    def on_result(self, st: RequiresState, task: Any, tool: Any) -> RequiresState:
        succeeded = st[0]
        won = self.bit.get(tool, 0)
        for t, mask in st[1]:
            if t == task:
                won |= mask
                break
        if not won & ~succeeded:
            return st
        return (succeeded | won, st[1], st[2], st[3])

    def on_execute(
        self, st: RequiresState, wf: Any, tool: Any
    ) -> tuple[RequiresState, tuple[tuple[Any, bool], ...]]:
        """(the state after an execute, each Tj it violates, with True when Tj was
        called in the instance, False when it is a task tool of ``wf``)."""
        reqs = self.requires.get(tool)
        if not reqs:
            return st, ()
        succeeded, task_tools, called, deferred = st
        missing: list[tuple[Any, bool]] = []
        later = 0
        for tj, b in reqs:
            if succeeded & b:
                continue
            if called & b:
                missing.append((tj, True))
            elif self.static.get(wf, 0) & b:
                missing.append((tj, False))
            else:
                later |= b
        if later & ~deferred:
            st = (succeeded, task_tools, called, deferred | later)
        return st, tuple(missing) if missing else ()

    def step(
        self, st: RequiresState, label: str, tool: Any, task: Any, wf: Any
    ) -> tuple[RequiresState, bool]:
        """(the state after one event, whether a violation is certain at it)."""
        if label == "execute":
            st, missing = self.on_execute(st, wf, tool)
            return st, bool(missing)
        if label == "result":
            return self.on_result(st, task, tool), False
        if label in ("call", "invoke"):
            return self.on_call(st, task, tool)
        return st, False


class _ReqInstance:
    """One open instance: the core's state and the raw lines its messages quote."""

    __slots__ = ("deferred", "first_call", "state")

    def __init__(self) -> None:
        self.state = RequiresCore.initial
        self.first_call: dict[Any, bytes] = {}
        self.deferred: dict[Any, list[tuple[Any, bytes, int]]] = {}


class RequiresOrder(Check):
    """P4 Requires: within an instance, ``H(execute_i → O result_j)`` for Ti Requires Tj,
    when Tj is part of the instance (:class:`RequiresCore`)."""

    name = "requires_order"
    labels: tuple[str, ...] = RequiresCore.labels
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.core = self.core_of(truth, canonical=False)  # no state is compared here
        self.requires = self.core.requires
        self.targets = self.core.bit
        self.inst: dict[tuple[Any, Any], _ReqInstance] = {}

    @staticmethod
    def core_of(truth: Truth, canonical: bool = True) -> RequiresCore:
        """The rule on ``truth``'s Requires relation and its workflows' task tools."""
        requires = {n: f.requires for n, f in truth.tools.items()}
        return RequiresCore(requires, truth.workflow_tools, canonical)

    def handlers(self) -> Mapping[str, Handler]:
        if not self.requires:
            return {}
        return {
            "call": self.on_call,
            "invoke": self.on_call,
            "result": self.on_result,
            "execute": self.on_execute,
        }

    def _instance(self, ev: Any) -> _ReqInstance:
        key = (ev.wf, ev.inst)
        inst = self.inst.get(key)
        if inst is None:
            inst = self.inst[key] = _ReqInstance()
        return inst

    def on_call(self, ev: Any, raw: bytes) -> None:
        tool = ev.tool
        if tool not in self.targets:  # the core's no-op, without a call
            return
        key = (ev.wf, ev.inst)
        inst = self.inst.get(key)
        if inst is None:
            inst = self.inst[key] = _ReqInstance()
        inst.state, late = self.core.on_call(inst.state, ev.task, tool)
        if tool not in inst.first_call:
            inst.first_call[tool] = raw
        if late:
            for ti, exec_raw, seq in inst.deferred.pop(tool, ()):
                self.violation(
                    f"{ti} executed (seq {seq}) in instance {ev.wf}#{ev.inst} before any "
                    f"successful result of {tool}, which it Requires and which the instance "
                    f"calls later (seq {ev.seq})",
                    [exec_raw, raw],
                    seq,
                    ev.wf,
                )

    def on_result(self, ev: Any, raw: bytes) -> None:
        inst = self.inst.get((ev.wf, ev.inst))
        if inst is None and ev.tool not in self.targets:  # nothing to record
            return
        if inst is None:
            inst = self._instance(ev)
        inst.state = self.core.on_result(inst.state, ev.task, ev.tool)

    def on_execute(self, ev: Any, raw: bytes) -> None:
        if ev.tool not in self.requires:
            return
        inst = self._instance(ev)
        st, missing = self.core.on_execute(inst.state, ev.wf, ev.tool)
        inst.state = st
        for tj, called in missing:
            first = inst.first_call.get(tj) if called else None
            why = "called in the instance" if called else "a task of the workflow"
            self.violation(
                f"execute (seq {ev.seq}) of {where(ev)} without a successful result of "
                f"{tj} before it ({ev.tool} Requires {tj}; {tj} is {why})",
                [*([first] if first else []), *self.ctx.history(ev.inv, raw)],
                ev.seq,
                ev.wf,
            )
        succeeded, _, _, deferred = st
        for tj, b in self.requires[ev.tool] if deferred else ():
            if deferred & b and not succeeded & b:  # this execute lacked tj
                inst.deferred.setdefault(tj, []).append((ev.tool, raw, ev.seq))

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        self.inst.pop(key, None)


class ExclusiveCore:
    """P4 ExclusiveWith within one instance: never both tools of a pair executed (the
    relation is symmetric). The state: the ruled tools executed so far, a bit mask over
    :attr:`bit` (an int: ``verify`` digests it)."""

    __slots__ = ("bit", "partners")
    scope = "instance"
    labels: tuple[str, ...] = ("execute",)
    initial = 0

    def __init__(self, partners: Mapping[str, Iterable[str]]) -> None:
        ruled = sorted(
            {n for n, p in partners.items() if p} | {o for p in partners.values() for o in p}
        )
        #: each ruled tool's bit
        self.bit = {t: 1 << k for k, t in enumerate(ruled)}
        #: a tool → its partners (name, bit), in name order
        self.partners = {
            n: tuple((o, self.bit[o]) for o in sorted(p)) for n, p in partners.items() if p
        }

    def on_execute(self, done: int, tool: Any) -> tuple[int, Any]:
        """(the state after an execute, the first partner of ``tool`` executed before it,
        in name order: a violation; None: none)."""
        partners = self.partners.get(tool)
        if not partners:
            return done, None
        clash = next((o for o, b in partners if done & b), None)
        return done | self.bit[tool], clash

    def step(self, done: int, label: str, tool: Any, task: Any, wf: Any) -> tuple[int, bool]:
        """(the state after one event, whether it is a violation)."""
        if label != "execute":
            return done, False
        done, clash = self.on_execute(done, tool)
        return done, clash is not None


class Exclusive(Check):
    """P4 ExclusiveWith: no instance executes both tools of a pair,
    ``H(execute_a → ¬O execute_b)`` per instance (:class:`ExclusiveCore`)."""

    name = "exclusive"
    labels: tuple[str, ...] = ExclusiveCore.labels

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.core = self.core_of(truth)
        self.partners = self.core.partners
        # per open instance: the core's state and each ruled tool's first execute line
        self.inst: dict[tuple[Any, Any], tuple[int, dict[Any, bytes]]] = {}

    @staticmethod
    def core_of(truth: Truth) -> ExclusiveCore:
        """The rule on ``truth``'s ExclusiveWith relation (symmetric)."""
        return ExclusiveCore({n: f.exclusive for n, f in truth.tools.items()})

    def handlers(self) -> Mapping[str, Handler]:
        return {"execute": self.on_execute} if self.partners else {}

    def on_execute(self, ev: Any, raw: bytes) -> None:
        tool = ev.tool
        if tool not in self.partners:  # the core's no-op, without a call
            return
        key = (ev.wf, ev.inst)
        done, first = self.inst.get(key) or (ExclusiveCore.initial, {})
        done, other = self.core.on_execute(done, tool)
        first.setdefault(tool, raw)
        self.inst[key] = (done, first)
        if other is not None:
            self.violation(
                f"instance {ev.wf}#{ev.inst} executes both {other} and {tool} "
                f"(ExclusiveWith): execute of {tool} at seq {ev.seq}",
                [first[other], raw],
                ev.seq,
                ev.wf,
            )

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        self.inst.pop(key, None)
