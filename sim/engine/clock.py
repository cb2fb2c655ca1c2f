"""Scheduling a callback after a delay, without a process and without a ``Timeout``.

``later(delay, value, callback)`` puts a minimal event on SimPy's queue with the public
``Environment.schedule`` (priority ``NORMAL``, SimPy's own insertion counter), exactly
as ``env.timeout(delay, value).callbacks.append(callback)`` would order it, but skips
the ``Timeout``/``Event`` constructors: the engine schedules one of these per hop. The
callback receives the event; the value is ``event._value`` (what SimPy's ``step``
reads).

Timing: the callback runs at ``now + delay``, after every event already scheduled for
that instant with the same priority (FIFO among equal times).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import simpy
from simpy.events import NORMAL

Later = Callable[[float, Any, Callable[[Any], None]], None]


class Due:
    """The event SimPy's ``step`` pops: ``callbacks``, ``_ok``, ``_value``."""

    __slots__ = ("_ok", "_value", "callbacks")

    def __init__(self, value: Any, callback: Callable[[Any], None]) -> None:
        self.callbacks: list[Callable[[Any], None]] | None = [callback]
        self._ok = True
        self._value = value


def scheduler(env: simpy.Environment) -> Later:
    """``later(delay, value, callback)`` bound to ``env``."""
    schedule: Any = env.schedule

    def later(delay: float, value: Any, callback: Callable[[Any], None]) -> None:
        schedule(Due(value, callback), NORMAL, delay)

    return later
