"""The live mesh's clocks: scenario time from the machine's monotonic clock, and the
outages an agent's process learns of when it comes back.

Every process of one deployment reads the same ``CLOCK_MONOTONIC`` (system-wide on
Linux), so ``SceneClock.now()`` of two processes agree: scenario seconds since the
deployment's origin, ``(monotonic − origin) × speed``. ``wall()`` is the UTC time of the
same instant (``detail.wall``). Sleeping ``d`` scenario seconds sleeps ``d / speed`` wall
seconds.

An agent whose process is stopped (SIGSTOP) cannot observe its own outage. The
controller appends the outage ``down up`` (scenario seconds) to the agent's down-log
before it resumes the process (SIGCONT), so whatever runs after the resume can ask
:meth:`DownLog.overlaps` whether a message or an execution met the outage.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from sim.vocabulary import WALL_FORMAT

__all__ = ["DownLog", "SceneClock"]


class SceneClock:
    """Scenario seconds on the shared monotonic clock (see the module)."""

    __slots__ = ("origin", "speed")

    def __init__(self, origin: float, speed: float) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be > 0, not {speed}")
        self.origin = origin  #: ``time.monotonic()`` at scenario time 0
        self.speed = speed  #: scenario seconds per wall second

    def now(self) -> float:
        """Scenario seconds since the origin (negative before it)."""
        return (time.monotonic() - self.origin) * self.speed

    def wall(self) -> str:
        """The UTC time of now, ISO 8601 with microseconds and ``Z``."""
        return datetime.now(UTC).strftime(WALL_FORMAT)

    def seconds(self, scene: float) -> float:
        """Wall seconds that ``scene`` scenario seconds take."""
        return max(0.0, scene) / self.speed

    async def sleep(self, scene: float) -> None:
        """Sleep ``scene`` scenario seconds."""
        await anyio.sleep(self.seconds(scene))

    async def until(self, t: float) -> None:
        """Sleep until scenario time ``t`` (at once when it is past)."""
        await anyio.sleep(self.seconds(t - self.now()))


class DownLog:
    """The outages of one agent, ``(down, up)`` in scenario seconds, read from the file
    the controller appends to; re-read only when the file grew (one ``stat`` a call)."""

    __slots__ = ("_intervals", "_size", "path")

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._size = -1
        self._intervals: tuple[tuple[float, float], ...] = ()

    def intervals(self) -> tuple[tuple[float, float], ...]:
        """Every outage recorded so far, in order."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return self._intervals
        if size != self._size:
            found: list[tuple[float, float]] = []
            for line in self.path.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 2:
                    found.append((float(parts[0]), float(parts[1])))
            self._intervals = tuple(found)
            self._size = size
        return self._intervals

    def overlaps(self, start: float, end: float) -> tuple[float, float] | None:
        """The first outage that overlaps ``[start, end]``, or None."""
        for down, up in self.intervals():
            if down <= end and up >= start:
                return down, up
        return None

    @staticmethod
    def append(path: str | Path, down: float, up: float) -> None:
        """Record the outage ``[down, up]`` (the controller, before it resumes the agent)."""
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{down:.9f} {up:.9f}\n")
