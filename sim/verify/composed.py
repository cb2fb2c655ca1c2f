"""Each task of the untimed model as an automaton of its own (issue 35): the parts of
the PRISM program :mod:`sim.verify.prism` writes, one module per task.

A task's automaton is enumerated by the model's own steps (:class:`~sim.verify.model.Model`:
``_discover`` and ``_step``, so the views, LTS, recoveries, gates, readiness and weights
are the explicit search's), run on the task alone: every other task stands by as
running, the instance's status stays empty (one more stands by after the last, so that
the instance never ends inside a task's step: its ``wf_end`` is the instance module's).
Its local state is the task's state, the option ids it discovered and, for an
invocation-scope formula, the task's monitor slot (the tracker's own). Each transition
becomes a weighed or nondeterministic *choice* (:mod:`sim.verify.weights`) of an
*emission*: the transition's events, the local state after, the status a failure sets
(the first decides) and whether the task ended well (which can start its successors
under ≺).

Dependencies (``Requires``, ``ExclusiveWith``): readiness reads the codes of the tasks
whose tools the task's tools name (:attr:`TaskAutomaton.watched`). The steps are run
with each of those in a stand-in state of each task code; a choice that differs between
codes is *guarded* by the codes it was found under, which the program reads off the
watched task's local state (its code: :attr:`TaskAutomaton.codes`). A task that waits
is woken by any other task's end, as ``_over`` wakes it: prepared again with what it
knows (:attr:`TaskAutomaton.wake`) while no failure is set, else left pending.

A SPEC §6 check (``recovery``, ``lts``, whose verdict depends only on each task's own
events) is run, as :class:`~sim.verify.observe.CheckTracker` runs it, on the path that
first reached the local state (``wf_start`` and the task's events; at the task's end
with a ``wf_end`` after, which the instance always reaches): a violation is the local
state :data:`BAD`. The explicit search makes the same assumption (the first path to a
state stands for every path to it).

Local state ids: :data:`PENDING` (not started), the four ends, :data:`BAD` (the
property's monitor found a violation in this task's events), :data:`START` (made ready:
discovery not begun), then every other state in order of discovery.

Composable (:func:`why_not`) when the tasks interact only through ≺, readiness and the
instance's status: tool tasks whose tools (with their fallbacks) no other task uses, no
``ProducesInputFor`` (readiness through the caller's latest views), no initiator
outage, no failure at once at discovery while a later task may be preparing (the
engine's batch cut), and the property a formula on invocations, an online formula on
the instance (its monitor one more module) or a check.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

from sim.verify.model import Model
from sim.verify.observe import CheckTracker, ScopeTracker, Tracker
from sim.verify.states import (
    ASK,
    CANCELLED,
    END,
    FAILED,
    PREPARING,
    RUNNING,
    SKIPPED,
    SUCCEEDED,
    WAITING,
    Event,
    callable_tools,
    code_of,
    watchers,
)
from sim.verify.states import PENDING as PENDING_CODE
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
#: every task code, and the stand-in state of a watched task in each (readiness reads
#: only its code)
CODES = (PENDING_CODE, SUCCEEDED, FAILED, CANCELLED, SKIPPED, WAITING, PREPARING, RUNNING)
_STAND_IN: dict[int, Any] = {c: c for c in CODES[:6]}
_STAND_IN[PREPARING] = _FRESH
_STAND_IN[RUNNING] = (RUNNING, 0, False, 0, ASK, 0, 0, (), False)
#: a guard: each watched task (index) in one of the codes
Guard = tuple[tuple[int, frozenset[int]], ...]


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
    """One task's automaton: ``choices[k]`` are local state k's choices, each a guard
    (() when always enabled) and a tuple of (weight, emission id); emission ids count
    from 1 (0: nothing to emit)."""

    index: int
    after: tuple[int, ...]
    states: int = START + 1
    choices: dict[int, list[tuple[Guard, tuple[tuple[Fraction, int], ...]]]] = field(
        default_factory=dict
    )
    emissions: list[Emission] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    #: a transition ended the task at discovery without a ``list`` (a batch cut)
    cut_at_once: bool = False
    #: the tasks whose code its readiness reads (ascending)
    watched: tuple[int, ...] = ()
    #: local state id → the task's code there (BAD has none)
    codes: dict[int, int] = field(default_factory=dict)
    #: a waiting local state → the one it is prepared again in when woken
    wake: dict[int, int] = field(default_factory=dict)


def why_not(model: Model, tracker: Tracker) -> str:
    """Why the workflow × property cannot be composed task by task ('' when it can)."""
    if isinstance(tracker, ScopeTracker):
        if tracker.scope == "instance" and not tracker.online:
            return "an instance formula decided at the instance's end (no online monitor)"
    elif not isinstance(tracker, CheckTracker):
        return "a property without an automaton of its own"
    if model.initiator_fails:
        return "the initiator can fail (its outage ends every task at once)"
    if model.feeds_known:
        return "a ProducesInputFor relation (readiness reads the caller's latest views)"
    if any(t.tool is None for t in model.tasks):
        return "a capability task (its tool is chosen at discovery)"
    return ""


def _watched(model: Model, index: int) -> tuple[int, ...]:
    """The other tasks whose tool a dependency of one of task ``index``'s tools names, or
    whose tool declares one of them ExclusiveWith."""
    tool = model.tasks[index].tool
    assert tool is not None
    mine = callable_tools(model.truth, tool)
    named = {d.tool for t in mine for d in model.truth[t].dependencies or ()}
    named.update(x for t in mine for x in model.excluded_by.get(t, ()))  # ExclusiveWith
    return tuple(j for j in watchers(model.possible_tools(), named) if j != index)


def _guards(watched: tuple[int, ...], envs: list[tuple[int, ...]], total: int) -> list[Guard]:
    """The guards under which exactly the codes ``envs`` of the watched tasks hold: none
    when they are every combination, one when they are a product, else one per env."""
    if len(envs) == total:
        return [()]
    sets = [frozenset(e[k] for e in envs) for k in range(len(watched))]
    product = 1
    for s in sets:
        product *= len(s)
    if product == len(envs):
        return [tuple((j, s) for j, s in zip(watched, sets, strict=True) if len(s) < len(CODES))]
    return [tuple((j, frozenset([c])) for j, c in zip(watched, e, strict=True)) for e in envs]


def task_automaton(model: Model, tracker: Tracker, index: int) -> TaskAutomaton:
    """The automaton of task ``index`` (see the module)."""
    task = model.tasks[index]
    n = len(model.tasks)
    auto = TaskAutomaton(index, task.after, watched=_watched(model, index))
    auto.codes = {PENDING: PENDING_CODE, **{k: c for c, k in ENDS.items()}}
    envs = list(itertools.product(CODES, repeat=len(auto.watched)))
    check = isinstance(tracker, CheckTracker)
    slots = tracker.scope == "invocation" and not check
    who = model.initiator
    wf_start: Event = ("wf_start", -1, None, who, None, ())
    wf_end: Event = ("wf_end", -1, None, who, None, (("status", "succeeded"),))
    ids: dict[Any, int] = {(_FRESH, (), None): START}
    parents: dict[int, tuple[int, tuple[Event, ...]]] = {START: (-1, ())}
    queue: deque[tuple[int, Any]] = deque([(START, (_FRESH, (), None))])
    emitted: dict[Emission, int] = {}

    def path_to(sid: int) -> list[Event]:
        chunks = []
        while sid >= 0:
            sid, evs = parents[sid]
            chunks.append(evs)
        return [wf_start, *(e for evs in reversed(chunks) for e in evs)]

    def local(key: Any, parent: int, evs: tuple[Event, ...]) -> int:
        hit = ids.get(key, -1)
        if hit < 0:
            hit = ids[key] = START + len(ids)
            parents[hit] = (parent, evs)
            queue.append((hit, key))
        return hit

    while queue:
        sid, (ts, known, slot) = queue.popleft()
        auto.codes[sid] = code_of(ts)
        if ts == WAITING:
            auto.wake[sid] = local((_FRESH, known, slot), sid, ())
            continue
        found_by: dict[Any, list[tuple[int, ...]]] = {}
        for env in envs:
            tasks = [ts if j == index else _FRESH for j in range(n + 1)]
            for j, c in zip(auto.watched, env, strict=True):
                tasks[j] = _STAND_IN[c]
            state = (tuple(tasks), "", known, ())
            found: list[Any] = []
            if ts[0] == PREPARING:
                model._discover(state, task, ts, found)
            else:
                model._step(state, task, ts, found)
            targets: list[tuple[tuple[Event, ...], int]] = []
            for _, evs, nxt in found:
                ts2, status, known2 = nxt[0][index], nxt[1], nxt[2]
                auto.tools.update(e[2] for e in evs if e[2] is not None)
                ended = isinstance(ts2, int) and ts2 != WAITING
                bad = None
                slot2 = None
                if check:
                    evs_c, nxt_c = ((*evs, wf_end), END) if ended else (evs, nxt)
                    _, bad = tracker.step(model, None, evs_c, nxt_c, partial(path_to, sid))
                elif slots:
                    ps = (None, tuple(slot if j == index else None for j in range(n)))
                    nps, bad = tracker.step(model, ps, evs, nxt, list)
                    slot2 = nps[1][index]
                if bad is not None:
                    target = BAD
                elif ended:
                    target = ENDS[ts2]
                    if ts[0] == PREPARING and ts2 in (FAILED, CANCELLED):
                        lists = any(e[0] in ("list", "timeout") for e in evs)
                        gave_up = any(("reason", "discovery_timeout") in e[5] for e in evs)
                        auto.cut_at_once |= not lists and not gave_up
                else:
                    target = local((ts2, known2, slot2), sid, tuple(evs))
                failure = (status[0], status[1]) if status and status != "x" else None
                em = Emission(tuple(evs), target, failure, target in (ENDED_OK, ENDED_SKIPPED))
                eid = emitted.setdefault(em, len(emitted) + 1)
                targets.append((em.events, eid))
            groups = tuple(tuple(g) for g in choices(model, ts, targets))
            found_by.setdefault(groups, []).append(env)
        auto.choices[sid] = [
            (guard, group)
            for groups, where in found_by.items()
            for guard in _guards(auto.watched, where, len(envs))
            for group in groups
        ]
    auto.states = START + len(ids)
    auto.emissions = sorted(emitted, key=emitted.__getitem__)
    return auto


def _concurrent(model: Model, i: int, k: int) -> bool:
    """Whether tasks ``i`` and ``k`` can both be under way (neither ≺-precedes the other)."""

    def precedes(a: int, b: int) -> bool:
        todo, seen = list(model.tasks[b].after), set()
        while todo:
            x = todo.pop()
            if x == a:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(model.tasks[x].after)
        return False

    return not precedes(i, k) and not precedes(k, i)


def automata(model: Model, tracker: Tracker) -> list[TaskAutomaton] | str:
    """Every task's automaton, or why they do not compose (tools shared, a batch cut)."""
    out = [task_automaton(model, tracker, i) for i in range(len(model.tasks))]
    for a in out:
        # the engine's batch cut ends the instance before a later task made ready in the
        # same batch moves; with none that can be, the cut is the instance's own end
        if a.cut_at_once and any(
            _concurrent(model, a.index, k) for k in range(a.index + 1, len(out))
        ):
            return f"task {model.tasks[a.index].id} can fail at once at discovery (a batch cut)"
        for b in out:
            if b.index > a.index and a.tools & b.tools:
                shared = ", ".join(sorted(a.tools & b.tools))
                return (
                    f"tasks {model.tasks[a.index].id} and {model.tasks[b.index].id} share {shared}"
                )
    return out
