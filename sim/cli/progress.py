"""The progress of ``run`` and ``compare`` on stderr (unless ``--quiet``): runs done of the
total, the simulated time of the runs in flight (or that one is being checked), the
estimated time left. On a terminal a live ``rich`` bar; otherwise plain lines, one per
finished run, and one every :data:`HEARTBEAT` seconds while none finishes (never a silent
freeze).

The runs report their simulated time from a sampling thread that only reads the clock
(:func:`sim.experiments.runner.execute_task`), then :data:`~sim.experiments.rundir.CHECKING`
while their trace is checked, so the display never changes a run's bytes. In a process pool
the workers write into a ``multiprocessing`` manager's dict, polled twice a second here.

The estimate (:func:`eta`) is a run's mean wall time (of the finished runs; before the
first, extrapolated from the simulated progress of the runs in flight) times the work left,
shared by the workers: it does not grow while the runs in flight take no longer than that.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from sim.experiments.runner import RunRecord


#: seconds without a finished run after which a plain progress line is printed anyway
HEARTBEAT = 30.0
#: the simulated share a run in flight must have reached before it tells a run's length
_EXTRAPOLATE_FROM = 0.05


def _fmt_eta(seconds: float) -> str:
    seconds = max(0.0, seconds)
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def eta(
    walls: Sequence[float],
    running: Sequence[tuple[float, float | None]],
    queued: int,
    workers: int,
) -> float | None:
    """Seconds left, or None when nothing tells yet. ``walls``: the wall time of each
    finished run; ``running``: (wall seconds since it started, simulated share done, None
    while it is checked) per run in flight; ``queued``: runs not started; ``workers``: how
    many run at once. Never negative; with finished runs, never larger a moment later
    while every run in flight is younger than the mean."""
    if walls:
        per_run = sum(walls) / len(walls)
    else:
        guesses = [age / share for age, share in running if share and share >= _EXTRAPOLATE_FROM]
        if not guesses:
            return None
        per_run = max(guesses)
    left = sum(max(0.0, per_run - age) for age, _ in running) + queued * per_run
    return left / max(1, workers)


class SharedReporter:
    """A picklable reporter writing into a ``multiprocessing.Manager`` dict."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared

    def __call__(self, key: str, now: float) -> None:
        # the manager may be gone (shutting down): progress is optional
        with contextlib.suppress(Exception):
            self.shared[key] = now


class LiveProgress:
    """runs done / total, the simulated time of the running runs, estimated time left.

    ``report`` is the reporter to give the runner (None when disabled, or with an
    executor whose workers cannot reach this process, e.g. Dask); ``start``, ``record``
    and ``stop`` follow the experiment; ``say_errors``: print a failed run's error as it
    comes (``run`` prints them after its table instead). ``terminal``: a live bar, else
    plain lines on ``stream``; ``workers``: how many runs go at once; ``clock``: seconds;
    ``after``: a line said when the last run is done (what the command does next)."""

    def __init__(
        self,
        duration: float,
        enabled: bool,
        executor: str,
        say_errors: bool = True,
        *,
        terminal: bool = True,
        workers: int = 1,
        clock: Callable[[], float] = time.perf_counter,
        stream: TextIO | None = None,
        after: str = "",
    ) -> None:
        self.enabled = enabled
        self.say_errors = say_errors
        self.duration = duration
        self.terminal = terminal
        self.workers = workers
        self.clock = clock
        self.stream = stream
        self.after = after  # said once the last run is done (what the command does next)
        self.now: dict[str, float] = {}
        self.since: dict[str, float] = {}  # when each run in flight was first seen
        self.walls: list[float] = []
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.started = clock()
        self.said = self.started  # when the last plain line was printed
        self._progress: Any = None
        self._task: Any = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._manager: Any = None
        self._shared: Any = None
        self._finished: set[str] = set()
        self.report: Callable[[str, float], None] | None = None
        if enabled and executor == "inline":
            self.report = self._report
        elif enabled and executor == "processes":
            self._share()

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def _report(self, key: str, now: float) -> None:
        with self.lock:
            self.now[key] = now
            self.since.setdefault(key, self.clock())

    def _share(self) -> None:
        """A manager dict the pool's workers write into, polled by a thread. A stop is
        deferred while the manager starts: raised between its fork and its finaliser's
        registration, it left a manager nobody could shut down, serving forever, and the
        command waiting for it at exit (multiprocessing joins its children)."""
        from multiprocessing.managers import SyncManager

        from sim.processes import stops_deferred, worker_start

        self._manager = SyncManager()
        with stops_deferred():
            self._manager.start(worker_start, (os.getpid(),))
        self._shared = self._manager.dict()
        self.report = SharedReporter(self._shared)
        thread = threading.Thread(target=self._poll, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            try:
                snapshot = dict(self._shared)
            except Exception:
                return
            with self.lock:
                for key, now in snapshot.items():
                    if key in self.now or key not in self._finished:
                        self.now[key] = now
                        self.since.setdefault(key, self.clock())

    def start(self, todo: int, skipped: int) -> None:
        self.total = todo
        self.started = self.said = self.clock()
        if not self.enabled or todo == 0:
            if skipped:
                print(f"{skipped} finished run(s) reused", file=self._out())
            return
        if not self.terminal:
            if skipped:
                print(f"{skipped} finished run(s) reused", file=self._out())
            print(f"runs 0/{todo}: started", file=self._out(), flush=True)
            thread = threading.Thread(target=self._beat, daemon=True)
            thread.start()
            self._threads.append(thread)
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task("runs", total=todo, info="")
        self._progress.start()
        if skipped:
            self._progress.console.print(f"{skipped} finished run(s) reused")
        thread = threading.Thread(target=self._refresh, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _info(self) -> str:
        """``running: a t=12s, b checking of 300s  ETA 0:42`` (what is known of each)."""
        with self.lock:
            running = sorted(self.now.items())
            since = dict(self.since)
        now = self.clock()
        parts = []
        if running:

            def state(key: str, t: float) -> str:
                return f"{key} checking" if t < 0 else f"{key} t={t:.0f}s"

            shown = ", ".join(state(k, v) for k, v in running[:3])
            more = f" +{len(running) - 3}" if len(running) > 3 else ""
            parts.append(f"running: {shown}{more} of {self.duration:g}s")
        flight = [
            (
                now - since.get(k, now),
                None if v < 0 else (v / self.duration if self.duration else 0),
            )
            for k, v in running
        ]
        queued = max(0, self.total - self.done - len(running))
        left = eta(self.walls, flight, queued, self.workers)
        parts.append("ETA –" if left is None else f"ETA {_fmt_eta(left)}")
        return "  ".join(parts)

    def _refresh(self) -> None:
        while not self._stop.wait(0.5):
            self._progress.update(self._task, info=self._info())

    def _beat(self) -> None:
        """A plain line every :data:`HEARTBEAT` seconds without a finished run."""
        while not self._stop.wait(0.5):
            self.heartbeat()

    def heartbeat(self) -> None:
        """Print a plain line when none was for :data:`HEARTBEAT` seconds."""
        if self.clock() - self.said >= HEARTBEAT:
            self._say(f"runs {self.done}/{self.total}: {self._info()}")

    def _say(self, line: str) -> None:
        self.said = self.clock()
        print(line, file=self._out(), flush=True)

    def record(self, rec: RunRecord) -> None:
        self.done += 1
        if self._shared is not None:
            self._finished.add(rec.key)
            with contextlib.suppress(Exception):
                self._shared.pop(rec.key, None)
        with self.lock:
            self.now.pop(rec.key, None)
            self.since.pop(rec.key, None)
            if rec.wall > 0:
                self.walls.append(rec.wall)
        if rec.status == "error" and self.say_errors:
            message = f"error: {rec.key}: {rec.error}"
            if self._progress is not None:
                self._progress.console.print(message, style="red")
            else:
                print(message, file=self._out())
        if self._progress is not None:
            self._progress.update(self._task, advance=1, info=self._info())
        elif self.enabled and not self.terminal:
            took = f" in {rec.wall:.1f} s" if rec.wall > 0 else ""
            self._say(
                f"runs {self.done}/{self.total}: {rec.key} {rec.status}{took}; {self._info()}"
            )
        if self.done == self.total and self.after and self.enabled:
            if self._progress is not None:
                self._progress.console.print(self.after)
            else:
                self._say(self.after)

    def stop(self) -> None:
        """Stop the display and the manager (idempotent)."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._manager is not None:
            with contextlib.suppress(Exception):
                self._manager.shutdown()
            self._manager = None
