"""``lts``: each invocation's protocol labels replayed on its tool's ground-truth LTS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.calculus.lts import LTS, label
from sim.conformance.checks.base import TERMINAL, Check, Context, Handler, InstanceKey, where
from sim.conformance.events import PROTOCOL_LABELS
from sim.conformance.truth import ToolFacts, Truth

_BROKEN = None  # an invocation already reported: its later events are not counted again
_ABSENT: Any = object()


class LtsReplay(Check):
    """Each invocation's protocol labels form a trace of its tool's ground-truth LTS
    (``validate`` is the LTS's τ; SGD ``approve`` is ``confirm``): replayed step by step.
    A scenario tool's invocation opened by ``invoke`` replays on its ``sgd`` dialect."""

    name = "lts"
    labels = tuple(sorted(PROTOCOL_LABELS))
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.tools = truth.tools
        # inv → (facts, candidate (LTS, state)s, the step table and state when there is
        # one candidate; else None, 0), or _BROKEN
        self.state: dict[Any, tuple[ToolFacts, list[tuple[LTS, int]], Any, int] | None] = {}
        self._tables: dict[int, tuple[dict[str, int], ...]] = {}  # the LTSs live in truth
        self._labels: dict[tuple[str, bool, str, Any], str | None] = {}

    def handlers(self) -> Mapping[str, Handler]:
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

    def _steps(self, m: LTS) -> tuple[dict[str, int], ...]:
        """``m``'s (first) successor of each state per label: ``LTS.step`` as a table."""
        table = self._tables.get(id(m))  # by identity: an LTS hashes its transitions
        if table is None:
            table = self._tables[id(m)] = tuple(
                {lab: dst for lab, dst in reversed(m.enabled(s))} for s in range(m.n_states)
            )
        return table

    def on_open(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        if inv in self.state:
            if self.state[inv] is not _BROKEN:
                self._fail(ev, raw, f"a second {ev.label} in {where(ev)}")
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
            self._fail(ev, raw, f"{where(ev)} cannot start with {ev.label}")
            return
        if len(cands) == 1:
            m, s = cands[0]
            self.state[inv] = (facts, cands, self._steps(m), s)
        else:
            self.state[inv] = (facts, cands, None, 0)

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
        facts, cands, table, s0 = st
        evlab = ev.label
        lab = facts.plain.get(evlab) or self._label(facts, ev)
        if table is not None:  # the common case: one candidate LTS, stepped by its table
            s = table[s0].get(lab) if lab is not None else None
            if s is not None:
                if evlab in TERMINAL:
                    del self.state[inv]
                else:
                    self.state[inv] = (facts, cands, table, s)
                return
            cands = [(cands[0][0], s0)]
        new = []
        if lab is not None:
            for m, c0 in cands:
                s = m.step(c0, lab)
                if s is not None:
                    new.append((m, s))
        if not new:
            m, s0 = cands[0]
            enabled = ", ".join(sorted({a for c, s in cands for a, _ in c.enabled(s)})) or "none"
            self._fail(
                ev,
                raw,
                f"{where(ev)}: {lab or evlab} (seq {ev.seq}) is not enabled "
                f"in state {m.name(s0)} of the ground-truth LTS (enabled: "
                f"{enabled})",
            )
            return
        if evlab in TERMINAL:
            del self.state[inv]
        elif len(new) == 1:
            self.state[inv] = (facts, new, self._steps(new[0][0]), new[0][1])
        else:
            self.state[inv] = (facts, new, None, 0)

    def _fail(self, ev: Any, raw: bytes, message: str) -> None:
        self.state[ev.inv] = _BROKEN
        self.violation(message, self.ctx.history(ev.inv, raw), ev.seq, ev.wf)

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        state = self.state
        for inv in invs:
            state.pop(inv, None)
