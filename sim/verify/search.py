"""Explicit-state breadth-first search of the model × one property (SPEC §11).

Breadth-first, so the first violation found has a shortest path (in transitions, each
one group of events the engine writes at one instant). States are hashed compactly:
each product state is serialised (:mod:`marshal`, canonical for the model's tuples of
ints, strings and booleans) and only its 16-byte BLAKE2b digest is kept, with the
parent link that rebuilds a counterexample. ``max_states`` bounds the states stored;
reaching it makes the verdict ``undecided``, never ``holds``.

Partial-order reduction (``reduce=True``, for properties whose verdict depends only on
each task's own events: a conjunction over invocation scopes). An *isolated* task (a
tool task with no ≺ edge to or from it, no dependency relation on its tools, tools and
fallback tools no other task uses) reads nothing of the others and is read by none;
it only sets the instance's "some task failed" flag, which stops later tasks from
starting. So (1) isolated tasks commute with one another, and (2) any execution is
dominated, scope by scope, by one where every isolated task moves only after the other
tasks have nothing left to do (postponing a failure only lets more tasks start; their
invocations are extra scopes, the others' are unchanged). The reduced search
explores the other tasks' transitions while there are any, then the isolated tasks one
at a time. Their outcomes are folded into the failure flag (:class:`Model`, ``exact``
off), so they do not multiply states. Not applied when the initiator can fail (its
outage cuts every task). The model is acyclic: no cycle proviso. A reduced search that
finds a violation is repeated without reduction for the shortest counterexample.
"""

from __future__ import annotations

import functools
import marshal
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from hashlib import blake2b
from itertools import compress, repeat
from typing import Any

from sim.verify.model import Model
from sim.verify.observe import Tracker
from sim.verify.states import END, INIT, Event, Transition


@dataclass
class Outcome:
    """A search's verdict: ``holds``, ``violated`` or ``undecided``; states stored and
    transitions taken; the violating path's events (up to the violating event)."""

    verdict: str
    states: int
    transitions: int
    path: list[Event] = field(default_factory=list)
    reduced: bool = False
    #: why an ``undecided`` search stopped: ``"states"`` (max_states) or ``"gave up"``
    stopped: str = ""


def _digest(state: Any) -> bytes:
    return blake2b(marshal.dumps(state, 2), digest_size=16).digest()


def _running(codes: tuple[Any, ...], among: tuple[int, ...]) -> Iterator[int]:
    """Those of the tasks ``among`` preparing or running (tuple-valued), scanned in C."""
    return compress(among, map(isinstance, map(codes.__getitem__, among), repeat(tuple)))


def _ample(
    model: Model, state: Any, others: tuple[int, ...], isolated: tuple[int, ...]
) -> list[Transition]:
    """The transitions the reduced search takes in ``state``: those of the tasks
    ``others`` while there are any, else those of the first task of ``isolated`` (by
    index) that has some. Only those tasks' transitions are computed, so a step costs
    the same however many isolated tasks wait (an initiator that can fail, whose moves
    are the instance's, is never reduced)."""
    if state == INIT or state is END:
        return model.successors(state)
    codes = state[0]
    found = model.moves(state, map(model.tasks.__getitem__, _running(codes, others)))
    if found:
        return found
    for i in _running(codes, isolated):
        mine = model.moves(state, (model.tasks[i],))
        if mine:
            return mine
    return []


def explore(
    model: Model,
    tracker: Tracker,
    max_states: int,
    reduce: bool = False,
    give_up: Callable[[], bool] | None = None,
) -> Outcome:
    """Search the product of ``model`` and ``tracker`` breadth-first; ``give_up`` (asked
    before the search and every 1,024 states stored, e.g. ``verify --max-seconds``) stops
    it ``undecided`` too."""
    if give_up is not None and give_up():
        return Outcome("undecided", 0, 0, stopped="gave up")
    isolated = tuple(sorted(model.isolated)) if reduce and not model.initiator_fails else ()
    others = tuple(t.index for t in model.tasks if t.index not in model.isolated)
    start = (INIT, tracker.initial(model))
    seen = {_digest(start)}
    parents: list[tuple[int, tuple[Event, ...]]] = [(-1, ())]
    queue: deque[tuple[int, Any]] = deque([(0, start)])
    transitions = 0

    def path_to(sid: int) -> list[Event]:
        chunks = []
        while sid > 0:
            parent, evs = parents[sid]
            chunks.append(evs)
            sid = parent
        return [e for evs in reversed(chunks) for e in evs]

    while queue:
        sid, (ms, ps) = queue.popleft()
        trs = _ample(model, ms, others, isolated) if isolated else model.successors(ms)
        for _, evs, nms in trs:
            transitions += 1
            nps, bad = tracker.step(model, ps, evs, nms, functools.partial(path_to, sid))
            if bad is not None:
                return Outcome(
                    "violated",
                    len(seen),
                    transitions,
                    path_to(sid) + list(evs[: bad + 1]),
                    bool(isolated),
                )
            key = _digest((nms, nps))
            if key in seen:
                continue
            if len(seen) >= max_states:
                return Outcome("undecided", len(seen), transitions, [], bool(isolated), "states")
            seen.add(key)
            if give_up is not None and not len(seen) & 1023 and give_up():
                return Outcome("undecided", len(seen), transitions, [], bool(isolated), "gave up")
            parents.append((sid, evs))
            queue.append((len(parents) - 1, (nms, nps)))
    return Outcome("holds", len(seen), transitions, reduced=bool(isolated))
