"""The vocabulary of the model's states: task codes, invocation phases, events, tasks.

Plain values (see :mod:`sim.verify.model` for the state layout), and the pure functions
on them the model and its search share.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from typing import Any

from sim.calculus.mcp.dialects import Dialect, builtin_dialect

# task codes (as the engine's workflows)
PENDING, SUCCEEDED, FAILED, CANCELLED, SKIPPED, WAITING, PREPARING, RUNNING = range(8)
DONE_OK = (SUCCEEDED, SKIPPED)
# invocation phases
ASK, FLIGHT, EXEC, RESUME, COLLECT = range(5)
INIT: tuple[Any, ...] = ("init",)
END: tuple[Any, ...] = ("end",)

#: a task just made ready: its own need, route and view not chosen yet, no fallback
FRESH: tuple[Any, ...] = (PREPARING, None, 0)
INITIATOR_DOWN = (("status", "failed"), ("reason", "initiator_down"))
Event = tuple[str, int, str | None, str, str | None, tuple[tuple[str, Any], ...]]
Transition = tuple[int, tuple[Event, ...], Any]


class Task:
    """A compiled task of the verified workflow."""

    __slots__ = ("after", "args", "capability", "dialect", "id", "index", "need", "rho", "tool")

    def __init__(
        self,
        index: int,
        spec: Any,
        wf: Any,
        order: Mapping[str, int],
        dialects: Mapping[str, Dialect],
    ) -> None:
        self.index = index
        self.id: str = spec.id
        self.tool: str | None = spec.tool
        self.capability: str | None = spec.capability
        self.need: str = spec.tool if spec.tool is not None else spec.capability
        self.args: dict[str, Any] = dict(spec.args)
        self.rho: str = wf.rho_of(spec)
        #: how ρ's invocations go, as its protocol declares
        self.dialect: Dialect = dialects.get(self.rho) or builtin_dialect(self.rho)
        self.after: tuple[int, ...] = tuple(order[a] for a in spec.after)


def code_of(state: Any) -> int:
    """A task state's code (its int, or the first member of its tuple)."""
    return state if isinstance(state, int) else state[0]


def active(codes: Sequence[Any]) -> Iterator[int]:
    """The indices of the tasks preparing or running (the tuple-valued entries of a
    state's ``tasks``: every other task state is an int), in index order; lazy, and
    scanned in C (no interpreted step per task)."""
    return compress(range(len(codes)), map(isinstance, codes, repeat(tuple)))


def dependents(tasks: Sequence[Task]) -> tuple[tuple[int, ...], ...]:
    """Per task, the tasks ordered after it under ≺ (those its end can make ready)."""
    out: list[list[int]] = [[] for _ in tasks]
    for task in tasks:
        for j in task.after:
            out[j].append(task.index)
    return tuple(tuple(x) for x in out)


def watchers(possible: Sequence[frozenset[str]], tools: Iterable[str]) -> tuple[int, ...]:
    """The tasks (by index, ascending) whose tool can be one of ``tools``, where
    ``possible[j]`` is every tool task j can be calling (:meth:`Model._tool_of`)."""
    wanted = frozenset(tools)
    return tuple(j for j, mine in enumerate(possible) if mine & wanted)


def batch_cuts(
    trs: Sequence[Transition], index: int, initiator: str, exact: bool
) -> list[Transition]:
    """The engine prepares the tasks made ready together in index order, each at once as
    far as its view is known; a failure there with nothing else running ends the
    instance before the later tasks of that batch start. So each transition of task
    ``index``'s discovery that fails without discovering (no ``list``, no ``timeout``),
    with every other task over, waiting or untouched after it, has a twin ending the
    instance (the untouched tasks never start). A discovery that gives up is never at
    once (even when the exchange was another instance's and left no event here)."""
    out: list[Transition] = []
    for i, evs, nxt in trs:
        if nxt is END or not nxt[1] or any(ev[0] in ("list", "timeout") for ev in evs):
            continue
        if any(ev[0] == "_failed" and ("reason", "discovery_timeout") in ev[5] for ev in evs):
            continue
        # something runs but the untouched tasks after this one (C-level scans)
        codes = nxt[0]
        later = codes[index + 1 :]
        if any(map(isinstance, codes[: index + 1], repeat(tuple))) or sum(
            map(isinstance, later, repeat(tuple))
        ) > later.count(FRESH):
            continue
        status = nxt[1]
        detail = (("status", status[0]), ("reason", status[1])) if exact else ()
        out.append((i, (*evs, ("wf_end", -1, None, initiator, None, detail)), END))
    return out


def callable_tools(truth: Mapping[str, Any], tool: str) -> frozenset[str]:
    """``tool`` and the fallback tools its failure modes can call, transitively (those
    the scenario declares)."""
    seen: set[str] = set()
    todo = [tool]
    while todo:
        t = todo.pop()
        if t in seen or t not in truth:
            continue
        seen.add(t)
        for fm in truth[t].failure_modes or ():
            target = getattr(fm.recovery, "tool", None)
            if isinstance(target, str):
                todo.append(target)
    return frozenset(seen)


def isolated_tasks(tasks: Sequence[Task], truth: Mapping[str, Any]) -> dict[int, frozenset[str]]:
    """The tasks whose transitions commute with every other task's: tool tasks with no
    ≺ edge to or from them, no dependency relation on their tools (or fallback tools),
    and tools no other task uses (:mod:`sim.verify.search`); each with the tools it
    can call."""
    tools_of = {t.index: set(callable_tools(truth, t.tool)) for t in tasks if t.tool is not None}
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
