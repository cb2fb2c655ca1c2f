"""The model's state space as an LTS (Aldebaran ``.aut`` through :mod:`sim.calculus.lts`).

Each transition of the model (a group of events) becomes a chain of edges, one per
event, labelled ``label(task,tool,arg)`` in the calculus's label syntax: the event's
label, its task (or the workflow for instance events), its tool, and the argument
that tells branches apart (the error type, the fallback tool, the skipped partner,
the host of a ``list``, the status of ``wf_end``). Breadth-first from the initial
state, numbered in that order; at most ``max_states`` model states.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from sim.calculus.lts import LTS, label
from sim.verify.model import Model
from sim.verify.states import INIT, Event

_FORBIDDEN = re.compile(r'[,()"\s]')


def event_label(model: Model, ev: Event) -> str:
    """The LTS label of one model event."""
    lab, ti, tool, _, _, detail = ev
    d = dict(detail)
    args = [model.tasks[ti].id if ti >= 0 else model.workflow]
    if tool is not None:
        args.append(tool)
    extra = {
        "error": d.get("error"),
        "fallback": d.get("to"),
        "skip": d.get("exclusive_with"),
        "list": d.get("host"),
        "wf_end": d.get("status"),
        "timeout": d.get("action"),
    }.get(lab)
    if isinstance(extra, str):
        args.append(extra)
    return label(lab, *(_FORBIDDEN.sub("_", a) for a in args))


def state_space(model: Model, max_states: int) -> tuple[LTS, bool]:
    """The reachable states and transitions of ``model`` (events as edges), and whether
    the search completed (False: cut at ``max_states``)."""
    number: dict[Any, int] = {INIT: 0}
    edges: list[tuple[int, str, int]] = []
    queue: deque[Any] = deque([INIT])
    fresh = 0  # intermediate states of multi-event transitions, numbered after
    chains: list[tuple[int, list[str], Any]] = []
    complete = True
    while queue:
        state = queue.popleft()
        for _, evs, nxt in model.successors(state):
            labels = [event_label(model, e) for e in evs if e[0] != "_failed"]
            if nxt not in number:
                if len(number) >= max_states:
                    complete = False
                    continue
                number[nxt] = len(number)
                queue.append(nxt)
            chains.append((number[state], labels, nxt))
    n = len(number)
    for src, labels, nxt in chains:
        at = src
        for k, lab in enumerate(labels):
            if k == len(labels) - 1:
                edges.append((at, lab, number[nxt]))
            else:
                mid = n + fresh
                fresh += 1
                edges.append((at, lab, mid))
                at = mid
    return LTS(n + fresh, 0, edges), complete
