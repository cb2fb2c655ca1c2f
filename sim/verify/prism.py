"""The untimed model × one property as a PRISM program (issue 35): an MDP whose label
``"violation"`` is reachable iff the property is violated on some execution.

Two constructions, both from the model's own steps and weights
(:mod:`sim.verify.weights`), never a second copy of its rules:

* *composed* (:mod:`sim.verify.composed`, when the tasks interact only through ≺,
  readiness and the instance's status): a module per task (its local state ``l<i>`` and
  the emission it is about to make ``e<i>``), and a module ``instance`` (phase ``ph``: 0
  before ``wf_start``, 1 running, 2 after ``wf_end``; status ``st``: 0 none, else the
  first failure's, :attr:`Program.statuses`; and for an instance property its monitor
  state ``m``). A task's choice draws an emission; one another module takes part in
  (:func:`_synchronised`: it sets a failure, steps the monitor, starts a successor under
  ≺ or wakes a waiting task) is pending until made: emitting is urgent (no choice is
  enabled while one is pending) and synchronises, by the emission's action, with the
  instance and the tasks it starts or wakes; any other emission is made by the choice
  itself. A choice found only under some codes of the tasks a readiness reads is
  guarded by them (formulas ``g<j>_<k>`` over the watched task's local states; a
  waiting task's states: ``waiting<i>``). Storm builds and checks the product, never
  Python.
* *flat* (any model and property): the product explored breadth-first by the model and
  the tracker themselves, written as one module over the product state ``s``.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sim.verify.composed import (
    BAD,
    ENDED_CANCELLED,
    ENDED_FAILED,
    ENDED_OK,
    ENDED_SKIPPED,
    PENDING,
    START,
    Guard,
    TaskAutomaton,
    automata,
    why_not,
)
from sim.verify.model import Model
from sim.verify.observe import ScopeTracker, Tracker
from sim.verify.states import INIT, Event
from sim.verify.weights import choices


@dataclass
class Program:
    """A generated PRISM program: its text, which construction (``composed`` or
    ``flat``, and why not composed), the flat product's size when it was explored
    (states, transitions; 0 when composed) and ``complete`` False when the flat
    exploration stopped at its bound (then the text is not written)."""

    text: str
    construction: str
    why_flat: str = ""
    explored: tuple[int, int] = (0, 0)
    complete: bool = True
    statuses: list[tuple[str, str]] = field(default_factory=list)


def _frac(w: Fraction) -> str:
    return str(w.numerator) if w.denominator == 1 else f"{w.numerator}/{w.denominator}"


def _branches(parts: list[tuple[Fraction, str]]) -> str:
    if len(parts) == 1 and parts[0][0] == 1:
        return parts[0][1]
    return " + ".join(f"{_frac(w)}:{u}" for w, u in parts)


def _header(model: Model, tracker: Tracker, how: str) -> list[str]:
    return [
        "// protomesh verify (issue 35): the untimed model of one instance x one property",
        f"// scenario {model.scenario.name}, workflow {model.workflow}, router "
        f"{model.router_name}, initiator {model.initiator}, property {tracker.name} "
        f"({tracker.scope}); {how}",
        "mdp",
        "",
    ]


def program(model: Model, tracker: Tracker, max_states: int) -> Program:
    """The PRISM program of ``model`` × ``tracker``: composed when it can be, else flat
    (the flat exploration bounded by ``max_states``)."""
    why = why_not(model, tracker)
    if not why:
        autos = automata(model, tracker)
        if not isinstance(autos, str):
            return _composed(model, tracker, autos)
        why = autos
    return _flat(model, tracker, max_states, why)


def _monitor(
    model: Model, tracker: ScopeTracker, autos: list[TaskAutomaton], ends: list[Event]
) -> tuple[dict[Any, int], Callable[[Any, tuple[Event, ...]], Any]]:
    """An instance property's monitor states (ids from 0, the last ``"bad"``) reachable
    from its start over every emission and ``wf_end``, and its step on events."""

    def step(st: Any, events: tuple[Event, ...]) -> Any:
        if st == "bad":
            return st
        for ev in events:
            if ev[0] == "_failed":
                continue
            st, bad = tracker.advance(model, st, ev)
            if bad:
                return "bad"
        return st

    start = step(None, (("wf_start", -1, None, model.initiator, None, ()),))
    ids: dict[Any, int] = {start: 0}
    todo = [start]
    alphabet = [em.events for a in autos for em in a.emissions] + [(e,) for e in ends]
    while todo:
        st = todo.pop()
        for evs in alphabet:
            nxt = step(st, evs)
            if nxt not in ids:
                ids[nxt] = len(ids)
                todo.append(nxt)
    ids.setdefault("bad", len(ids))
    return ids, step


def _composed(model: Model, tracker: Tracker, autos: list[TaskAutomaton]) -> Program:
    statuses = sorted({em.failure for a in autos for em in a.emissions if em.failure})
    code = {s: k + 1 for k, s in enumerate(statuses)}
    who = model.initiator
    wf_end: list[Event] = [
        ("wf_end", -1, None, who, None, (("status", "succeeded"),)),
        ("wf_end", -1, None, who, None, (("status", "failed"), ("reason", "blocked"))),
    ]
    wf_end += [("wf_end", -1, None, who, None, (("status", s), ("reason", r))) for s, r in statuses]
    monitored = isinstance(tracker, ScopeTracker) and tracker.scope == "instance"
    mon: dict[Any, int] = {}
    step: Callable[[Any, tuple[Event, ...]], Any] = _unmonitored
    if isinstance(tracker, ScopeTracker) and monitored:
        mon, step = _monitor(model, tracker, autos, wf_end)
    bad = [f"l{a.index}={BAD}" for a in autos] + ([f"m={mon['bad']}"] if monitored else [])
    lines = _header(model, tracker, f"composed: {len(autos)} task modules and the instance")
    sync = _synchronised(autos, mon, step)
    guards = _Guards(autos)
    modules = [line for a in autos for line in _task_module(model, a, autos, guards, sync)]
    lines += [
        f"formula busy = {' | '.join(f'e{a.index}>0' for a in autos)};",
        f"formula running = {' | '.join(_running(a) for a in autos)};",
        *guards.formulas,
        "",
        *modules,
    ]
    lines += ["module instance", "  ph : [0..2] init 0;", f"  st : [0..{len(statuses)}] init 0;"]
    if monitored:
        lines.append(f"  m : [0..{len(mon) - 1}] init 0;")
    lines.append("  [start] ph=0 -> (ph'=1);")
    for a in autos:
        for eid, em in enumerate(a.emissions, 1):
            if (a.index, eid) not in sync:
                continue
            set_st = [f"(st'=(st=0 ? {code[em.failure]} : st))"] if em.failure else []
            if monitored:
                for st, k in mon.items():
                    upd = "&".join([f"(m'={mon[step(st, em.events)]})", *set_st])
                    lines.append(f"  [emit{a.index}_{eid}] m={k} -> {upd};")
            elif set_st:
                lines.append(f"  [emit{a.index}_{eid}] true -> {set_st[0]};")
    well = " & ".join(f"(l{a.index}={ENDED_OK}|l{a.index}={ENDED_SKIPPED})" for a in autos)
    for k, ev in enumerate(wf_end):
        status = f"st=0 & {well}" if k == 0 else f"st=0 & !({well})" if k == 1 else f"st={k - 1}"
        guard = f"ph=1 & !running & !busy & {status}"
        if monitored:
            for st, j in mon.items():
                lines.append(f"  [] {guard} & m={j} -> (ph'=2)&(m'={mon[step(st, (ev,))]});")
        else:
            lines.append(f"  [] {guard} -> (ph'=2);")
    violation = " | ".join(bad)
    lines += [f"  [] ph=2 | {violation} -> true;", "endmodule", ""]
    lines.append(f'label "violation" = {violation};')
    return Program("\n".join(lines) + "\n", "composed", statuses=statuses)


def _unmonitored(st: Any, events: tuple[Event, ...]) -> Any:
    return st


_ENDS = (ENDED_OK, ENDED_SKIPPED, ENDED_FAILED, ENDED_CANCELLED)


def _synchronised(
    autos: list[TaskAutomaton], mon: dict[Any, int], step: Callable[[Any, tuple[Event, ...]], Any]
) -> set[tuple[int, int]]:
    """The emissions (task, id) another module takes part in: a failure's status, an
    instance monitor's step, a successor's start under ≺ or a waiting task's wake. The
    others are made at once by the choice (no pending emission: fewer states)."""
    before = {p for a in autos for p in a.after}
    out = set()
    for a in autos:
        woken = any(b.wake for b in autos if b is not a)
        for eid, em in enumerate(a.emissions, 1):
            if (
                em.failure is not None
                or any(step(st, em.events) != st for st in mon)
                or (woken and em.target in _ENDS)
                or (em.ended_ok and a.index in before)
            ):
                out.add((a.index, eid))
    return out


def _running(a: TaskAutomaton) -> str:
    """Task ``a`` is under way: made ready, preparing or running, not waiting."""
    if not a.wake:
        return f"l{a.index}>={START}"
    return f"(l{a.index}>={START} & !waiting{a.index})"


class _Guards:
    """The formulas naming a watched task's local states in some codes, one per guard
    part used (``g<j>_<k>``), and the waiting states of each task (``waiting<i>``)."""

    def __init__(self, autos: list[TaskAutomaton]) -> None:
        self.autos = autos
        self.names: dict[tuple[int, frozenset[int]], str] = {}
        self.formulas = [
            f"formula waiting{a.index} = {' | '.join(f'l{a.index}={w}' for w in sorted(a.wake))};"
            for a in autos
            if a.wake
        ]

    def text(self, guard: Guard) -> str:
        """The guard's condition ('' for none)."""
        parts = []
        for j, codes in guard:
            name = self.names.get((j, codes))
            if name is None:
                name = self.names[(j, codes)] = f"g{j}_{len(self.names)}"
                ids = sorted(k for k, c in self.autos[j].codes.items() if c in codes)
                cond = " | ".join(f"l{j}={k}" for k in ids) or "false"
                self.formulas.append(f"formula {name} = {cond};")
            parts.append(name)
        return "".join(f" & {p}" for p in parts)


def _task_module(
    model: Model,
    a: TaskAutomaton,
    autos: list[TaskAutomaton],
    guards: _Guards,
    sync: set[tuple[int, int]],
) -> list[str]:
    """Task ``a``'s module: its choices (guarded by the watched tasks' codes where they
    differ), its emissions, its start when a predecessor's emission ends it well (the
    others ended well already, no failure set), and its wake when another task ends."""
    i = a.index
    out = [
        f"// task {model.tasks[i].id}: l{i} {PENDING} pending, 1 succeeded, 2 skipped, 3 failed, "
        f"4 cancelled, {BAD} violated, {START} made ready, above: in its invocations",
        f"module task{i}",
        f"  l{i} : [0..{a.states - 1}] init {PENDING};",
        f"  e{i} : [0..{len(a.emissions)}] init 0;",
    ]
    if not a.after:
        out.append(f"  [start] l{i}={PENDING} -> (l{i}'={START});")
    targets = [em.target for em in a.emissions]
    for sid in sorted(a.choices):
        for guard, group in a.choices[sid]:
            parts = [
                (w, f"(e{i}'={eid})" if (i, eid) in sync else f"(l{i}'={targets[eid - 1]})")
                for w, eid in group
            ]
            out.append(f"  [] !busy & l{i}={sid}{guards.text(guard)} -> {_branches(parts)};")
    for eid, em in enumerate(a.emissions, 1):
        if (i, eid) in sync:
            out.append(f"  [emit{i}_{eid}] e{i}={eid} -> (e{i}'=0)&(l{i}'={em.target});")
    for p in autos:
        if p.index == i or (p.index not in a.after and not a.wake):
            continue
        others = [f"(l{q}={ENDED_OK}|l{q}={ENDED_SKIPPED})" for q in a.after if q != p.index]
        ready = " & ".join([f"l{i}={PENDING}", "st=0", *others])
        for eid, em in enumerate(p.emissions, 1):
            if (p.index, eid) not in sync:
                continue
            starts = p.index in a.after and em.ended_ok
            wakes = bool(a.wake) and em.target in _ENDS
            cases = [(ready, f"(l{i}'={START})")] if starts else []
            if wakes and em.failure is None:
                cases += [(f"l{i}={w} & st=0", f"(l{i}'={f})") for w, f in sorted(a.wake.items())]
                cases.append((f"waiting{i} & st!=0", f"(l{i}'={PENDING})"))
            elif wakes:
                cases.append((f"waiting{i}", f"(l{i}'={PENDING})"))
            if cases:
                rest = [ready] * starts + [f"waiting{i}"] * wakes
                out += [f"  [emit{p.index}_{eid}] {g} -> {u};" for g, u in cases]
                none = " & ".join(f"!({g})" for g in rest)
                out.append(f"  [emit{p.index}_{eid}] {none} -> true;")
    return [*out, "endmodule", ""]


def _flat(model: Model, tracker: Tracker, max_states: int, why: str) -> Program:
    """The product explored by the model and the tracker (see the module): state 0 the
    start, the last state the violation."""
    start = (INIT, tracker.initial(model))
    ids: dict[Any, int] = {start: 0}
    parents: list[tuple[int, tuple[Event, ...]]] = [(-1, ())]
    queue: deque[Any] = deque([start])
    rows: list[tuple[int, list[list[tuple[Fraction, Any]]]]] = []
    transitions = 0

    def path_to(sid: int) -> list[Event]:
        chunks = []
        while sid > 0:
            parent, evs = parents[sid]
            chunks.append(evs)
            sid = parent
        return [e for evs in reversed(chunks) for e in evs]

    while queue:
        ms, ps = state = queue.popleft()
        sid = ids[state]
        by_task: dict[int, list[tuple[tuple[Event, ...], Any]]] = {}
        for i, evs, nms in model.successors(ms):
            transitions += 1
            nps, bad = tracker.step(model, ps, evs, nms, functools.partial(path_to, sid))
            target: Any = "bad" if bad is not None else (nms, nps)
            if target != "bad" and target not in ids:
                if len(ids) >= max_states:
                    return Program("", "flat", why, (len(ids), transitions), complete=False)
                ids[target] = len(ids)
                parents.append((sid, evs))
                queue.append(target)
            by_task.setdefault(i, []).append((evs, target))
        groups: list[list[tuple[Fraction, Any]]] = []
        for i, found in by_task.items():
            ts = ms[0][i] if i >= 0 else None
            groups += choices(model, ts, found)
        rows.append((sid, groups))
    bad_id = len(ids)
    lines = _header(model, tracker, f"flat (not composed: {why})")
    lines += ["module product", f"  s : [0..{bad_id}] init 0;"]
    for sid, groups in rows:
        for group in groups:
            parts = [(w, f"(s'={bad_id if t == 'bad' else ids[t]})") for w, t in group]
            lines.append(f"  [] s={sid} -> {_branches(parts)};")
    final = {sid for sid, groups in rows if not groups}
    ends = " | ".join(f"s={k}" for k in sorted(final | {bad_id}))
    lines += [f"  [] {ends} -> true;", "endmodule", "", f'label "violation" = s={bad_id};']
    return Program("\n".join(lines) + "\n", "flat", why, (len(ids), transitions))
