"""Processes protomesh starts never outlive it, and a signal ends a command in one line.

- :func:`die_with_parent`: ``prctl(PR_SET_PDEATHSIG)`` in a child, so the kernel kills it
  when protomesh dies, SIGKILL included (Linux; elsewhere a no-op).
- :func:`terminate`: SIGTERM to each process group, SIGKILL to what is left after ``grace``
  seconds; :func:`children` lists this process's children from ``/proc``.
- :class:`Stopped`, :func:`stop_on_signals_from_now` and :func:`stop_on_signals`: SIGINT and
  SIGTERM raise :class:`Stopped` in the main thread; the command cleans up and exits
  ``128 + signal`` (130, 143) with one line of message (``sim.cli.main`` prints it, or
  ``sim.__main__`` for a stop outside the command's handler).

A stop is raised only where the command's own code will see it (docs/experiments.md#signals):
one that lands while a module loads (where C extensions and class creation wrap it into an
exception of their own, which an ``except Exception`` may then swallow) or inside
:func:`stops_deferred` (an event loop that takes stops by its own receiver) is sent again
:data:`AGAIN` seconds later, and one raised inside a finaliser (where Python drops it) is sent
again by :func:`_redeliver`.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from importlib.machinery import ExtensionFileLoader
from types import FrameType

PR_SET_PDEATHSIG = 1
GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL when stopping children."""
STOPS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command."""
AGAIN = 0.02
"""Seconds after which a stop that could not be raised where it landed is sent again."""


class Stopped(KeyboardInterrupt):
    """A command stopped by a signal. A KeyboardInterrupt, so that what lets Ctrl-C through
    lets it through too: ``except Exception`` does not catch it, and asyncio re-raises it
    from a callback (where it logs and drops any other exception). Never exactly a
    KeyboardInterrupt, which Python, once caught, may still turn into a death by SIGINT."""

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
    import ctypes  # here: the command line imports this module before anything else

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
_DEFERRING: list[bool] = []
"""One entry per open :func:`stops_deferred` section."""
_IMPORT_SYSTEM = tuple(
    vars(sys.modules[name])
    for name in ("_frozen_importlib", "_frozen_importlib_external")
    if name in sys.modules
)
"""The namespaces of Python's import system (whatever name ``importlib`` gives them)."""
_EXTENSION_LOADING = frozenset(
    code
    for name in ("create_module", "exec_module")
    if (code := getattr(getattr(ExtensionFileLoader, name, None), "__code__", None)) is not None
)
"""The import system's calls into a C extension's initialisation."""
_FUNCTION = 0x0001
"""``inspect.CO_OPTIMIZED``: the code flag of a function (a module's and a class body's
code lack it)."""


def _wrapping(frame: FrameType | None) -> bool:
    """True when a stop raised at ``frame`` could be wrapped on its way out: a module is
    loading and, inside that, a function runs (called by class creation, which wraps any
    exception of ``__set_name__`` into a RuntimeError, or by a C extension such as
    pydantic-core, which wraps it into its own error) or a C extension initialises. A
    module's or a class body's own statements and the import system itself let it through
    as it is."""
    inside = False
    while frame is not None:
        if any(frame.f_globals is space for space in _IMPORT_SYSTEM):
            if inside or frame.f_code in _EXTENSION_LOADING:
                return True
        elif frame.f_code.co_flags & _FUNCTION:
            inside = True
        frame = frame.f_back
    return False


def _send_again(signum: int, after: float = AGAIN) -> None:
    """Send ``signum`` to this process ``after`` seconds from now, from a thread of its own (a
    signal sent by the handler itself would be handled at once, where it is)."""

    def send() -> None:
        time.sleep(after)
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), signum)

    _thread.start_new_thread(send, ())


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
        _send_again(exc.signum, 0.05)
        return
    _PREVIOUS_HOOK(unraisable)


_PREVIOUS_HOOK = sys.unraisablehook


def _stopper(once: bool) -> Callable[[int, FrameType | None], None]:
    """The handler that raises :class:`Stopped` (after which, when ``once``, both signals are
    ignored: the command is cleaning up); where it could be wrapped (:func:`_wrapping`) or
    inside :func:`stops_deferred`, it sends the signal again :data:`AGAIN` seconds later
    instead."""

    owner = os.getpid()

    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked child before its initializer: a worker's way
            _as_worker(signum)
            return
        if _DEFERRING or _wrapping(frame):
            _send_again(signum)
            return
        if once:
            for s in STOPS:
                signal.signal(s, signal.SIG_IGN)
        raise Stopped(signum)

    return handler


def _as_worker(signum: int) -> None:
    """What a pool worker does with ``signum`` (:func:`worker_start`): SIGINT ignored,
    SIGTERM its default (the process ends by it, nothing printed)."""
    if signum == signal.SIGTERM:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _raising(handler: Callable[[int, FrameType | None], None]) -> None:
    for signum in STOPS:
        _HANDLERS[signum] = handler
        signal.signal(signum, handler)
    sys.unraisablehook = _redeliver


def stop_on_signals_from_now() -> None:
    """From now on SIGINT and SIGTERM raise :class:`Stopped` in the main thread, whatever the
    parent left (SIGINT ignored, as a shell does for a background job; the signals blocked):
    the first thing ``python -m sim`` does, so that a command stopped while it starts still
    ends in one line."""
    _raising(_stopper(once=False))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # one sent meanwhile is raised here


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Stopped` in the main thread (once;
    a second signal during the clean-up is ignored). The previous handlers come back on
    exit."""
    previous = _current()
    _raising(_stopper(once=True))
    try:
        yield
    finally:
        _restore(previous)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """While inside, a stop that reaches protomesh's handler is sent again :data:`AGAIN`
    seconds later instead of raised: for an event loop in the main thread that takes stops
    through its own signal receiver once it listens. Raised in the loop before (or after),
    a stop escapes it half-way (anyio then waits forever for a task cancelled before it
    ever ran)."""
    _DEFERRING.append(True)
    try:
        yield
    finally:
        _DEFERRING.pop()


@contextlib.contextmanager
def keep_handlers() -> Iterator[None]:
    """SIGINT's and SIGTERM's handlers as they are now come back on exit (asyncio puts the
    defaults back when one of its signal receivers closes)."""
    previous = _current()
    try:
        yield
    finally:
        _restore(previous)


def _current() -> dict[int, object]:
    """SIGINT's and SIGTERM's handlers now."""
    return {s: signal.getsignal(s) for s in STOPS}


def _restore(previous: dict[int, object]) -> None:
    """Install ``previous`` (signal -> handler) again; a raising one is the one
    :func:`_redeliver` arms."""
    for s, h in previous.items():
        signal.signal(s, h)  # type: ignore[arg-type]
        if callable(h):
            _HANDLERS[s] = h
        else:
            _HANDLERS.pop(s, None)


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
