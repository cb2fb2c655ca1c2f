"""The streaming monitor of SPEC §9: every property on the trace of every scope, one pass.

Feed it each event once, in trace order (:meth:`Monitor.step`), then :meth:`Monitor.finish`.
Scopes: ``invocation`` (events with that ``inv``), ``instance`` (events with that
``(wf, inst)``), ``run`` (every event). An instance's scope closes at its ``wf_end``; an
invocation's scope closes at the ``wf_end`` of its instance (the engine writes no event
of an invocation after its instance ended; one that came later would open a new scope);
scopes still open, and the run, close at the end of the trace.

Two ways to evaluate, chosen per property from its shape:

- *online*: a conjunction of ``G[<=b] ψ`` and ``ψ`` with ψ past-only: each scope keeps
  the O(|ψ|) :class:`~sim.properties.semantics.PastState`; a violation is certain at the
  event where ψ fails, and the scope stops being evaluated there.
- *at scope end*: any other formula: the scope keeps each event's atom mask and time
  (two numbers per event), and :func:`~sim.properties.semantics.evaluate` runs backwards
  over them when the scope closes; the buffer is freed then.

Memory: per open scope, the evaluation state above and at most :data:`HEAD` + :data:`TAIL`
raw lines for a counterexample; never per event of the trace beyond the open scopes.
"""

from __future__ import annotations

import json
import operator
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.properties.ast import Atom, Binary, Formula, Unary, is_past
from sim.properties.labels import LABEL_KEYS
from sim.properties.parse import ToolAttributes
from sim.properties.semantics import PastState, Program, compile_formula, evaluate, past_runner
from sim.vocabulary.counterexamples import Counterexample, Earliest
from sim.vocabulary.verdicts import Verdict

#: Scope kinds (SPEC §9).
SCOPES: tuple[str, ...] = ("invocation", "instance", "run")
#: Counterexample lines kept per scope: the first HEAD and the latest TAIL.
HEAD = 16
TAIL = 48
#: Field-value combinations whose atom mask is remembered, per label.
MASK_CAP = 1 << 14


@dataclass(frozen=True, slots=True)
class Property:
    """A named formula checked on every scope of one kind."""

    name: str
    scope: str  #: invocation | instance | run
    formula: Formula
    text: str = ""


Matcher = Callable[[Any, Callable[[], dict[str, Any]]], bool]


def _equal(field_value: Any, wanted: Any) -> bool:
    if isinstance(field_value, list):
        return any(_equal(v, wanted) for v in field_value)
    if isinstance(field_value, bool) or isinstance(wanted, bool):
        return field_value is wanted
    return bool(field_value == wanted)


def _matcher(key: str, value: Any, tools: Mapping[str, ToolAttributes]) -> Matcher:
    wanted = tuple(value) if isinstance(value, frozenset) else (value,)

    def any_of(x: Any) -> bool:
        return any(_equal(x, w) for w in wanted)

    if key.startswith("detail."):
        name = key[len("detail.") :]
        return lambda ev, detail: any_of(detail().get(name))
    if key in ("side_effects", "requires_approval"):

        def tool_attr(ev: Any, detail: Callable[[], dict[str, Any]]) -> bool:
            attrs = tools.get(ev.tool) if isinstance(ev.tool, str) else None
            return attrs is not None and any_of(getattr(attrs, key))

        return tool_attr
    return lambda ev, detail: any_of(getattr(ev, key))


_TOOL_ATTRIBUTES = ("side_effects", "requires_approval")


def _no_key(ev: Any) -> None:
    return None


def _online(formula: Formula) -> list[tuple[bool, Formula, float | None]] | None:
    """``formula`` as a conjunction of (always?, past body, bound), or None."""
    if is_past(formula):
        return [(False, formula, None)]
    if isinstance(formula, Unary) and formula.op == "G" and is_past(formula.sub):
        return [(True, formula.sub, formula.bound)]
    if isinstance(formula, Binary) and formula.op == "&":
        left, right = _online(formula.left), _online(formula.right)
        if left is not None and right is not None:
            return left + right
    return None


class _Check:
    """How one property is evaluated (online obligations or one program at scope end)."""

    __slots__ = ("index", "obligations", "program", "prop", "verdict")

    def __init__(self, prop: Property, atoms: list[Atom], index: int) -> None:
        self.prop = prop
        self.index = index
        self.verdict = Verdict(prop.name, scope=prop.scope, formula=prop.text or str(prop.formula))
        parts = _online(prop.formula)
        self.obligations: list[tuple[bool, PastState, float | None]] | None = None
        self.program: Program | None = None
        if parts is not None:
            self.obligations = [
                (g, past_runner(compile_formula(b, atoms)), bd) for g, b, bd in parts
            ]
        else:
            self.program = compile_formula(prop.formula, atoms)


class _Scope:
    """An open scope: its events so far (counted, first and latest kept), per property
    the online states (None once decided) or, for the rest, the atom masks and times."""

    __slots__ = ("decided", "head", "masks", "n", "states", "t0", "tail", "times")

    def __init__(self, checks: Sequence[_Check], buffered: bool) -> None:
        self.n = 0
        self.t0 = 0.0
        self.head: list[bytes] = []
        self.tail: deque[bytes] = deque(maxlen=TAIL)
        self.states: list[list[Any] | None] = [
            [r.initial() for _, r, _ in c.obligations] if c.obligations is not None else None
            for c in checks
        ]
        # per property: None while open, else (violated, message, certain-at seq, lines, elided)
        self.decided: list[tuple[bool, str, int, list[bytes], int] | None] = [None] * len(checks)
        self.masks: list[int] | None = [] if buffered else None
        self.times: list[float] | None = [] if buffered else None

    def keep(self, raw: bytes) -> None:
        if self.n <= HEAD:
            self.head.append(raw)
        else:
            self.tail.append(raw)

    def lines(self) -> tuple[list[bytes], int]:
        """The kept lines and how many of the scope's events they leave out."""
        return [*self.head, *self.tail], self.n - len(self.head) - len(self.tail)


class _Group:
    """The properties of one scope kind and their open scopes."""

    __slots__ = ("buffered", "checks", "kind", "open")

    def __init__(self, kind: str, checks: list[_Check]) -> None:
        self.kind = kind
        self.checks = checks
        self.buffered = any(c.program is not None for c in checks)
        self.open: dict[Any, _Scope] = {}


class Monitor:
    """Checks ``properties`` on a trace streamed through :meth:`step` (events with the
    SPEC §5 attributes, and their raw JSON line for counterexamples and ``detail``).
    ``tools`` gives the ground truth that ``side_effects``/``requires_approval`` test;
    ``record`` keeps every violated scope key in the verdicts (for tests and tools)."""

    def __init__(
        self,
        properties: Sequence[Property],
        tools: Mapping[str, ToolAttributes],
        record: bool = False,
    ) -> None:
        self.atoms: list[Atom] = []
        self.record = record
        self.checks = [_Check(p, self.atoms, k) for k, p in enumerate(properties)]
        self.groups = {
            kind: _Group(kind, [c for c in self.checks if c.prop.scope == kind])
            for kind in SCOPES
            if any(c.prop.scope == kind for c in self.checks)
        }
        for c in self.checks:
            if c.prop.scope not in SCOPES:
                raise ValueError(f"unknown scope {c.prop.scope!r} (one of {', '.join(SCOPES)})")
        self.by_label: dict[str, list[tuple[int, tuple[Matcher, ...]]]] = {}
        for bit, atom in enumerate(self.atoms):
            matchers = tuple(_matcher(c.key, c.value, tools) for c in atom.conditions)
            self.by_label.setdefault(atom.label, []).append((bit, matchers))
        # per label without detail conditions: the event fields its atoms read, and the
        # mask of each combination of their values seen so far
        self.mask_key: dict[str, Callable[[Any], Any]] = {}
        self.masks: dict[str, dict[Any, int]] = {}
        for label in self.by_label:
            keys = {c.key for a in self.atoms if a.label == label for c in a.conditions}
            if any(k.startswith("detail.") for k in keys):
                continue
            fields = sorted({"tool" if k in _TOOL_ATTRIBUTES else k for k in keys})
            self.mask_key[label] = operator.attrgetter(*fields) if fields else _no_key
            self.masks[label] = {}
        self.inv_of_inst: dict[tuple[Any, Any], list[Any]] = {}
        self.last_t = 0.0
        self._best: list[int | None] = [None] * len(self.checks)
        self._kept = [Earliest() for _ in self.checks]

    # --- the pass ---
    def step(self, ev: Any, raw: bytes) -> None:
        """Advance every scope ``ev`` belongs to by one event."""
        t = ev.t if ev.t is not None else self.last_t
        self.last_t = t
        mask = 0
        label = ev.label
        atoms = self.by_label.get(label)
        if atoms:
            key_of = self.mask_key.get(label)
            if key_of is None:  # a detail condition: match every atom
                mask = self._mask(atoms, ev, raw)
            else:  # the mask depends only on a few fields: look it up
                try:
                    key = key_of(ev)
                    seen = self.masks[label]
                    got = seen.get(key)
                    if got is None:
                        got = self._mask(atoms, ev, raw)
                        if len(seen) < MASK_CAP:
                            seen[key] = got
                    mask = got
                except TypeError:  # an unhashable field value
                    mask = self._mask(atoms, ev, raw)
        groups = self.groups
        if "run" in groups:
            self._advance(groups["run"], None, ev, raw, mask, t)
        inst = ev.inst
        if "invocation" in groups and ev.inv is not None:
            g = groups["invocation"]
            if ev.inv not in g.open and inst is not None:
                self.inv_of_inst.setdefault((ev.wf, inst), []).append(ev.inv)
            self._advance(g, ev.inv, ev, raw, mask, t)
        if inst is not None:
            key = (ev.wf, inst)
            if "instance" in groups:
                self._advance(groups["instance"], key, ev, raw, mask, t)
            if ev.label == "wf_end":
                if "instance" in groups:
                    self._close(groups["instance"], key)
                invs = self.inv_of_inst.pop(key, None)
                if invs and "invocation" in groups:
                    g = groups["invocation"]
                    for inv in invs:
                        self._close(g, inv)

    def mask(self, ev: Any, raw: bytes) -> int:
        """The atom mask of one event (bit k: ``self.atoms[k]`` holds), as :meth:`step`
        computes it, without advancing any scope (for ``verify``'s product)."""
        atoms = self.by_label.get(ev.label)
        return self._mask(atoms, ev, raw) if atoms else 0

    def _mask(self, atoms: list[tuple[int, tuple[Matcher, ...]]], ev: Any, raw: bytes) -> int:
        """The bits of the atoms ``ev`` satisfies."""
        cache: list[dict[str, Any]] = []

        def detail() -> dict[str, Any]:
            if not cache:
                try:  # a line the checks' decoder took (it skips the keys it does not read)
                    d = json.loads(raw).get("detail") if raw else None
                except ValueError:  # an unread key's integer past Python's digit limit
                    d = None
                cache.append(d if isinstance(d, dict) else {})
            return cache[0]

        mask = 0
        for bit, matchers in atoms:
            if all(m(ev, detail) for m in matchers):
                mask |= 1 << bit
        return mask

    def _advance(self, g: _Group, key: Any, ev: Any, raw: bytes, mask: int, t: float) -> None:
        scope = g.open.get(key)
        if scope is None:
            scope = g.open[key] = _Scope(g.checks, g.buffered)
            scope.t0 = t
        first = scope.n == 0
        scope.n += 1
        scope.keep(raw)
        if scope.masks is not None and scope.times is not None:
            scope.masks.append(mask)
            scope.times.append(t)
        for k, c in enumerate(g.checks):
            states = scope.states[k]
            if states is None or c.obligations is None:
                continue
            for j, (always, runner, bound) in enumerate(c.obligations):
                states[j], value = runner.advance(states[j], mask, t)
                if not (first or (always and (bound is None or t - scope.t0 <= bound))):
                    continue
                if not value:
                    what = "the invariant" if always else "the formula at the scope's first event"
                    lines, elided = scope.lines()
                    scope.decided[k] = (
                        True,
                        f"{what} fails at seq {ev.seq}",
                        ev.seq,
                        lines,
                        elided,
                    )
                    scope.states[k] = None
                    break

    def _close(self, g: _Group, key: Any) -> None:
        scope = g.open.pop(key, None)
        if scope is None:
            return
        for k, c in enumerate(g.checks):
            decided = scope.decided[k]
            if decided is None and c.program is not None and scope.masks is not None:
                decided = self._at_end(c.program, scope, c.prop.formula)
            c.verdict.examined += 1
            if decided is None or not decided[0]:
                continue
            _, message, seq, lines, elided = decided
            v = c.verdict
            v.violations += 1
            if self.record:
                v.violated.append(key)
            text = f"{g.kind} {_key_text(key)}: {message}"
            self._kept[c.index].add(seq, text, lines, elided)
            best = self._best[c.index]
            if best is None or seq < best:
                self._best[c.index] = seq
                v.message = text
                v.counterexample = [_as_dict(r) for r in lines]
                v.elided = elided

    def _at_end(
        self, program: Program, scope: _Scope, formula: Formula
    ) -> tuple[bool, str, int, list[bytes], int] | None:
        assert scope.masks is not None and scope.times is not None
        cols = evaluate(program, scope.masks, scope.times)
        if cols[program.root][0]:
            return None
        lines, elided = scope.lines()
        last = _as_dict(lines[-1]).get("seq", -1) if lines else -1
        message = f"the formula is false on the scope's {scope.n} events (certain at its end)"
        if isinstance(formula, Unary) and formula.op == "G" and formula.bound is None:
            body = cols[program.steps[program.root][1]]
            i = body.index(False)
            seq = _as_dict(lines[i]).get("seq") if i < len(scope.head) else None
            at = f"seq {seq}" if seq is not None else f"event {i + 1} of the scope"
            message = f"the invariant fails at {at} (certain at the scope's end)"
        return (True, message, last if isinstance(last, int) else -1, lines, elided)

    # --- as a consumer of the conformance pass (handlers, end_instance, end_trace) ---
    def handlers(self) -> dict[str, Callable[[Any, bytes], None]]:
        """Every label to :meth:`step` (a scope's trace holds all its events)."""
        return dict.fromkeys(LABEL_KEYS, self.step)

    def end_instance(self, key: tuple[Any, Any], invs: Sequence[Any]) -> None:
        """Nothing: :meth:`step` closes scopes at ``wf_end`` itself."""

    def end_trace(self) -> None:
        """Close every open scope (the run's too)."""
        for g in self.groups.values():
            for key in list(g.open):
                self._close(g, key)

    def finish(self) -> list[Verdict]:
        """Close every open scope; the verdicts, in property order."""
        self.end_trace()
        for c in self.checks:
            c.verdict.counterexamples = [
                Counterexample(m, [_as_dict(r) for r in lines], e)
                for _, m, lines, e in self._kept[c.index].kept()
            ]
        return [c.verdict for c in self.checks]


def _key_text(key: Any) -> str:
    if key is None:
        return "(the run)"
    if isinstance(key, tuple):
        return f"{key[0]}#{key[1]}"
    return str(key)


def _as_dict(raw: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(raw)
    except ValueError:
        return {"line": raw.decode("utf-8", "replace")}
    return obj if isinstance(obj, dict) else {"line": raw.decode("utf-8", "replace")}
