"""The properties ``verify`` decides, stepped in product with the model (SPEC §9, §11).

Four ways, chosen per property:

* *online* (a conjunction of unbounded ``G ψ`` and ``ψ``, ψ past-only): each scope's
  state is the tuple of :class:`~sim.properties.semantics.PastAutomaton` states the
  property monitor itself builds (:class:`~sim.properties.Monitor`, whose ``mask``
  gives an event's atoms); a violation is certain at the event where ψ fails;
* *buffered* (any other unbounded formula): a scope keeps its atom masks and
  :func:`~sim.properties.semantics.evaluate` decides it when the scope closes;
* *core*: a SPEC §6 check whose rule is a pure core (``write_approval``,
  ``requires_order``, ``exclusive``: :class:`CoreTracker`): each scope's state is the
  core's, stepped on each event, as the check class streams it;
* *check*: a SPEC §6 check without a core (``recovery``, ``lts``): the check itself
  is run (:func:`sim.conformance.checks.run_pass`) on the rendered path at each step
  whose events it examines; a violation it counts during the pass is certain.

Scopes: an instance (all its events), an invocation (its ``call``/``invoke`` and the
events after it of the same task until the next), a discovery (its ``translate`` and
``list`` events, or its ``timeout``). Not decidable untimed: a bound, the ``run``
scope (it spans instances), an atom on a detail the model does not decide
(``attempt``, times, ids) or on a label it leaves out, a formula whose verdict events
between the modelled ones could change (:mod:`sim.verify.decidable`), and the checks
on messages (``conservation``, ``route_validity``: the model has no transport).
``interleaving_free``: the verdict
depends only on each task's own events (invocation scope, the two checks), the
condition of the partial-order reduction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import is_not
from typing import TYPE_CHECKING, Any

from sim.properties import Monitor, Property
from sim.properties.ast import atoms, has_bound
from sim.properties.semantics import evaluate
from sim.verify.counterexample import render
from sim.verify.decidable import UNMODELED, insertion_invariant
from sim.verify.model import Model
from sim.verify.states import END, RUNNING, Event

if TYPE_CHECKING:
    from sim.conformance.checks.base import Core

#: Detail keys the model decides (an atom on another detail key is not decidable).
MODELED_KEYS = frozenset(
    [
        "error",
        "missing",
        "cause",
        "to",
        "message",
        "slot",
        "reason",
        "status",
        "host",
        "fields",
        "approval",
        "approval_reason",
        "exclusive_with",
        "target",
        "approved",
        "executed",
        "action",
        "kind",
        "at",
        "chain",
        "dropped",
        "from_proto",
        "to_proto",
    ]
)
#: Checks on messages the untimed model has none of.
TRANSPORT_CHECKS = ("conservation", "route_validity")
_DISCOVERY = ("translate", "list")


class _Ev:
    """An event as the monitor's matchers read it (the SPEC §5 fields)."""

    __slots__ = ("agent", "inst", "inv", "label", "proto", "seq", "t", "task", "tool", "wf")

    def __init__(self, model: Model, ev: Event) -> None:
        lab, ti, tool, agent, proto, _ = ev
        self.label = lab
        self.tool = tool
        self.agent = agent
        self.proto = proto
        self.wf = model.workflow
        self.task = model.tasks[ti].id if ti >= 0 else None
        self.inst = 0
        self.inv = 0
        self.t = 0.0
        self.seq = 0


def undecidable_reason(prop: Property) -> str:
    """Why ``prop`` cannot be decided untimed ('' when it can)."""
    if has_bound(prop.formula):
        return "a time bound (the model is untimed)"
    if prop.scope == "run":
        return "the run scope spans instances (the model is one instance)"
    for atom in atoms(prop.formula):
        if atom.label in UNMODELED:
            return f"{atom.label} events are not in the untimed model"
        for c in atom.conditions:
            if c.key.startswith("detail.") and c.key[7:] not in MODELED_KEYS:
                return f"detail.{c.key[7:]} is not decided by the untimed model"
    if not insertion_invariant(prop.formula):
        return (
            "the verdict may depend on events the untimed model leaves out between the "
            "ones it keeps (translations, reroutes, messages): X, Y of a changing "
            "formula, or U, S, F, G whose operand an unrelated event can change"
        )
    return ""


class Tracker:
    """One property in product with the model (see the module)."""

    name: str
    scope: str
    interleaving_free: bool

    def initial(self, model: Model) -> Any:
        raise NotImplementedError

    def step(
        self,
        model: Model,
        ps: Any,
        events: Sequence[Event],
        nxt: Any,
        path: Callable[[], list[Event]],
    ) -> tuple[Any, int | None]:
        """The property state after ``events`` (leading to model state ``nxt``) and the
        index of the event where a violation became certain (None: none)."""
        raise NotImplementedError


class ScopeTracker(Tracker):
    """A property decided per scope, stepped event by event: each open scope's state
    (None until its first event) in the search state, as ``(instance, per-task
    invocation slots)``. Subclasses say how a scope's state advances and closes."""

    #: every violation is certain at an event (no scope decided only when it closes)
    online = True

    def advance(self, model: Model, st: Any, ev: Event) -> tuple[Any, bool]:
        """A scope's state after ``ev`` (``st`` None: ``ev`` is its first) and whether
        a violation is certain at ``ev``."""
        raise NotImplementedError

    def _close(self, st: Any) -> bool:
        """Whether a closing scope is violated (online: decided already)."""
        return False

    def initial(self, model: Model) -> Any:
        return (None, (None,) * len(model.tasks))

    def step(
        self,
        model: Model,
        ps: Any,
        events: Sequence[Event],
        nxt: Any,
        path: Callable[[], list[Event]],
    ) -> tuple[Any, int | None]:
        advance = self.advance
        inst, slots = ps
        slots = list(slots)
        instance = self.scope == "instance"
        disc: Any = None
        for k, ev in enumerate(events):
            lab, ti = ev[0], ev[1]
            if lab == "_failed":
                continue
            if instance:
                inst, bad = advance(model, inst, ev)
                if bad:
                    return ps, k
                continue
            if lab in _DISCOVERY or (lab == "timeout" and dict(ev[5]).get("kind") == "list"):
                disc, bad = advance(model, disc, ev)
                if bad:
                    return ps, k
                if lab != "translate":
                    if self._close(disc):
                        return ps, k
                    disc = None
                continue
            if ti < 0 or lab == "skip":
                continue
            if lab in ("call", "invoke"):
                if self._close(slots[ti]):
                    return ps, k
                slots[ti] = None
            slots[ti], bad = advance(model, slots[ti], ev)
            if bad:
                return ps, k
        last = len(events) - 1
        # the open scopes only (scanned in C: a step's cost is flat in the tasks)
        opened = compress(range(len(slots)), map(is_not, slots, repeat(None)))
        if nxt is END:
            if instance and self._close(inst):
                return ps, last
            if any(self._close(slots[ti]) for ti in opened):
                return ps, last
            return (None, (None,) * len(slots)), None
        tasks = nxt[0]
        for ti in opened:
            if not (isinstance(tasks[ti], tuple) and tasks[ti][0] == RUNNING):
                if self._close(slots[ti]):
                    return ps, last
                slots[ti] = None
        return (inst, tuple(slots)), None


class FormulaTracker(ScopeTracker):
    """A formula property: per open scope an online or a buffered state."""

    def __init__(self, prop: Property, monitor: Monitor) -> None:
        self.name = prop.name
        self.scope = prop.scope
        self.interleaving_free = prop.scope == "invocation"
        self.monitor = monitor
        check = monitor.checks[0]
        self.obligations = check.obligations
        self.program = check.program
        self.online = self.obligations is not None
        self._masks: dict[Event, int] = {}

    def mask(self, model: Model, ev: Event) -> int:
        hit = self._masks.get(ev)
        if hit is None:
            raw = json.dumps({"label": ev[0], "detail": dict(ev[5])}).encode()
            hit = self._masks[ev] = self.monitor.mask(_Ev(model, ev), raw)
        return hit

    def advance(self, model: Model, st: Any, ev: Event) -> tuple[Any, bool]:
        return self._advance(st, self.mask(model, ev))

    def _advance(self, st: Any, mask: int) -> tuple[Any, bool]:
        if self.obligations is None:  # buffered
            return ((*(st or ()), mask)), False
        first = st is None
        states = tuple(r.initial() for _, r, _ in self.obligations) if first else st
        new = []
        bad = False
        for (always, runner, _), s in zip(self.obligations, states, strict=True):
            s2, value = runner.advance(s, mask, 0.0)
            new.append(s2)
            if (first or always) and not value:
                bad = True
        return tuple(new), bad

    def _close(self, st: Any) -> bool:
        """Whether a closing scope's buffered formula is false (online: decided already)."""
        if st is None or self.program is None or self.obligations is not None:
            return False
        cols = evaluate(self.program, st, [0.0] * len(st))
        return not cols[self.program.root][0]


class CoreTracker(ScopeTracker):
    """A SPEC §6 check whose rule is a pure core (:class:`~sim.conformance.checks.Core`:
    write_approval, requires_order, exclusive): its scope state is the core's, stepped
    on each event, so ``verify`` decides by the check's own definition."""

    def __init__(self, name: str, core: Core) -> None:
        self.name = name
        self.scope = core.scope
        self.interleaving_free = core.scope == "invocation"
        self.core = core
        self.labels = frozenset(core.labels)

    def advance(self, model: Model, st: Any, ev: Event) -> tuple[Any, bool]:
        core = self.core
        if st is None:
            st = core.initial
        lab, ti = ev[0], ev[1]
        if lab not in self.labels:
            return st, False
        return core.step(st, lab, ev[2], ti, model.workflow)


class CheckTracker(Tracker):
    """A SPEC §6 check run on the rendered path (see the module)."""

    def __init__(self, name: str, scenario: Any) -> None:
        from sim.conformance.checks import ALL_CHECKS
        from sim.conformance.truth import from_scenario

        self.name = name
        self.scope = "invocation"
        self.interleaving_free = True
        self.cls = ALL_CHECKS[name]
        self.labels = frozenset(self.cls.labels)
        self.truth = from_scenario(scenario)

    def initial(self, model: Model) -> Any:
        return None

    def step(
        self,
        model: Model,
        ps: Any,
        events: Sequence[Event],
        nxt: Any,
        path: Callable[[], list[Event]],
    ) -> tuple[Any, int | None]:
        if nxt is not END and not any(ev[0] in self.labels for ev in events):
            return ps, None
        from sim.conformance.checks import Context, run_pass
        from sim.conformance.events import encode_event

        lines = [encode_event(e) for e in render(model, [*path(), *events])]
        ctx = Context()
        check = self.cls(self.truth, ctx)
        run_pass("verify", [lines], [check], ctx)
        return ps, (len(events) - 1 if check.violations else None)
