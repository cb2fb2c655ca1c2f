"""Scheduling a callback after a delay, without a process and without a ``Timeout``.

``later(env, delay, value, callback)`` puts a minimal event on SimPy's queue exactly as
``env.timeout(delay, value).callbacks.append(callback)`` would (same priority, same
insertion counter, so the order of simultaneous events is SimPy's own), but skips the
``Timeout``/``Event`` constructors: the engine schedules one of these per hop. It
relies on ``Environment._queue``/``_eid``/``_now`` (SimPy 4.1); :func:`check` verifies
them once per replication and the engine falls back to ``Timeout`` if they change.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from typing import Any

import simpy
from simpy.events import NORMAL, Timeout


class Later:
    """The event SimPy's ``step`` pops: ``callbacks``, ``_ok`` and ``_value``."""

    __slots__ = ("_ok", "_value", "callbacks")

    def __init__(self, value: Any, callback: Callable[[Any], None]) -> None:
        self.callbacks: list[Callable[[Any], None]] | None = [callback]
        self._ok = True
        self._value = value


def check(env: simpy.Environment) -> bool:
    """Whether ``env`` has the internals :func:`later` uses."""
    return all(hasattr(env, a) for a in ("_queue", "_eid", "_now"))


def scheduler(env: simpy.Environment) -> Callable[[float, Any, Callable[[Any], None]], None]:
    """``later(delay, value, callback)`` bound to ``env`` (fast path when possible)."""
    if not check(env):  # pragma: no cover - another SimPy

        def slow(delay: float, value: Any, callback: Callable[[Any], None]) -> None:
            Timeout(env, delay, value).callbacks.append(callback)

        return slow
    queue: Any = env._queue
    eid = env._eid

    def later(delay: float, value: Any, callback: Callable[[Any], None]) -> None:
        heappush(queue, (env._now + delay, NORMAL, next(eid), Later(value, callback)))

    return later
