"""Processes protomesh starts never outlive it, and a signal ends a command in one line.

- :func:`die_with_parent`: ``prctl(PR_SET_PDEATHSIG)`` in a child, so the kernel kills it
  when protomesh dies, SIGKILL included (Linux; elsewhere a no-op).
- :func:`terminate`: SIGTERM to each process group, SIGKILL to what is left after ``grace``
  seconds; :func:`children` lists this process's children from ``/proc``.
- :class:`Stopped` and :func:`stop_on_signals`: SIGINT and SIGTERM raise :class:`Stopped`
  in the main thread; the command cleans up and exits ``128 + signal`` (130, 143) with one
  line of message (``sim.cli.main`` prints it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from types import FrameType

PR_SET_PDEATHSIG = 1
GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL when stopping children."""


class Stopped(BaseException):
    """A command stopped by a signal (a BaseException, like KeyboardInterrupt, so that
    ``except Exception`` handlers on the way do not swallow it)."""

    def __init__(self, signum: int, detail: str = "") -> None:
        super().__init__(signum, detail)
        self.signum = signum
        self.detail = detail

    @property
    def code(self) -> int:
        """The exit code: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        return f"interrupted by {name}" + (f": {self.detail}" if self.detail else "")


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def children(pid: int | None = None) -> list[int]:
    """The pids whose parent is ``pid`` (default: this process), from ``/proc``."""
    parent = os.getpid() if pid is None else pid
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == parent:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone; nothing
    is reaped here, so the owner's own ``wait`` still works)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = stat[stat.rfind(b")") + 2 :].split()
    return bool(fields) and fields[0] not in (b"Z", b"X")


def terminate(pids: Iterable[int], *, group: bool = False, grace: float = GRACE) -> None:
    """SIGTERM each process (its whole group when ``group``), SIGKILL what is still alive
    after ``grace`` seconds (nothing is reaped: the owner waits for its children)."""
    targets = [p for p in pids if p > 0]

    def send(sig: int) -> None:
        for pid in targets:
            with contextlib.suppress(OSError):
                if group:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)

    send(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in targets):
        time.sleep(0.02)
    if any(alive(p) for p in targets):
        send(signal.SIGKILL)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(alive(p) for p in targets):
            time.sleep(0.02)


_HANDLERS: dict[int, object] = {}
"""The raising handler last installed per signal, to arm again by :func:`_redeliver`."""


def _redeliver(unraisable: sys.UnraisableHookArgs) -> None:
    """A stop raised while Python ran a finaliser (``__del__``, a weakref callback) is
    swallowed there and printed as "Exception ignored": arm the handler again and send
    the signal once more, so that it lands in the command's own code."""
    exc = unraisable.exc_value
    if isinstance(exc, Stopped) and exc.signum in _HANDLERS:
        try:
            signal.signal(exc.signum, _HANDLERS[exc.signum])  # type: ignore[arg-type]
        except ValueError:  # not the main thread: nothing to arm
            return
        # not from here: a signal sent now would be handled inside this hook again
        import threading

        threading.Timer(0.05, os.kill, (os.getpid(), exc.signum)).start()
        return
    _PREVIOUS_HOOK(unraisable)


_PREVIOUS_HOOK = sys.unraisablehook


def _raising(handler: object, *signums: int) -> None:
    for signum in signums:
        _HANDLERS[signum] = handler
        signal.signal(signum, handler)  # type: ignore[arg-type]
    sys.unraisablehook = _redeliver


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Stopped` in the main thread (once;
    a second signal during the clean-up is ignored). The previous handlers come back on
    exit."""

    def handler(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _raising(handler, signal.SIGINT, signal.SIGTERM)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
            if callable(h):
                _HANDLERS[s] = h
            else:
                _HANDLERS.pop(s, None)


def stop_on_sigterm() -> None:
    """From now on SIGTERM raises :class:`Stopped` in the main thread (as SIGINT raises
    KeyboardInterrupt): a command stopped while it starts still ends in one line."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Stopped(signum)

    _raising(handler, signal.SIGTERM)


def ignore_signals() -> None:
    """SIGINT and SIGTERM ignored from now on (a command whose exit code is decided)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def worker_start(parent: int) -> None:
    """Initializer of a pool worker of process ``parent``: the parent stops it (SIGINT
    ignored, SIGTERM default) and it dies with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
