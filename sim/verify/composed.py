"""Each task of the untimed model as an automaton of its own (issue 35): the parts of
the PRISM program :mod:`sim.verify.prism` writes, one module per task.

A task's automaton is enumerated by the model's own steps (:class:`~sim.verify.model.Model`:
``_discover`` and ``_step``, so the views, LTS, recoveries, gates and weights are the
explicit search's), run on the task alone: every other task stands by as running, the
instance's status stays empty (one more stands by after the last, so that the instance
never ends inside a task's step: its ``wf_end`` is the instance module's). Its local
state is the task's state, the option ids it discovered and, for an invocation-scope
property, the task's monitor slot (the tracker's own). Each transition becomes a
weighed or nondeterministic *choice* (:mod:`sim.verify.weights`) of an *emission*:
the transition's events, the local state after, the status a failure sets (the first
decides) and whether the task ended well (which can start its successors under ≺).

Local state ids: :data:`PENDING` (not started), the four ends, :data:`BAD` (the
property's monitor found a violation in this task's events), :data:`START` (made ready:
discovery not begun), then every other state in order of discovery.

Composable (:func:`why_not`) when the tasks interact only through ≺ and the instance's
status: tool tasks whose tools (with their fallbacks) no other task uses, no dependency
relation (``Requires``, ``ExclusiveWith``, ``ProducesInputFor``), no initiator outage, no
failure at once at discovery (the engine's batch cut), and the property a formula on
invocations or an online formula on the instance (its monitor one more module).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sim.verify.model import Model
from sim.verify.observe import ScopeTracker, Tracker
from sim.verify.states import (
    CANCELLED,
    FAILED,
    PREPARING,
    SKIPPED,
    SUCCEEDED,
    Event,
)
from sim.verify.weights import choices

PENDING, ENDED_OK, ENDED_SKIPPED, ENDED_FAILED, ENDED_CANCELLED, BAD, START = range(7)
#: a task's end code → its local state id
ENDS = {
    SUCCEEDED: ENDED_OK,
    SKIPPED: ENDED_SKIPPED,
    FAILED: ENDED_FAILED,
    CANCELLED: ENDED_CANCELLED,
}
_FRESH = (PREPARING, None, 0)


@dataclass(frozen=True)
class Emission:
    """One transition of a task: its events, the local state after, the instance status
    it sets (None: none) and whether the task ended succeeded or skipped."""

    events: tuple[Event, ...]
    target: int
    failure: tuple[str, str] | None
    ended_ok: bool


@dataclass
class TaskAutomaton:
    """One task's automaton: ``choices[k]`` are local state k's choices, each a tuple of
    (weight, emission id); emission ids count from 1 (0: nothing to emit)."""

    index: int
    after: tuple[int, ...]
    states: int = START + 1
    choices: dict[int, list[tuple[tuple[Fraction, int], ...]]] = field(default_factory=dict)
    emissions: list[Emission] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    #: a transition ended the task at discovery without a ``list`` (a batch cut)
    cut_at_once: bool = False


def why_not(model: Model, tracker: Tracker) -> str:
    """Why the workflow × property cannot be composed task by task ('' when it can)."""
    if not isinstance(tracker, ScopeTracker):
        return "a check run on the whole path (no automaton of its own)"
    if tracker.scope == "instance" and not tracker.online:
        return "an instance formula decided at the instance's end (no online monitor)"
    if model.initiator_fails:
        return "the initiator can fail (its outage ends every task at once)"
    if model.feeds_known or any(d.dependencies for d in model.truth.values()):
        return "a dependency relation between tools (tasks read each other's state)"
    if any(t.tool is None for t in model.tasks):
        return "a capability task (its tool is chosen at discovery)"
    return ""


def task_automaton(model: Model, tracker: ScopeTracker, index: int) -> TaskAutomaton:
    """The automaton of task ``index`` (see the module)."""
    task = model.tasks[index]
    n = len(model.tasks)
    auto = TaskAutomaton(index, task.after)
    slots = tracker.scope == "invocation"
    ids: dict[Any, int] = {(_FRESH, (), None): START}
    queue: deque[tuple[int, Any]] = deque([(START, (_FRESH, (), None))])
    emitted: dict[Emission, int] = {}
    while queue:
        sid, (ts, known, slot) = queue.popleft()
        tasks = (*(ts if j == index else _FRESH for j in range(n)), _FRESH)
        state = (tasks, "", known, ())
        found: list[Any] = []
        if ts[0] == PREPARING:
            model._discover(state, task, ts, found)
        else:
            model._step(state, task, ts, found)
        targets: list[tuple[tuple[Event, ...], int]] = []
        for _, evs, nxt in found:
            ts2, status, known2 = nxt[0][index], nxt[1], nxt[2]
            auto.tools.update(e[2] for e in evs if e[2] is not None)
            bad = None
            slot2 = None
            if slots:
                ps = (None, tuple(slot if j == index else None for j in range(n)))
                nps, bad = tracker.step(model, ps, evs, nxt, list)
                slot2 = nps[1][index]
            if bad is not None:
                target = BAD
            elif isinstance(ts2, int):
                target = ENDS[ts2]
                if ts[0] == PREPARING and ts2 in (FAILED, CANCELLED):
                    lists = any(e[0] in ("list", "timeout") for e in evs)
                    gave_up = any(("reason", "discovery_timeout") in e[5] for e in evs)
                    auto.cut_at_once |= not lists and not gave_up
            else:
                key = (ts2, known2, slot2)
                target = ids.get(key, -1)
                if target < 0:
                    target = ids[key] = START + len(ids)
                    queue.append((target, key))
            failure = (status[0], status[1]) if status and status != "x" else None
            em = Emission(tuple(evs), target, failure, target in (ENDED_OK, ENDED_SKIPPED))
            eid = emitted.setdefault(em, len(emitted) + 1)
            targets.append((em.events, eid))
        auto.choices[sid] = [
            tuple((w, eid) for w, eid in group) for group in choices(model, ts, targets)
        ]
    auto.states = START + len(ids)
    auto.emissions = sorted(emitted, key=emitted.__getitem__)
    return auto


def automata(model: Model, tracker: ScopeTracker) -> list[TaskAutomaton] | str:
    """Every task's automaton, or why they do not compose (tools shared, a batch cut)."""
    out = [task_automaton(model, tracker, i) for i in range(len(model.tasks))]
    for a in out:
        if a.cut_at_once:
            return f"task {model.tasks[a.index].id} can fail at once at discovery (a batch cut)"
        for b in out:
            if b.index > a.index and a.tools & b.tools:
                shared = ", ".join(sorted(a.tools & b.tools))
                return (
                    f"tasks {model.tasks[a.index].id} and {model.tasks[b.index].id} share {shared}"
                )
    return out
