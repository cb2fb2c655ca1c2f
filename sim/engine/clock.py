"""Scheduling a callback after a delay, without a process and without a ``Timeout``.

``later(delay, value, callback)`` puts a minimal event on SimPy's queue as
``Environment.schedule`` does (priority ``NORMAL``, SimPy's own insertion counter), exactly
as ``env.timeout(delay, value).callbacks.append(callback)`` would order it, but skips
the ``Timeout``/``Event`` constructors. The callback receives the event; the value is
``event._value`` (what SimPy's ``step`` reads). (The kernel's ``later`` is an
:class:`Agenda`'s, with the same timing.)

Timing: the callback runs at ``now + delay``, after every event already scheduled for
that instant with the same priority (FIFO among equal times).

:class:`Deadlines` holds timers of one delay that are usually cancelled before they
fire (call timeouts), with the timing of ``later`` but one queued event at a time;
the transport keeps the one of each delay that every caller shares.
An :class:`Agenda` holds callbacks at times of their own (arrivals) with the timing of
``later``, also with one queued event at a time.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from typing import Any, Final

import simpy
import simpy.events

Later = Callable[[float, Any, Callable[[Any], None]], None]

#: The SimPy minor versions whose private clock (``_now``, ``_queue``, ``_eid``) the engine
#: reads and writes here and in :mod:`sim.engine.caller` (pyproject.toml pins the same).
SIMPY_KNOWN = ("4.1",)


def check_simpy(version: str) -> None:
    """Raise ImportError unless SimPy ``version`` is one of :data:`SIMPY_KNOWN`: another
    SimPy may lay out its clock otherwise, and the engine would misschedule silently."""
    if ".".join(version.split(".")[:2]) not in SIMPY_KNOWN:
        raise ImportError(
            f"SimPy {version} is installed; protomesh's engine reads the private clock of "
            f"SimPy {', '.join(SIMPY_KNOWN)} (install simpy>=4.1,<4.2)"
        )


check_simpy(simpy.__version__)

#: SimPy's priority of an ordinary scheduled event (``simpy.events.NORMAL`` of SimPy 4.1),
#: and the heap's push and pop: ``Final``, so that the compiled engine reads them as
#: constants, not from a module's dictionary at each event.
NORMAL: Final = 1
heappush: Final = heapq.heappush
heappop: Final = heapq.heappop
if simpy.events.NORMAL != NORMAL:  # pragma: no cover - check_simpy refuses such a SimPy
    raise ImportError(f"SimPy's NORMAL priority is {simpy.events.NORMAL}, not {NORMAL}")


class Pending:
    """An engine event that waits on SimPy's queue (a message, a timer, an appointment):
    what SimPy's ``step`` reads of it, ``callbacks`` (a tuple of functions of the event,
    set before it is queued; None once popped) and ``_ok``, always True: an engine event
    never fails. The run loop reads a :class:`Pending` natively when compiled
    (:mod:`sim.engine.loop`), any other event through Python."""

    __slots__ = ("callbacks",)

    _ok = True
    callbacks: Any  # each subclass sets it in its constructor


class Due:
    """The event SimPy's ``step`` pops: ``callbacks``, ``_ok``, ``_value``."""

    __slots__ = ("_ok", "_value", "callbacks")

    def __init__(self, value: Any, callback: Callable[[Any], None]) -> None:
        self.callbacks: list[Callable[[Any], None]] | None = [callback]
        self._ok = True
        self._value = value


def scheduler(env: simpy.Environment) -> Later:
    """``later(delay, value, callback)`` bound to ``env``: ``Environment.schedule``'s
    body (SimPy 4.1: ``_now``, ``_queue``, ``_eid``), else the method itself."""
    clock: Any = env
    if not _simpy41(env):  # pragma: no cover
        schedule: Any = env.schedule

        def later_public(delay: float, value: Any, callback: Callable[[Any], None]) -> None:
            schedule(Due(value, callback), NORMAL, delay)

        return later_public
    queue, eid = clock._queue, clock._eid

    def later(delay: float, value: Any, callback: Callable[[Any], None]) -> None:
        heappush(queue, (clock._now + delay, NORMAL, next(eid), Due(value, callback)))

    return later


class Timer(Pending):
    """A timer of :class:`Deadlines`: ``cancel()`` makes it a no-op. SimPy pops it as an
    event (``callbacks``, ``_ok``); its callback receives it (the value is ``_value``)."""

    __slots__ = ("_value", "callback", "cancelled", "due", "eid")

    def __init__(self, due: float, eid: int, value: Any, callback: Callable[[Any], None]):
        self.due = due
        self.eid = eid
        self._value = value
        self.callback = callback
        self.callbacks = None  # (Timer -> None, ...) once queued
        self.cancelled = False

    def cancel(self) -> None:
        """The timer will not run its callback (it costs no event if not yet queued). It
        lets go of its value at once: a cancelled timer waits in its FIFO until its time,
        and what it held (an invocation and its messages) would live as long."""
        self.cancelled = True
        self._value = None


class Deadlines:
    """Timers of one fixed ``delay``, most of them cancelled before they fire (call
    timeouts: the reply usually comes first), with at most one SimPy event queued.

    Timing: exactly that of ``later(delay, value, callback)`` at the time of ``set``, and
    in the same order among simultaneous events: ``set`` takes SimPy's next insertion
    number then (as ``schedule`` would) but queues nothing while an earlier timer is
    queued; timers are set in time order (``now + delay`` never decreases), kept in a
    FIFO, and only the first one not cancelled is on SimPy's queue, under its own time
    and number. A cancelled timer is dropped without an event unless it was already
    queued (then it fires as a no-op). This reads SimPy's ``_now`` and ``_eid`` and
    writes ``_queue`` (SimPy 4.1); without them every timer is scheduled at once."""

    __slots__ = ("_armed", "_eid", "_env", "_fifo", "_fire_cbs", "_lazy", "_queue", "delay")

    def __init__(self, env: simpy.Environment, delay: float) -> None:
        self._env: Any = env
        self.delay = delay
        self._lazy = _simpy41(env)
        self._queue: Any = getattr(env, "_queue", None)
        self._eid = _insertions(env)
        self._fifo: deque[Timer] = deque()
        self._armed = False
        self._fire_cbs = (self._fire,)

    def set(self, value: Any, callback: Callable[[Timer], None]) -> Timer:
        """A timer running ``callback(timer)`` at ``now + delay`` unless cancelled."""
        env = self._env
        if not self._lazy:  # pragma: no cover - another SimPy
            timer = Timer(env.now + self.delay, 0, value, callback)
            timer.callbacks = (self._fire_now,)
            env.schedule(timer, NORMAL, self.delay)
            return timer
        timer = Timer(env._now + self.delay, self._eid(), value, callback)
        self._fifo.append(timer)
        if not self._armed:
            self._arm()
        return timer

    def _arm(self) -> None:
        fifo = self._fifo
        while fifo and fifo[0].cancelled:
            fifo.popleft()
        if fifo:
            head = fifo[0]
            head.callbacks = self._fire_cbs
            heappush(self._queue, (head.due, NORMAL, head.eid, head))
            self._armed = True
        else:
            self._armed = False

    def _fire(self, timer: Timer) -> None:
        self._fifo.popleft()  # the queued one is always the first
        self._arm()
        if not timer.cancelled:
            timer.callback(timer)

    def _fire_now(self, timer: Timer) -> None:  # pragma: no cover - another SimPy
        if not timer.cancelled:
            timer.callback(timer)


class Appointment(Pending):
    """An entry of an :class:`Agenda`: SimPy pops it as an event (``callbacks``,
    ``_ok``) once it is queued; its callback receives it (the value is ``_value``)."""

    __slots__ = ("_value", "callback", "due", "eid", "queued")

    def __init__(self, due: float, eid: int, value: Any, callback: Callable[[Any], None]):
        self.due = due
        self.eid = eid
        self._value = value
        self.callback = callback
        self.callbacks = None  # (Appointment -> None, ...) once queued
        self.queued = False


class Agenda:
    """Callbacks each at a time of its own (the arrivals of many workflows), of which
    only the earliest waits on SimPy's queue, so the event heap stays small.

    Timing: exactly that of ``later(delay, value, callback)``, and the same order among
    simultaneous events: ``later`` takes SimPy's next insertion number at once, keeps the
    entry in a heap of its own, and queues it under its time and number when it is the
    earliest of the agenda (an entry queued stays queued). When SimPy pops one, it is the
    earliest of the agenda (the earliest is always queued, so it would be popped first);
    the next earliest is queued before its callback runs. This reads SimPy's ``_now``
    and ``_eid`` and writes ``_queue`` (SimPy 4.1); without them it is ``later`` itself."""

    __slots__ = ("_eid", "_env", "_fire_cbs", "_heap", "_later", "_queue")

    def __init__(self, env: simpy.Environment) -> None:
        self._env: Any = env
        self._later = None if _simpy41(env) else scheduler(env)
        self._queue: Any = getattr(env, "_queue", None)
        self._eid = _insertions(env)
        self._heap: list[tuple[float, int, Appointment]] = []
        self._fire_cbs = (self._fire,)

    def later(self, delay: float, value: Any, callback: Callable[[Any], None]) -> None:
        """Run ``callback(event)`` at ``now + delay`` (``event._value`` is ``value``)."""
        if self._later is not None:  # pragma: no cover - another SimPy
            self._later(delay, value, callback)
            return
        entry = Appointment(self._env._now + delay, self._eid(), value, callback)
        heap = self._heap
        heappush(heap, (entry.due, entry.eid, entry))
        if heap[0][2] is entry:
            self._put(entry)

    def _put(self, entry: Appointment) -> None:
        entry.queued = True
        entry.callbacks = self._fire_cbs
        heappush(self._queue, (entry.due, NORMAL, entry.eid, entry))

    def _fire(self, entry: Appointment) -> None:
        heap = self._heap
        heappop(heap)  # the entry SimPy popped: the earliest of the agenda
        if heap and not heap[0][2].queued:
            self._put(heap[0][2])
        entry.callback(entry)


def _insertions(env: simpy.Environment) -> Callable[[], int]:
    """SimPy 4.1's next insertion number of ``env`` (its counter's ``__next__``: no look-up
    of the builtin ``next`` per event), or a function that raises without that counter."""
    counter = getattr(env, "_eid", None)
    if counter is None:  # pragma: no cover - another SimPy (the callers never ask then)
        return _no_insertions
    bound: Callable[[], int] = counter.__next__
    return bound


def _no_insertions() -> int:  # pragma: no cover - another SimPy
    raise RuntimeError("this SimPy has no insertion counter (_eid)")


def _simpy41(env: simpy.Environment) -> bool:
    """Whether ``env`` has SimPy 4.1's ``_queue``, ``_eid`` and ``_now``."""
    return all(hasattr(env, a) for a in ("_queue", "_eid", "_now"))
