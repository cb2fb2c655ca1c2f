"""A task's readiness in the untimed model (:mod:`sim.verify.model`), as the engine's
``_ready`` (SPEC §4): wait for the tools its view requires or is fed by, fail when one
of them failed, skip when an exclusive one ran, else invoke.

The check reads only the tasks that can matter (a cost per step flat in the number
of tasks): those whose tool the view can require or exclude (:meth:`Readiness._watched`)
and those whose tool the caller's latest view can say feeds it
(:meth:`Readiness._feeders`); for every other task the engine's loop over all tasks
does nothing. Both are computed once per view and tool, in index order, so the first
deciding task and the events are those of the loop over all tasks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from sim.verify.invocation import Steps
from sim.verify.knowledge import ToolModel
from sim.verify.states import (
    CANCELLED,
    FAILED,
    RUNNING,
    SKIPPED,
    SUCCEEDED,
    WAITING,
    Event,
    Task,
    Transition,
    code_of,
    watchers,
)


class Readiness(Steps):
    """The readiness steps; the attributes are the model's (set by
    :class:`~sim.verify.model.Model`)."""

    feeds_known: bool
    #: the route options (ids) of a task's own need or a fallback (the model's)
    options_for: Callable[[Task, str | None], tuple[int, ...]]
    #: what the views of a tool the caller can learn say of feeding another (the model's)
    _feed_values: Callable[[str, str], frozenset[bool]]
    _watch: dict[tuple[str, frozenset[str]], tuple[int, ...]]
    _feeders_of: dict[str, tuple[int, ...]]
    _possible: tuple[frozenset[str], ...] | None

    def _tool_of(self, tasks: tuple[Any, ...], j: int) -> str | None:
        task = self.tasks[j]
        if task.tool is not None:
            return task.tool
        ts = tasks[j]
        if isinstance(ts, tuple) and ts[0] == RUNNING and ts[6] == 0:
            return self.option_list[ts[1]].tool
        return None

    def _ready(
        self,
        state: tuple[Any, ...],
        task: Task,
        oid: int,
        evs: list[Event],
        out: list[Transition],
    ) -> None:
        """As the engine's ``_ready``: wait for known dependencies, skip, or invoke; once
        per way the caller's latest views can order the task by ``ProducesInputFor``."""
        tasks, latest = state[0], state[3]
        me = self.option_list[oid].tool
        fed: dict[int, frozenset[bool]] = {}
        if self.feeds_known:
            requires = self.view(self.option_list[oid]).requires
            for j in self._feeders(me):  # every other task's latest view is "no"
                other = self._tool_of(tasks, j)
                if j != task.index and other is not None and other not in requires:
                    fed[j] = self._fed(other, me, latest)
        js = sorted(fed)
        for values in itertools.product(*(sorted(fed[j]) for j in js)):
            chosen = dict(zip(js, values, strict=True))
            self._ready_as(state, task, oid, list(evs), out, chosen)

    def _fed(self, other: str, me: str, latest: tuple[Any, ...]) -> frozenset[bool]:
        """Whether the caller's latest view of ``other`` says it produces input for ``me``:
        as any view of ``other`` the caller can learn says (the engine keeps the latest
        view per caller across instances: another one may have learned it last), or not
        known while this instance has not discovered ``other``."""
        values = self._feed_values(other, me)
        return values if other in dict(latest) else values | {False}

    def possible_tools(self) -> tuple[frozenset[str], ...]:
        """Per task, every tool it can be calling as :meth:`_tool_of` sees it: its own,
        or a capability's, each tool of the options of its own need."""
        if self._possible is None:
            self._possible = tuple(
                frozenset([t.tool])
                if t.tool is not None
                else frozenset(self.option_list[o].tool for o in self.options_for(t, None))
                for t in self.tasks
            )
        return self._possible

    def _watched(self, view: ToolModel) -> tuple[int, ...]:
        """The tasks whose tool ``view`` can require or exclude: the only ones its
        readiness reads besides those fed to it (ascending)."""
        key = (view.name, view.fields)
        hit = self._watch.get(key)
        if hit is None:
            hit = watchers(self.possible_tools(), (*view.requires, *view.exclusive))
            self._watch[key] = hit
        return hit

    def _feeders(self, me: str) -> tuple[int, ...]:
        """The tasks whose tool's latest view can say anything but "does not feed
        ``me``" (ascending); for every other task, :meth:`_fed` is ``{False}``."""
        hit = self._feeders_of.get(me)
        if hit is None:
            tools = {tool for mine in self.possible_tools() for tool in mine}
            saying = [t for t in sorted(tools) if self._feed_values(t, me) != {False}]
            hit = self._feeders_of[me] = watchers(self.possible_tools(), saying)
        return hit

    def _ready_as(
        self,
        state: tuple[Any, ...],
        task: Task,
        oid: int,
        evs: list[Event],
        out: list[Transition],
        fed: dict[int, bool],
    ) -> None:
        """``_ready`` where ``fed[j]`` says whether task j's tool is known to feed it."""
        tasks, status, known, latest = state
        option = self.option_list[oid]
        view = self.view(option)
        me = option.tool
        wait = False
        js = self._watched(view)
        if any(fed.values()):
            js = tuple(sorted({*js, *(j for j, v in fed.items() if v)}))
        for j in js:
            other = self._tool_of(tasks, j)
            if j == task.index or other is None:
                continue
            required = other in view.requires or fed.get(j, False)
            code = code_of(tasks[j])
            if required:
                if code in (FAILED, CANCELLED, SKIPPED):
                    out.append((task.index, *self._over(state, task, FAILED, "dependency", evs)))
                    return
                if code != SUCCEEDED:
                    wait = True
            if other in view.exclusive and code in (RUNNING, SUCCEEDED, FAILED):
                evs.append(self._ev("skip", task, me, ("exclusive_with", other)))
                out.append((task.index, *self._over(state, task, SKIPPED, "exclusive", evs)))
                return
        if wait:
            new = list(tasks)
            new[task.index] = WAITING
            evs2, nxt = self._advance(evs, new, status, known, latest, ())
            out.append((task.index, tuple(evs2), nxt))
            return
        evs_t, nxt = self._invoke(state, task, oid, 0, evs)
        out.append((task.index, evs_t, nxt))
