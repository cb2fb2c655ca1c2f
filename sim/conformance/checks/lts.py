"""``lts``: each invocation's protocol labels replayed on its tool's ground-truth LTS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.calculus.lts import LTS, label
from sim.conformance.checks.base import (
    OPENING,
    TERMINAL,
    Check,
    Context,
    Handler,
    InstanceKey,
    where,
)
from sim.conformance.events import LABEL_IDS, PROTOCOL_LABELS
from sim.conformance.truth import ToolFacts, Truth

_BROKEN = None  # an invocation already reported: its later events are not counted again
_ABSENT: Any = object()
#: A candidate LTS of an invocation: its step table (per state, label → the first
#: successor), the invocation's state in it, the LTS.
Cand = tuple[tuple[dict[str, int], ...], int, LTS]


class Config:
    """Where an invocation is: its tool's facts and its candidates (each candidate LTS
    still accepting its labels, with its state there), shared by every invocation in the
    same place. ``row[i]``: the configuration after trace label ``i`` (a
    :data:`~sim.conformance.events.LABEL_IDS` id) when that label has no argument and
    was seen enabled here (``None``: not seen yet, or not enabled); the pass steps an
    invocation through it without calling :meth:`LtsReplay.on_step`."""

    __slots__ = ("cands", "facts", "row")

    def __init__(self, facts: ToolFacts, cands: tuple[Cand, ...]) -> None:
        self.facts = facts
        self.cands = cands
        self.row: list[Config | None] = [None] * len(LABEL_IDS)


class LtsReplay(Check):
    """Each invocation's protocol labels form a trace of its tool's ground-truth LTS
    (``validate`` is the LTS's τ; SGD ``approve`` is ``confirm``): replayed step by step.
    A scenario tool's invocation replays on its LTS in the dialect of its protocol
    (:meth:`~sim.conformance.truth.Truth.dialect_of`).

    ``state`` (inv → :class:`Config`, or ``None`` once reported) and ``opened`` (opening
    label → tool → the configuration an invocation starts in, when that label opens one
    dialect whatever the protocol) are mutated in place, never rebound: the pass's loop
    holds them."""

    name = "lts"
    labels: tuple[str, ...] = tuple(sorted(PROTOCOL_LABELS))
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.tools = truth.tools
        self.truth = truth
        self._shared = {o: truth.shared_opening(o) for o in OPENING}
        self.state: dict[Any, Config | None] = {}
        self.opened: dict[str, dict[Any, Config]] = {"call": {}, "invoke": {}}
        self._starts: dict[tuple[int, str], tuple[Cand, ...]] = {}
        self._configs: dict[tuple[Any, ...], Config] = {}
        self._labels: dict[tuple[str, bool, str, Any], str | None] = {}

    def handlers(self) -> Mapping[str, Handler]:
        out: dict[str, Handler] = {
            lab: self.stepper(LABEL_IDS[lab], lab in TERMINAL) for lab in PROTOCOL_LABELS
        }
        out["call"] = self.opener(self.opened["call"])
        out["invoke"] = self.opener(self.opened["invoke"])
        return out

    def stepper(self, i: int, terminal: bool) -> Handler:
        """The handler of protocol label id ``i``: an invocation in a configuration that
        has stepped by it before takes its ``row`` (a dict lookup, no call); anything
        else is :meth:`on_step`."""
        state, slow = self.state, self.on_step

        def step(ev: Any, raw: bytes) -> None:
            inv = ev.inv
            try:
                nxt = state[inv].row[i]  # type: ignore[union-attr]
            except (KeyError, AttributeError):  # not open, or already reported
                nxt = None
            if nxt is None:
                slow(ev, raw)
            elif terminal:
                del state[inv]
            else:
                state[inv] = nxt

        return step

    def opener(self, opened: dict[Any, Config]) -> Handler:
        """The handler of an opening label: a fresh invocation of a tool opened before by
        the same label starts in that tool's configuration; anything else is
        :meth:`on_open`."""
        state, slow = self.state, self.on_open

        def start(ev: Any, raw: bytes) -> None:
            inv = ev.inv
            cfg = None if inv in state else opened.get(ev.tool)
            if cfg is None:
                slow(ev, raw)
            else:
                state[inv] = cfg

        return start

    def _label(self, facts: ToolFacts, ev: Any) -> str | None:
        lab = ev.label
        plain = facts.plain.get(lab)
        if plain is not None:
            return plain
        d = ev.detail
        arg = d.error if lab == "error" else d.to if lab == "fallback" else d.slot
        key = (facts.name, facts.collects, lab, arg)
        hit = self._labels.get(key, "")
        if hit != "":
            return hit
        out: str | None = None
        if isinstance(arg, str) and lab in ("error", "fallback", "collect"):
            try:
                if lab == "collect":
                    out = label("collect", arg) if facts.collects else None
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

    def _config(self, facts: ToolFacts, cands: Sequence[Cand]) -> Config:
        """The one configuration of ``facts`` with these candidates (tables by identity:
        they live as long as the check)."""
        key = (id(facts), *((id(table), s) for table, s, _ in cands))
        hit = self._configs.get(key)
        if hit is None:
            hit = self._configs[key] = Config(facts, tuple(cands))
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
        if facts.dialects:
            facts = facts.dialects[self.truth.dialect_of(ev.proto, ev.label)]
        cands = self._start(facts, ev.label)
        if not cands:
            self._fail(ev, raw, f"{where(ev)} cannot start with {ev.label}")
            return
        cfg = self.state[inv] = self._config(facts, cands)
        if self._shared[ev.label]:  # the start depends on the tool and the label only
            self.opened[ev.label][ev.tool] = cfg

    def on_step(self, ev: Any, raw: bytes) -> None:
        inv = ev.inv
        cfg = self.state.get(inv, _ABSENT)
        if cfg is _ABSENT:
            self._fail(
                ev,
                raw,
                f"{ev.label} (seq {ev.seq}) of invocation {inv} of {ev.tool}, "
                "which no call or invoke opened (or which was over)",
            )
            return
        if cfg is _BROKEN:
            return
        facts, cands = cfg.facts, cfg.cands
        evlab = ev.label
        plain = facts.plain.get(evlab)
        lab = plain or self._label(facts, ev)
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
        nxt = self._config(facts, new)
        if plain:  # a label without an argument: the step depends on it alone
            cfg.row[LABEL_IDS[evlab]] = nxt
        if evlab in TERMINAL:
            del self.state[inv]
        else:
            self.state[inv] = nxt

    def _fail(self, ev: Any, raw: bytes, message: str) -> None:
        self.state[ev.inv] = _BROKEN
        self.violation(message, self.ctx.history(ev.inv, raw), ev.seq, ev.wf)

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        state = self.state
        for inv in invs:
            state.pop(inv, None)
