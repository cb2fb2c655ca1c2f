"""Engine replays keyed for comparison with verify's model (what the soundness tests compare)."""

from __future__ import annotations

from typing import Any

from sim.verify.model import Model
from sim.verify.states import END, INIT, Event

#: The labels the projection keeps, and the detail that tells their branches apart.
KEPT = {
    "wf_start": None,
    "wf_end": ("status", "reason"),
    "call": None,
    "invoke": None,
    "collect": "slot",
    "validate": None,
    "approve": None,
    "deny": None,
    "execute": None,
    "result": None,
    "error": "error",
    "retry": None,
    "fallback": "to",
    "prompt": None,
    "abort": None,
    "skip": "exclusive_with",
    "list": ("host", "fields"),
    "timeout": ("action", "executed", "kind"),
}


Key = tuple[str, Any, Any, Any]


def detail_key(arg: Any, detail: dict[str, Any]) -> Any:
    """The detail that tells a label's branches apart (a tuple of values for a tuple)."""
    if isinstance(arg, tuple):
        return tuple(_hashable(detail.get(a)) for a in arg)
    return detail.get(arg) if arg else None


#: The labels whose agent and protocol the projection keeps too (where a call is served).
PLACED = {"execute"}


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def trace_key(ev: dict[str, Any]) -> Key:
    value = detail_key(KEPT[ev["label"]], ev["detail"])
    if ev["label"] in PLACED:
        value = (value, ev["agent"], ev["proto"])
    return (ev["label"], ev["task"], ev["tool"] if ev["task"] else None, value)


def model_keys(model: Model, events: tuple[Event, ...]) -> list[Key]:
    out = []
    for lab, ti, tool, agent, proto, detail in events:
        if lab not in KEPT:
            continue
        d = dict(detail)
        task = model.tasks[ti].id if ti >= 0 else None
        value = detail_key(KEPT[lab], d)
        if lab in PLACED:
            value = (value, agent, proto)
        out.append((lab, task, tool if task else None, value))
    return out


def replays(model: Model, keys: list[Key]) -> bool:
    """Whether some path of ``model`` projects exactly onto ``keys``."""
    todo: list[tuple[Any, int]] = [(INIT, 0)]
    seen = set(todo)
    while todo:
        state, i = todo.pop()
        if state == END:
            if i == len(keys):
                return True
            continue
        for _, evs, nxt in model.successors(state):
            proj = model_keys(model, evs)
            if keys[i : i + len(proj)] == proj and (nxt, i + len(proj)) not in seen:
                seen.add((nxt, i + len(proj)))
                todo.append((nxt, i + len(proj)))
    return False
