"""The seven conformance checks of SPEC §6, streaming over a trace (SPEC §5).

Each check is a class with the same small interface: ``handlers()`` maps the trace
labels it reads to bound methods ``(event, raw_line)``; ``end_instance(key, invs)`` is
called at a workflow instance's ``wf_end`` (``key = (wf, inst)``, ``invs`` the
invocations that instance opened) so per-instance and per-invocation state is dropped;
``finish()`` returns the :class:`Verdict`. :func:`check_trace` parses each line once and
dispatches it only to the checks that read its label.

Memory: per open invocation (its protocol events, for counterexamples, and each check's
small state), per running workflow instance, per message in flight, and one bounded
counterexample per check; never per event of the trace.

The checks read SPEC §5 semantics only: ``label``, ``inv``, ``wf``/``inst``/``task``,
``tool``, ``agent``, ``proto`` and these ``detail`` keys: ``error`` (the type of an
``error``), ``to`` (the tool of a ``fallback``; the far node of a ``hop``), ``from`` and
``proto`` (``hop``), ``at``/``from_proto``/``to_proto``/``chain`` (``translate``),
``msg`` (``send``/``deliver``/``drop``), ``reason`` (``drop``), ``link`` (``link_down``
/``link_up``), ``slot`` (``collect``, SGD).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.calculus.lts import LTS, label
from sim.calculus.mcp import Fallback, Retry, UserPrompt
from sim.conformance.events import (
    LABELS,
    PROTOCOL_LABELS,
    TraceError,
    decode_line,
    decoder,
    encode_event,
    raw_to_dict,
    read_blocks,
)
from sim.conformance.truth import ToolFacts, Truth, from_scenario, strategy_text
from sim.scenario.model import Scenario

Handler = Callable[[Any, bytes], None]

#: Labels that open an invocation.
OPENING: frozenset[str] = frozenset(("call", "invoke"))
#: Labels after which an invocation is over (every LTS reaches ``done`` with them).
TERMINAL: frozenset[str] = frozenset(("result", "abort", "prompt", "fallback", "deny"))
#: Events of one invocation kept for a counterexample (the first and the latest ones).
HISTORY_CAP = 64
#: Violation messages beyond the first kept per check (for ``--json``).
KEEP_MESSAGES = 5
#: The note of a report on a trace with no events.
EMPTY_NOTE = "empty trace: nothing to check"
#: The note of ``check_run_dir`` on an empty trace.
NOT_CHECKED_NOTE = "empty trace (trace level off): nothing was checked"

CHECK_NAMES: tuple[str, ...] = (
    "write_approval",
    "requires_order",
    "exclusive",
    "recovery",
    "lts",
    "conservation",
    "route_validity",
)


@dataclass
class Verdict:
    """One check's outcome."""

    name: str
    examined: int
    violations: int
    message: str = ""
    counterexample: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    more: list[str] = field(default_factory=list)
    #: violations per workflow (``"None"``: events without a workflow)
    by_workflow: dict[str, int] = field(default_factory=dict)
    #: False when the trace holds none of what the check needs (e.g. no ``send`` events
    #: at trace level ``protocol``): it holds vacuously and has no meaningful count
    applicable: bool = True

    @property
    def ok(self) -> bool:
        return self.violations == 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "examined": self.examined,
            "violations": self.violations,
            "ok": self.ok,
        }
        if self.note:
            out["note"] = self.note
        if not self.applicable:
            out["applicable"] = False
        if self.violations:
            out["by_workflow"] = self.by_workflow
            out["first"] = {"message": self.message, "events": self.counterexample}
            if self.more:
                out["next_messages"] = self.more
        return out


@dataclass
class Report:
    """All verdicts on one trace."""

    source: str
    events: int
    verdicts: list[Verdict]
    seconds: float = 0.0
    truth: str = ""
    instances: int = 0

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def note(self) -> str:
        """Why the verdicts say nothing, if they do not (an empty trace)."""
        return EMPTY_NOTE if self.events == 0 else ""

    def verdict(self, name: str) -> Verdict:
        for v in self.verdicts:
            if v.name == name:
                return v
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.source,
            "truth": self.truth,
            "events": self.events,
            "instances": self.instances,
            "ok": self.ok,
            **({"note": self.note} if self.note else {}),
            "violations": sum(v.violations for v in self.verdicts),
            "checks": [v.to_json() for v in self.verdicts],
        }


class Context:
    """What the driver shares with the checks: each open invocation's protocol events."""

    __slots__ = ("hist",)

    def __init__(self) -> None:
        self.hist: dict[Any, list[bytes]] = {}

    def history(self, inv: Any, raw: bytes) -> list[bytes]:
        h = self.hist.get(inv)
        return list(h) if h else [raw]


class Check:
    """Base class: counterexample bookkeeping; subclasses add handlers."""

    name = ""
    #: the labels whose events this check examines
    labels: tuple[str, ...] = ()

    def __init__(self, truth: Truth, ctx: Context) -> None:
        self.truth = truth
        self.ctx = ctx
        self.violations = 0
        self._first: tuple[int, str, list[bytes]] | None = None
        self._more: list[str] = []
        self.note = ""
        self.by_wf: dict[Any, int] = {}

    def handlers(self) -> dict[str, Handler]:
        return {}

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        """A workflow instance ended: drop its state (and report what it left undone)."""

    def violation(self, message: str, raws: Iterable[bytes], seq: int, wf: Any = None) -> None:
        """Count one violation (per workflow too); keep the earliest (by ``seq``) as the
        counterexample."""
        self.violations += 1
        try:
            self.by_wf[wf] = self.by_wf.get(wf, 0) + 1
        except TypeError:
            self.by_wf[str(wf)] = self.by_wf.get(str(wf), 0) + 1
        first = self._first
        if first is None or seq < first[0]:
            if first is not None and len(self._more) < KEEP_MESSAGES:
                self._more.append(first[1])
            self._first = (seq, message, list(raws)[:HISTORY_CAP])
        elif len(self._more) < KEEP_MESSAGES:
            self._more.append(message)

    def finish(self, examined: int) -> Verdict:
        message, events = "", []
        if self._first is not None:
            _, message, raws = self._first
            events = sorted((raw_to_dict(r) for r in raws), key=_seq_key)
        by_wf = {str(k): v for k, v in self.by_wf.items()}
        return Verdict(
            self.name,
            examined,
            self.violations,
            message,
            events,
            self.note,
            list(self._more),
            by_wf,
        )


def _seq_key(event: dict[str, Any]) -> int:
    seq = event.get("seq")
    return seq if isinstance(seq, int) else -1


def _where(ev: Any) -> str:
    return f"invocation {ev.inv} of {ev.tool} (instance {ev.wf}#{ev.inst}, task {ev.task})"


# --- write_approval (P2) -----------------------------------------------------------------


class WriteApproval(Check):
    """P2 WriteApproval per execution: ``H(execute_w → Y(¬execute S approve))`` within each
    invocation, for every tool whose ground-truth side effect is write or delete: since the
    invocation's previous ``execute`` (if any) there was an ``approve``."""

    name = "write_approval"
    labels = ("approve", "execute")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.write = truth.write_tools
        self.approved: set[Any] = set()  # invocations approved since their last execute

    def handlers(self) -> dict[str, Handler]:
        return {"approve": self.on_approve, "execute": self.on_execute}

    def on_approve(self, ev: Any, raw: bytes) -> None:
        if ev.tool in self.write:
            self.approved.add(ev.inv)

    def on_execute(self, ev: Any, raw: bytes) -> None:
        if ev.tool not in self.write:
            return
        try:
            self.approved.remove(ev.inv)
        except KeyError:
            self.violation(
                f"execute (seq {ev.seq}) of {_where(ev)}, a write tool, with no approve since "
                "the invocation started or since its previous execute",
                self.ctx.history(ev.inv, raw),
                ev.seq,
                ev.wf,
            )

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        approved = self.approved
        if approved:
            for inv in invs:
                approved.discard(inv)


# --- requires_order (P4) -----------------------------------------------------------------


class _ReqState:
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
    labels = ("call", "invoke", "result", "execute")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.requires = {n: f.requires for n, f in truth.tools.items() if f.requires}
        self.targets = frozenset(t for r in self.requires.values() for t in r)
        self.static = truth.workflow_tools
        self.inst: dict[tuple[Any, Any], _ReqState] = {}

    def handlers(self) -> dict[str, Handler]:
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
        st = self._state(ev)
        tool = ev.tool
        tools = st.task_tools.get(ev.task)
        if tools is None:
            st.task_tools[ev.task] = {tool}
        else:
            tools.add(tool)
        if tool in self.targets and tool not in st.first_call:
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
        st = self._state(ev)
        st.succeeded.add(ev.tool)
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
                    f"execute (seq {ev.seq}) of {_where(ev)} without a successful result of "
                    f"{tj} before it ({ev.tool} Requires {tj}; {tj} is {why})",
                    [*([called] if called else []), *self.ctx.history(ev.inv, raw)],
                    ev.seq,
                    ev.wf,
                )
            else:
                st.deferred.setdefault(tj, []).append((ev.tool, raw, ev.seq))

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        self.inst.pop(key, None)


# --- exclusive (P4) ----------------------------------------------------------------------


class Exclusive(Check):
    """P4 ExclusiveWith: no instance executes both tools of a pair,
    ``H(execute_a → ¬O execute_b)`` per instance (the relation is symmetric)."""

    name = "exclusive"
    labels = ("execute",)

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.partners = {n: f.exclusive for n, f in truth.tools.items() if f.exclusive}
        self.inst: dict[tuple[Any, Any], dict[Any, bytes]] = {}

    def handlers(self) -> dict[str, Handler]:
        return {"execute": self.on_execute} if self.partners else {}

    def on_execute(self, ev: Any, raw: bytes) -> None:
        partners = self.partners.get(ev.tool)
        if not partners:
            return
        key = (ev.wf, ev.inst)
        done = self.inst.get(key)
        if done is None:
            done = self.inst[key] = {}
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

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        self.inst.pop(key, None)


# --- recovery (P3) -----------------------------------------------------------------------


class Recovery(Check):
    """P3 Tool_robust: each ``error(t)`` of a tool that declares ``(t, strategy)`` is
    followed, as the invocation's next protocol event, by that strategy: ``retry`` while
    fewer than n retries of t were taken (then ``abort``), ``fallback`` to the declared
    tool followed by a ``call`` of it in the same task, ``prompt``, or ``abort``."""

    name = "recovery"
    labels = ("error", "retry", "fallback", "prompt", "abort", "call")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.tools = truth.tools
        # inv → (wanted label, fallback tool or None, error type, strategy text, error raw)
        self.pending: dict[Any, tuple[str, Any, Any, str, bytes]] = {}
        self.retries: dict[Any, dict[Any, int]] = {}
        # (wf, inst) → task → (fallback tool, fallback raw)
        self.fallbacks: dict[tuple[Any, Any], dict[Any, tuple[Any, bytes]]] = {}

    def handlers(self) -> dict[str, Handler]:
        out: dict[str, Handler] = dict.fromkeys(PROTOCOL_LABELS - {"error"}, self.on_next)
        out["error"] = self.on_error
        out["call"] = self.on_call
        return out

    def on_error(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        if inv in self.pending:
            self._mismatch(ev, raw, self.pending.pop(inv))
        facts = self.tools.get(ev.tool)
        if facts is None:
            return
        err = ev.detail.error
        strategy = facts.recovery.get(err)
        if strategy is None:
            return
        if isinstance(strategy, Retry):
            used = self.retries.get(inv, {}).get(err, 0)
            want = "retry" if used < strategy.n else "abort"
            arg = None
        elif isinstance(strategy, Fallback):
            want, arg = "fallback", strategy.tool
        else:
            want = "prompt" if isinstance(strategy, UserPrompt) else "abort"
            arg = None
        self.pending[inv] = (want, arg, err, strategy_text(strategy), raw)

    def on_call(self, ev: Any, raw: bytes) -> None:
        if ev.inv in self.pending:
            self.on_next(ev, raw)
        by_task = self.fallbacks.get((ev.wf, ev.inst))
        if by_task:
            fb = by_task.get(ev.task)
            if fb is not None and fb[0] == ev.tool:
                del by_task[ev.task]

    def on_next(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        exp = self.pending.pop(inv, None) if self.pending else None
        if exp is not None:
            want, arg, err, _, _ = exp
            lab = ev.label
            if lab != want or (arg is not None and ev.detail.to not in (None, arg)):
                self._mismatch(ev, raw, exp)
            elif lab == "retry":
                used = self.retries.get(inv)
                if used is None:
                    used = self.retries[inv] = {}
                used[err] = used.get(err, 0) + 1
            elif lab == "fallback":
                key = (ev.wf, ev.inst)
                by_task = self.fallbacks.get(key)
                if by_task is None:
                    by_task = self.fallbacks[key] = {}
                by_task[ev.task] = (arg, raw)
        if ev.label in TERMINAL and self.retries:
            self.retries.pop(inv, None)

    def _mismatch(self, ev: Any, raw: bytes, exp: tuple[str, Any, Any, str, bytes]) -> None:
        want, arg, err, strategy, _ = exp
        wanted = f"fallback({arg})" if want == "fallback" else want
        self.violation(
            f"error {err} of {_where(ev)} declares {strategy}: the next event should be "
            f"{wanted}, not {ev.label} (seq {ev.seq})",
            self.ctx.history(ev.inv, raw),
            ev.seq,
            ev.wf,
        )

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        pending = self.pending
        if pending:
            for inv in invs:
                exp = pending.pop(inv, None)
                if exp is not None:
                    self._missing(inv, exp, key)
        if self.retries:
            for inv in invs:
                self.retries.pop(inv, None)
        by_task = self.fallbacks.pop(key, None)
        for task, (tool, raw) in (by_task or {}).items():
            seq = raw_to_dict(raw).get("seq", -1)
            self.violation(
                f"fallback to {tool} (seq {seq}) in task {task} of instance {key[0]}#{key[1]} "
                f"was never followed by a call of {tool}",
                [raw],
                seq if isinstance(seq, int) else -1,
                key[0],
            )

    def _missing(self, inv: Any, exp: tuple[str, Any, Any, str, bytes], key: Any) -> None:
        want, arg, err, strategy, raw = exp
        seq = raw_to_dict(raw).get("seq", -1)
        wanted = f"fallback({arg})" if want == "fallback" else want
        where = "its instance ended" if key is not None else "the trace ended"
        self.violation(
            f"error {err} (seq {seq}) of invocation {inv} declares {strategy}, but {where} "
            f"without the {wanted} it calls for",
            self.ctx.history(inv, raw),
            seq if isinstance(seq, int) else -1,
            raw_to_dict(raw).get("wf"),
        )

    def finish(self, examined: int) -> Verdict:
        for inv, exp in list(self.pending.items()):
            self._missing(inv, exp, None)
        self.pending.clear()
        for key in list(self.fallbacks):
            self.end_instance(key, [])
        return super().finish(examined)


# --- lts ---------------------------------------------------------------------------------

_BROKEN = None  # an invocation already reported: its later events are not counted again
_ABSENT: Any = object()


class LtsReplay(Check):
    """Each invocation's protocol labels form a trace of its tool's ground-truth LTS
    (``validate`` is the LTS's τ; SGD ``approve`` is ``confirm``): replayed step by step.
    A scenario tool's invocation opened by ``invoke`` replays on its ``sgd`` dialect."""

    name = "lts"
    labels = tuple(sorted(PROTOCOL_LABELS))

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.tools = truth.tools
        self.state: dict[Any, tuple[ToolFacts, list[tuple[LTS, int]]] | None] = {}
        self._labels: dict[tuple[str, bool, str, Any], str | None] = {}

    def handlers(self) -> dict[str, Handler]:
        out: dict[str, Handler] = dict.fromkeys(PROTOCOL_LABELS, self.on_step)
        out["call"] = out["invoke"] = self.on_open
        return out

    def _label(self, facts: ToolFacts, ev: Any) -> str | None:
        lab = ev.label
        plain = facts.plain.get(lab)
        if plain is not None:
            return plain
        d = ev.detail
        arg = d.error if lab == "error" else d.to if lab == "fallback" else d.slot
        key = (facts.name, facts.sgd, lab, arg)
        hit = self._labels.get(key, "")
        if hit != "":
            return hit
        out: str | None = None
        if isinstance(arg, str) and lab in ("error", "fallback", "collect"):
            try:
                if lab == "collect":
                    out = label("collect", arg) if facts.sgd else None
                else:
                    out = label(lab, facts.name, arg)
            except ValueError:
                out = None
        self._labels[key] = out
        return out

    def on_open(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        if inv in self.state:
            if self.state[inv] is not _BROKEN:
                self._fail(ev, raw, f"a second {ev.label} in {_where(ev)}")
            return
        facts = self.tools.get(ev.tool)
        if facts is None:
            self._fail(ev, raw, f"{ev.label} of {ev.tool!r}, a tool the ground truth does not have")
            return
        if ev.label == "invoke" and facts.sgd_dialect is not None:
            facts = facts.sgd_dialect
        lab = facts.plain.get(ev.label)
        cands = [(m, s) for m in facts.ltss if (s := m.step(m.initial, lab or "")) is not None]
        if not cands:
            self._fail(ev, raw, f"{_where(ev)} cannot start with {ev.label}")
            return
        self.state[inv] = (facts, cands)

    def on_step(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        st = self.state.get(inv, _ABSENT)
        if st is _ABSENT:
            self._fail(
                ev,
                raw,
                f"{ev.label} (seq {ev.seq}) of invocation {inv} of {ev.tool}, "
                "which no call or invoke opened (or which was over)",
            )
            return
        if st is _BROKEN:
            return
        facts, cands = st
        lab = facts.plain.get(ev.label) or self._label(facts, ev)
        new = []
        if lab is not None:
            for m, s0 in cands:
                s = m.step(s0, lab)
                if s is not None:
                    new.append((m, s))
        if not new:
            m, s0 = cands[0]
            enabled = ", ".join(sorted({a for c, s in cands for a, _ in c.enabled(s)})) or "none"
            self._fail(
                ev,
                raw,
                f"{_where(ev)}: {lab or ev.label} (seq {ev.seq}) is not enabled "
                f"in state {m.name(s0)} of the ground-truth LTS (enabled: "
                f"{enabled})",
            )
            return
        if ev.label in TERMINAL:
            del self.state[inv]
        else:
            self.state[inv] = (facts, new)

    def _fail(self, ev: Any, raw: bytes, message: str) -> None:
        self.state[ev.inv] = _BROKEN
        self.violation(message, self.ctx.history(ev.inv, raw), ev.seq, ev.wf)

    def end_instance(self, key: tuple[Any, Any], invs: list[Any]) -> None:
        state = self.state
        for inv in invs:
            state.pop(inv, None)


# --- conservation ------------------------------------------------------------------------


class Conservation(Check):
    """Every ``send`` ends in exactly one ``deliver`` or one ``drop`` with a reason
    (per ``detail.msg``); a drop without ``msg`` is lost work at a server, not a message."""

    name = "conservation"
    labels = ("send", "deliver", "drop")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.open: dict[Any, bytes] = {}
        self.sends = 0
        self.orphans = 0
        self._orphan: tuple[str, bytes, int, Any] | None = None

    def handlers(self) -> dict[str, Handler]:
        return {"send": self.on_send, "deliver": self.on_end, "drop": self.on_end}

    def on_send(self, ev: Any, raw: bytes) -> None:
        self.sends += 1
        m = ev.detail.msg
        if m is None:
            self.violation(f"send (seq {ev.seq}) without detail.msg", [raw], ev.seq, ev.wf)
            return
        if m in self.open:
            self.violation(
                f"message {m} sent twice (seq {ev.seq})", [self.open[m], raw], ev.seq, ev.wf
            )
        self.open[m] = raw

    def on_end(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        m = d.msg
        if m is None:
            return
        if ev.label == "drop" and not d.reason:
            self.violation(
                f"drop of message {m} (seq {ev.seq}) without a reason", [raw], ev.seq, ev.wf
            )
        sent = self.open.pop(m, None)
        if sent is None:
            self.orphans += 1
            if self._orphan is None:
                self._orphan = (
                    f"{ev.label} of message {m} (seq {ev.seq}) that is not in flight: never "
                    "sent, or already delivered or dropped",
                    raw,
                    ev.seq,
                    ev.wf,
                )

    def finish(self, examined: int) -> Verdict:
        if self.sends == 0:
            self.note = "no send events (trace level protocol or off): nothing to conserve"
            return Verdict(self.name, 0, 0, note=self.note, applicable=False)
        if self._orphan is not None:
            message, raw, seq, wf = self._orphan
            self.violation(message, [raw], seq, wf)
            self.violations += self.orphans - 1
        if self.open:
            m, raw = next(iter(self.open.items()))  # the earliest send still open
            seq = raw_to_dict(raw).get("seq", -1)
            self.violation(
                f"message {m} sent (seq {seq}) never ends in a deliver or a drop"
                + (f" (nor do {len(self.open) - 1} more)" if len(self.open) > 1 else ""),
                [raw],
                seq if isinstance(seq, int) else -1,
            )
            self.violations += len(self.open) - 1
        return super().finish(examined)


# --- route_validity ----------------------------------------------------------------------


class RouteValidity(Check):
    """Every hop leaves an up node over an up link in a protocol of that link; every
    translation happens at an up node between protocols it speaks (each step of a chain);
    nothing is sent or delivered at a down node. Up/down state comes from the trace's
    ``node_down``/``node_up``/``link_down``/``link_up``."""

    name = "route_validity"
    labels = ("hop", "translate", "send", "deliver", "node_down", "node_up", "link_down", "link_up")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.links: dict[tuple[Any, Any], frozenset[str]] = {}
        for ends, protos in truth.links.items():
            a, b = sorted(ends) if len(ends) == 2 else (*ends, *ends)
            self.links[(a, b)] = self.links[(b, a)] = protos
        self.valid = frozenset((a, b, p) for (a, b), ps in self.links.items() for p in ps)
        self.speaks = truth.speaks
        self.down: set[Any] = set()
        self.down_links: set[tuple[Any, Any]] = set()

    def handlers(self) -> dict[str, Handler]:
        return {
            "hop": self.on_hop,
            "translate": self.on_translate,
            "send": self.on_at,
            "deliver": self.on_at,
            "node_down": self.on_node_down,
            "node_up": self.on_node_up,
            "link_down": self.on_link_down,
            "link_up": self.on_link_up,
        }

    def on_hop(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        a = d.frm if d.frm is not None else ev.agent
        b = d.to
        p = d.proto if d.proto is not None else ev.proto
        try:
            if (a, b, p) in self.valid and not self.down and not self.down_links:
                return  # the common case: a valid hop while everything is up
            protos = self.links.get((a, b))
        except TypeError:  # unhashable values
            protos = None
        problem = ""
        if protos is None:
            problem = f"there is no link {a}–{b}"
        elif p not in protos:
            problem = f"link {a}–{b} does not carry {p} (it carries {', '.join(sorted(protos))})"
        elif a in self.down:
            problem = f"node {a} is down"
        elif (a, b) in self.down_links:
            problem = f"link {a}–{b} is down"
        if problem:
            self.violation(
                f"hop (seq {ev.seq}) of message {d.msg} from {a} to {b} in {p}: {problem}",
                [raw],
                ev.seq,
                ev.wf,
            )

    def on_translate(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        at = d.at if d.at is not None else ev.agent
        speaks = self.speaks.get(at) if isinstance(at, str) else None
        chain = d.chain if isinstance(d.chain, list) and d.chain else [d.from_proto, d.to_proto]
        problem = ""
        if speaks is None:
            problem = f"{at} is not an agent of the scenario"
        else:
            bad = [p for p in (d.from_proto, d.to_proto, *chain) if p not in speaks]
            if bad:
                problem = f"{at} does not speak {', '.join(sorted(map(str, set(bad))))}"
            elif self.down and at in self.down:
                problem = f"node {at} is down"
        if problem:
            self.violation(
                f"translate (seq {ev.seq}) {d.from_proto} → {d.to_proto} at {at}: {problem}",
                [raw],
                ev.seq,
                ev.wf,
            )

    def on_at(self, ev: Any, raw: bytes) -> None:
        if self.down and ev.agent in self.down:
            self.violation(
                f"{ev.label} (seq {ev.seq}) at {ev.agent}, which is down", [raw], ev.seq, ev.wf
            )

    def on_node_down(self, ev: Any, raw: bytes) -> None:
        self.down.add(ev.agent)

    def on_node_up(self, ev: Any, raw: bytes) -> None:
        self.down.discard(ev.agent)

    def _link(self, ev: Any) -> tuple[Any, Any] | None:
        link = ev.detail.link
        if isinstance(link, list) and len(link) == 2:
            return (link[0], link[1])
        return None

    def on_link_down(self, ev: Any, raw: bytes) -> None:
        link = self._link(ev)
        if link is not None:
            self.down_links.add(link)
            self.down_links.add((link[1], link[0]))

    def on_link_up(self, ev: Any, raw: bytes) -> None:
        link = self._link(ev)
        if link is not None:
            self.down_links.discard(link)
            self.down_links.discard((link[1], link[0]))


ALL_CHECKS: dict[str, type[Check]] = {
    "write_approval": WriteApproval,
    "requires_order": RequiresOrder,
    "exclusive": Exclusive,
    "recovery": Recovery,
    "lts": LtsReplay,
    "conservation": Conservation,
    "route_validity": RouteValidity,
}
#: The checks that apply to SGD dialogues (no workflows, no transport).
SGD_CHECKS: tuple[str, ...] = ("write_approval", "lts", "recovery")


# --- the driver ----------------------------------------------------------------------------


def check_trace(
    source: str | Path | Iterable[bytes | str | dict[str, Any]],
    truth: Scenario | Truth,
    checks: Iterable[str] | None = None,
    ordered: bool | None = None,
) -> Report:
    """Run the checks (default: all seven) over a trace file or an iterable of lines /
    event dicts, parsing each line once. Raises :class:`TraceError` on a malformed line,
    an unknown label, and, when ``ordered``, on a line out of order (SPEC §5: ``t`` never
    decreases, ``seq`` increases). ``ordered`` defaults to True for a trace file and False
    for an iterable (SGD dialogues converted to events restart ``t`` at each dialogue)."""
    if ordered is None:
        ordered = isinstance(source, (str, Path))
    if isinstance(truth, Scenario):
        truth = from_scenario(truth)
    names = tuple(checks) if checks is not None else CHECK_NAMES
    unknown = [n for n in names if n not in ALL_CHECKS]
    if unknown:
        raise ValueError(f"unknown check(s): {', '.join(unknown)}; known: {', '.join(CHECK_NAMES)}")
    ctx = Context()
    active = [ALL_CHECKS[n](truth, ctx) for n in names]
    table: dict[str, list[Handler]] = {}
    for c in active:
        for lab, h in c.handlers().items():
            table.setdefault(lab, []).append(h)
    enders: list[Callable[[tuple[Any, Any], list[Any]], None]] = [
        c.end_instance for c in active if type(c).end_instance is not Check.end_instance
    ]
    name, blocks = read_blocks(source)
    started = time.perf_counter()
    counts = _run(name, blocks, table, enders, ctx, ordered)
    seconds = time.perf_counter() - started
    verdicts = [c.finish(sum(counts.get(lab, 0) for lab in c.labels)) for c in active]
    return Report(
        name, sum(counts.values()), verdicts, seconds, truth.source, counts.get("wf_start", 0)
    )


def _fanout(handlers: list[Handler]) -> Handler:
    if len(handlers) == 1:
        return handlers[0]
    hs = tuple(handlers)

    def call_all(ev: Any, raw: bytes) -> None:
        for h in hs:
            h(ev, raw)

    return call_all


def _noop(ev: Any, raw: bytes) -> None:
    return None


def _disorder(key: str, value: Any, previous: Any) -> str:
    how = "smaller than" if key == "t" else "not larger than"
    return (
        f"not in time order: `{key}` {value!r} is {how} the previous event's {previous!r} "
        "(SPEC §5: a trace is in time order, with increasing seq)"
    )


def _unknown_label(lab: Any) -> str:
    return f"unknown label {lab!r} (not a SPEC §5 label: {', '.join(sorted(LABELS))})"


def _run(
    name: str,
    blocks: Iterable[list[bytes]],
    table: dict[str, list[Handler]],
    enders: list[Callable[[tuple[Any, Any], list[Any]], None]],
    ctx: Context,
    ordered: bool = False,
) -> dict[str, int]:
    fast = decoder()
    hist = ctx.hist
    by_inst: dict[tuple[Any, Any], list[Any]] = {}
    counts: dict[str, int] = {}
    handler = {lab: _fanout(hs) for lab, hs in table.items() if hs}
    # 1: a protocol label (invocation history), 2: wf_end (end of instance), else 0
    kind = dict.fromkeys(PROTOCOL_LABELS, 1)
    kind["wf_end"] = 2
    kind_of = kind.get
    handler_of = handler.get
    opening = OPENING
    terminal = TERMINAL
    noop = _noop
    lineno = 0
    last_seq = -(1 << 63)
    last_t = -float("inf")
    was_enabled = gc.isenabled()
    gc.disable()  # the checks build no reference cycles; collections would only cost
    try:
        for block in blocks:
            for raw in block:
                lineno += 1
                try:
                    ev = fast(raw)
                except Exception:
                    if not raw.strip():
                        continue
                    ev = decode_line(raw, name, lineno, fast)
                # SPEC §5 order: two comparisons per event (t may be None: TypeError)
                seq = ev.seq
                if seq <= last_seq and ordered:
                    raise TraceError(name, lineno, _disorder("seq", seq, last_seq))
                last_seq = seq
                t = ev.t
                try:
                    if t < last_t and ordered:
                        raise TraceError(name, lineno, _disorder("t", t, last_t))
                    last_t = t
                except TypeError:
                    pass
                lab = ev.label
                try:
                    counts[lab] += 1
                except KeyError:
                    if lab not in LABELS:
                        raise TraceError(name, lineno, _unknown_label(lab)) from None
                    counts[lab] = 1
                k = kind_of(lab)
                if k is None:
                    handler_of(lab, noop)(ev, raw)
                elif k == 1:
                    inv = ev.inv
                    h = hist.get(inv)
                    if h is None or lab in opening:
                        hist[inv] = [raw]
                        key = (ev.wf, ev.inst)
                        opened = by_inst.get(key)
                        if opened is None:
                            by_inst[key] = [inv]
                        else:
                            opened.append(inv)
                    elif len(h) < HISTORY_CAP:
                        h.append(raw)
                    else:
                        del h[1 : HISTORY_CAP // 2]
                        h.append(raw)
                    handler_of(lab, noop)(ev, raw)
                    if lab in terminal:
                        hist.pop(inv, None)
                else:
                    handler_of(lab, noop)(ev, raw)
                    key = (ev.wf, ev.inst)
                    invs = by_inst.pop(key, [])
                    for end in enders:
                        end(key, invs)
                    for inv in invs:
                        hist.pop(inv, None)
    finally:
        if was_enabled:
            gc.enable()
    return counts


def check_run_dir(rep_dir: str | Path, scenario: Scenario | Truth) -> dict[str, Any]:
    """The verdicts of ``rep_dir/trace.jsonl``, as keys to merge into its ``metrics.json``:
    ``violations`` (check → count), ``violations_per_1000_instances`` and ``conformance``
    (ok, events, instances, per check examined / violations / first counterexample's seqs
    and message). Raises :class:`TraceError` if the trace cannot be read.

    Nothing checked is never reported as "all hold": an empty trace (trace level ``off``)
    gives ``conformance.ok`` None, ``checked`` False and empty ``violations`` /
    ``violations_per_1000_instances``; a check that was not applicable (``conservation``
    with no ``send`` events, trace level ``protocol``) has None as its count and rate, and
    every rate is None when the trace holds no workflow instance."""
    report = check_trace(Path(rep_dir) / "trace.jsonl", scenario)
    if report.events == 0:
        return {
            "violations": {},
            "violations_per_1000_instances": {},
            "conformance": {
                "ok": None,
                "checked": False,
                "note": NOT_CHECKED_NOTE,
                "events": 0,
                "instances": 0,
                "checks": {},
            },
        }
    per = report.instances / 1000.0
    return {
        "violations": {v.name: (v.violations if v.applicable else None) for v in report.verdicts},
        "violations_per_1000_instances": {
            v.name: (round(v.violations / per, 6) if v.applicable and per else None)
            for v in report.verdicts
        },
        "conformance": {
            "ok": report.ok,
            "checked": True,
            "events": report.events,
            "instances": report.instances,
            "checks": {
                v.name: {
                    "examined": v.examined,
                    "violations": v.violations if v.applicable else None,
                    **({"applicable": False} if not v.applicable else {}),
                    **({"note": v.note} if v.note else {}),
                    **(
                        {
                            "first": {
                                "message": v.message,
                                "seqs": [e.get("seq") for e in v.counterexample],
                            }
                        }
                        if v.violations
                        else {}
                    ),
                }
                for v in report.verdicts
            },
        },
    }


__all__ = [
    "ALL_CHECKS",
    "CHECK_NAMES",
    "SGD_CHECKS",
    "Check",
    "Report",
    "TraceError",
    "Verdict",
    "check_run_dir",
    "check_trace",
    "encode_event",
]
