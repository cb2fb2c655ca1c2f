"""The vocabulary of the model's states: task codes, invocation phases, events, tasks.

Plain values (see :mod:`sim.verify.model` for the state layout); no behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# task codes (as the engine's workflows)
PENDING, SUCCEEDED, FAILED, CANCELLED, SKIPPED, WAITING, PREPARING, RUNNING = range(8)
DONE_OK = (SUCCEEDED, SKIPPED)
# invocation phases
ASK, FLIGHT, EXEC, RESUME, COLLECT = range(5)
SGD = "SGD"
INIT: tuple[Any, ...] = ("init",)
END: tuple[Any, ...] = ("end",)

INITIATOR_DOWN = (("status", "failed"), ("reason", "initiator_down"))
Event = tuple[str, int, str | None, str, str | None, tuple[tuple[str, Any], ...]]
Transition = tuple[int, tuple[Event, ...], Any]


class Task:
    """A compiled task of the verified workflow."""

    __slots__ = ("after", "args", "capability", "id", "index", "need", "rho", "tool")

    def __init__(self, index: int, spec: Any, wf: Any, order: Mapping[str, int]) -> None:
        self.index = index
        self.id: str = spec.id
        self.tool: str | None = spec.tool
        self.capability: str | None = spec.capability
        self.need: str = spec.tool if spec.tool is not None else spec.capability
        self.args: dict[str, Any] = dict(spec.args)
        self.rho: str = spec.protocol or wf.protocol
        self.after: tuple[int, ...] = tuple(order[a] for a in spec.after)


def code_of(state: Any) -> int:
    """A task state's code (its int, or the first member of its tuple)."""
    return state if isinstance(state, int) else state[0]


def isolated_tasks(tasks: Sequence[Task], truth: Mapping[str, Any]) -> dict[int, frozenset[str]]:
    """The tasks whose transitions commute with every other task's: tool tasks with no
    ≺ edge to or from them, no dependency relation on their tools (or fallback tools),
    and tools no other task uses (:mod:`sim.verify.search`); each with the tools it
    can call."""
    tools_of: dict[int, set[str]] = {}
    for task in tasks:
        if task.tool is None:
            continue
        seen: set[str] = set()
        todo = [task.tool]
        while todo:
            t = todo.pop()
            if t in seen or t not in truth:
                continue
            seen.add(t)
            for fm in truth[t].failure_modes or ():
                target = getattr(fm.recovery, "tool", None)
                if isinstance(target, str):
                    todo.append(target)
        tools_of[task.index] = seen
    related: set[str] = set()
    for name, desc in truth.items():
        for dep in desc.dependencies or ():
            related.update((name, dep.tool))
    out: dict[int, frozenset[str]] = {}
    for task in tasks:
        mine = tools_of.get(task.index)
        if mine is None or task.after or any(task.index in t.after for t in tasks):
            continue
        if mine & related:
            continue
        others = set().union(*(v for k, v in tools_of.items() if k != task.index))
        if any(t.tool is None for t in tasks if t.index != task.index) or mine & others:
            continue
        out[task.index] = frozenset(mine)
    return out
