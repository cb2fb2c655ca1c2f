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
#: A candidate LTS of an invocation: its step table (per state, label → the first
#: successor), the invocation's state in it, the LTS.
Cand = tuple[tuple[dict[str, int], ...], int, LTS]


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
        # inv → (facts, candidates), or _BROKEN once reported
        self.state: dict[Any, tuple[ToolFacts, list[Cand]] | None] = {}
        self._starts: dict[tuple[int, str], tuple[Cand, ...]] = {}
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

    def _start(self, facts: ToolFacts, opening: str) -> tuple[Cand, ...]:
        """The candidates of an invocation of ``facts`` opened by ``opening``: each LTS
        (with its step table: ``LTS.step`` as one dict per state) after that label."""
        key = (id(facts), opening)  # by identity: facts and LTSs live as long as truth
        hit = self._starts.get(key)
        if hit is None:
            lab = facts.plain.get(opening) or ""
            out = []
            for m in facts.ltss:
                s = m.step(m.initial, lab)
                if s is not None:
                    table = tuple(
                        {a: dst for a, dst in reversed(m.enabled(q))} for q in range(m.n_states)
                    )
                    out.append((table, s, m))
            hit = self._starts[key] = tuple(out)
        return hit

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
        cands = self._start(facts, ev.label)
        if not cands:
            self._fail(ev, raw, f"{where(ev)} cannot start with {ev.label}")
            return
        self.state[inv] = (facts, list(cands))

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
        evlab = ev.label
        lab = facts.plain.get(evlab) or self._label(facts, ev)
        if lab is not None and len(cands) == 1:  # the common case: one candidate LTS
            table, s0, m = cands[0]
            s = table[s0].get(lab)
            if s is not None:
                if evlab in TERMINAL:
                    del self.state[inv]
                else:
                    cands[0] = (table, s, m)
                return
        new = []
        if lab is not None:
            for table, s0, m in cands:
                s = table[s0].get(lab)
                if s is not None:
                    new.append((table, s, m))
        if not new:
            _, s0, m = cands[0]
            enabled = ", ".join(sorted({a for _, q, c in cands for a, _ in c.enabled(q)}))
            self._fail(
                ev,
                raw,
                f"{where(ev)}: {lab or evlab} (seq {ev.seq}) is not enabled "
                f"in state {m.name(s0)} of the ground-truth LTS (enabled: "
                f"{enabled or 'none'})",
            )
            return
        if evlab in TERMINAL:
            del self.state[inv]
        else:
            self.state[inv] = (facts, new)

    def _fail(self, ev: Any, raw: bytes, message: str) -> None:
        self.state[ev.inv] = _BROKEN
        self.violation(message, self.ctx.history(ev.inv, raw), ev.seq, ev.wf)

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        state = self.state
        for inv in invs:
            state.pop(inv, None)
