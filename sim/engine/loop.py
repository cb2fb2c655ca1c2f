"""The run loop: steps SimPy itself, exactly as ``Environment.run(until=event)`` does
(``Environment.step``'s body inlined: the same events popped in the same order, the same
callbacks, the same crash of a failed event nobody defused; it reads SimPy 4's
``_queue`` and writes its ``_now``; the engine's own events, each a
:class:`~sim.engine.clock.Pending`, are read as that class, the others through Python),
so a run the guard does not stop is byte-identical to an unguarded one. The budgets of
its :class:`~sim.engine.guard.Guard` are looked at once every :data:`CHECK_EVERY`
events, never per event. While it runs, the objects that existed before it are frozen
out of the garbage collector's scans when the world is large
(:func:`sim.longlived.frozen`: it is built by then; a full collection comes first),
unless someone froze objects already, and the collector's youngest generation is
collected every :data:`GC_YOUNG` net allocations instead of 700; both are undone at the
end.
"""

from __future__ import annotations

import gc
import math
import time
from itertools import repeat
from typing import TYPE_CHECKING, Any

from simpy.core import EmptySchedule, StopSimulation

from sim.engine.clock import Pending, heappop
from sim.engine.guard import MEMORY_HEADROOM, Guard, Runaway, resident_bytes, size_text
from sim.longlived import frozen

if TYPE_CHECKING:
    import simpy
    from simpy.events import Event

#: Events between two looks at the budget.
CHECK_EVERY = 4096
#: The collector's generation-0 threshold while a run loop runs (Python's default is
#: 700): the engine's per-event objects are freed by reference counting, and at the
#: default the collector re-scans the routes, paths and views compiled during the run
#: (a few per cent of a 100,000-instance run on 10,000 agents); cycles are still collected.
GC_YOUNG = 100_000
#: The fewest agents of a world that the run loop freezes out of the collector's scans
#: (its routes, paths and views are what the collector would scan again and again); a
#: smaller world costs the collector little, and left unfrozen it is counted as the
#: collector counts every object, so many small replications in one process stay flat.
FREEZE_AGENTS = 1_000


def run_until(env: simpy.Environment, until: Event, guard: Guard, large: bool = False) -> None:
    """Step ``env`` until ``until`` is processed, as ``env.run(until=until)``; raise
    :class:`Runaway` when a budget of ``guard`` is passed. ``large``: the world is large
    enough to be frozen out of the collector's scans (:data:`FREEZE_AGENTS`)."""
    if until.callbacks is None:
        return
    until.callbacks.append(StopSimulation.callback)
    limit = guard.max_events if guard.max_events is not None else math.inf
    started = time.perf_counter()
    deadline = started + guard.max_wall if guard.max_wall is not None else math.inf
    threshold = gc.get_threshold()
    with frozen(large):
        gc.set_threshold(max(threshold[0], GC_YOUNG), *threshold[1:])
        try:
            _steps(env, until, limit, deadline, started, guard)
        finally:
            gc.set_threshold(*threshold)


def _steps(
    env: Any, until: Event, limit: float, deadline: float, started: float, guard: Guard
) -> None:
    """The loop of :func:`run_until` (``Environment.step`` inlined, see the module)."""
    queue = env._queue
    events = 0
    event: Any = None
    callbacks: Any = ()
    callback: Any = None
    try:
        while True:
            for _ in repeat(None, CHECK_EVERY):
                try:
                    env._now, _, _, event = heappop(queue)
                except IndexError:
                    raise EmptySchedule from None
                if isinstance(event, Pending):  # the engine's own: read natively, never fails
                    callbacks, event.callbacks = event.callbacks, None
                    for callback in callbacks:
                        callback(event)
                    continue
                callbacks, event.callbacks = event.callbacks, None
                for callback in callbacks:
                    callback(event)
                if not event._ok and not hasattr(event, "_defused"):
                    # a failed event nobody defused crashes the run, as in SimPy
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
            events += CHECK_EVERY
            if events >= limit:
                raise Runaway(
                    f"--max-events {guard.max_events}", events, time.perf_counter() - started
                )
            if deadline != math.inf:
                now = time.perf_counter()
                if now >= deadline:
                    raise Runaway(f"--max-wall {guard.max_wall:g}", events, now - started)
            if (
                guard.max_memory is not None
                and resident_bytes() > guard.max_memory - MEMORY_HEADROOM
            ):
                gc.collect()  # what is garbage (an earlier run's world) is not the run's
                resident = resident_bytes()
                if resident > guard.max_memory - MEMORY_HEADROOM:
                    budget = f"--max-memory {size_text(guard.max_memory)}: resident "
                    budget += f"{size_text(resident)}"
                    raise Runaway(budget, events, time.perf_counter() - started)
    except StopSimulation:
        # as SimPy's step: the event's remaining callbacks run when the simulation resumes
        event.callbacks = callbacks[callbacks.index(callback) + 1 :]
        env.schedule(event, -1)  # SimPy's EventPriority(-1): before URGENT
        return
    except EmptySchedule:
        raise RuntimeError(
            f'No scheduled events left but "until" event was not triggered: {until}'
        ) from None
