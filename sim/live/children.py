"""A deployment's child processes: what the controller knows of each, and the small
facts about a process it reads off ``/proc`` and the process's log."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.live.forked import Forked

__all__ = ["Child", "stderr_tail", "wait_stopped"]


@dataclass
class Child:
    """One child process and what the controller knows of it."""

    index: int
    agents: list[str]
    fds: list[int]
    proc: Forked | None = None
    ready: bool = False
    idle: bool = False
    warm: bool = False
    busy: int | None = None
    stopped: bool = False  # SIGSTOPped
    killed: bool = False
    generation: int = 0
    buffer: bytes = b""
    error: str = ""
    initiator: bool = False
    kills: list[float] = field(default_factory=list)


def wait_stopped(proc: Forked | None, limit: float = 1.0) -> None:
    """Return once ``proc`` is stopped (state ``T`` in ``/proc``), or after ``limit`` s:
    a SIGSTOP takes effect when the process next enters the kernel."""
    if proc is None:
        return
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            with open(f"/proc/{proc.pid}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            return
        if stat[stat.rfind(b")") + 2 :][:1] in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0.001)


def stderr_tail(path: Path) -> str:
    """``; its stderr: <last line>`` of a process's log, or ''."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return f"; its stderr: {lines[-1][:300]}" if lines else ""
