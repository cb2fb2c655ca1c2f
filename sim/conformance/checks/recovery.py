"""``recovery``: P3 Tool_robust, each declared error followed by its strategy (SPEC §6.3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from typing import Any

from sim.calculus.mcp import Fallback, Retry, UserPrompt
from sim.conformance.checks.base import TERMINAL, Check, Context, Handler, InstanceKey, where
from sim.conformance.checks.verdict import Verdict
from sim.conformance.events import PROTOCOL_LABELS, raw_to_dict
from sim.conformance.truth import Truth, strategy_text


class Recovery(Check):
    """P3 Tool_robust: each ``error(t)`` of a tool that declares ``(t, strategy)`` is
    followed, as the invocation's next protocol event, by that strategy: ``retry`` while
    fewer than n retries of t were taken (then ``abort``), ``fallback`` to the declared
    tool followed by a ``call`` of it in the same task, ``prompt``, or ``abort``."""

    name = "recovery"
    labels: tuple[str, ...] = ("error", "retry", "fallback", "prompt", "abort", "call")
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.tools = truth.tools
        # inv → (wanted label, fallback tool or None, error type, strategy text, error raw)
        self.pending: dict[Any, tuple[str, Any, Any, str, bytes]] = {}
        self.retries: dict[Any, dict[Any, int]] = {}
        # (wf, inst) → task → (fallback tool, fallback raw)
        self.fallbacks: dict[tuple[Any, Any], dict[Any, tuple[Any, bytes]]] = {}

    def handlers(self) -> Mapping[str, Handler]:
        out: dict[str, Handler] = dict.fromkeys(PROTOCOL_LABELS - {"error"}, self.on_next)
        out["error"] = self.on_error
        out["call"] = self.on_call
        return out

    def gates(self) -> Mapping[str, Sized]:
        # a label that ends no invocation: on_next has nothing to do while no error waits
        return dict.fromkeys(PROTOCOL_LABELS - TERMINAL - {"error", "call"}, self.pending)

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
        if not self.pending:  # the common case: no error awaits its strategy
            if self.retries and ev.label in TERMINAL:
                self.retries.pop(ev.inv, None)
            return
        inv = ev.inv
        exp = self.pending.pop(inv, None)
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
            f"error {err} of {where(ev)} declares {strategy}: the next event should be "
            f"{wanted}, not {ev.label} (seq {ev.seq})",
            self.ctx.history(ev.inv, raw),
            ev.seq,
            ev.wf,
        )

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
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
