"""The live progress display of ``run`` and ``compare``: runs done of the total, the
simulated time of the runs in flight, the estimated time left (``rich``, on stderr, only
when it is a terminal and ``--quiet`` is not given).

The runs report their simulated time from a sampling thread that only reads the clock
(:func:`sim.experiments.runner.execute_task`), so the display never changes a run's
bytes. In a process pool the workers write into a ``multiprocessing`` manager's dict,
polled twice a second here.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.experiments.runner import RunRecord


def _fmt_eta(seconds: float) -> str:
    seconds = max(0.0, seconds)
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


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
    comes (``run`` prints them after its table instead)."""

    def __init__(
        self, duration: float, enabled: bool, executor: str, say_errors: bool = True
    ) -> None:
        self.enabled = enabled
        self.say_errors = say_errors
        self.duration = duration
        self.now: dict[str, float] = {}
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.started = time.perf_counter()
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

    def _report(self, key: str, now: float) -> None:
        with self.lock:
            self.now[key] = now

    def _share(self) -> None:
        """A manager dict the pool's workers write into, polled by a thread."""
        from multiprocessing.managers import SyncManager

        from sim.processes import worker_start

        self._manager = SyncManager()
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

    def start(self, todo: int, skipped: int) -> None:
        self.total = todo
        self.started = time.perf_counter()
        if not self.enabled or todo == 0:
            if skipped:
                print(f"{skipped} finished run(s) reused", file=sys.stderr)
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
        with self.lock:
            running = sorted(self.now.items())
        elapsed = time.perf_counter() - self.started
        parts = []
        if running:
            shown = ", ".join(f"{k} t={v:.0f}s" for k, v in running[:3])
            more = f" +{len(running) - 3}" if len(running) > 3 else ""
            parts.append(f"running: {shown}{more} of {self.duration:g}s")
        if self.done or running:
            # runs in flight count by their simulated progress
            partial = sum(min(1.0, v / self.duration) for _, v in running) if self.duration else 0
            rate = (self.done + partial) / elapsed if elapsed > 0 else 0
            if rate > 0:
                parts.append(f"ETA {_fmt_eta((self.total - self.done - partial) / rate)}")
        return "  ".join(parts)

    def _refresh(self) -> None:
        while not self._stop.wait(0.5):
            self._progress.update(self._task, info=self._info())

    def record(self, rec: RunRecord) -> None:
        self.done += 1
        if self._shared is not None:
            self._finished.add(rec.key)
            with contextlib.suppress(Exception):
                self._shared.pop(rec.key, None)
        with self.lock:
            self.now.pop(rec.key, None)
        if rec.status == "error" and self.say_errors:
            message = f"error: {rec.key}: {rec.error}"
            if self._progress is not None:
                self._progress.console.print(message, style="red")
            else:
                print(message, file=sys.stderr)
        if self._progress is not None:
            self._progress.update(self._task, advance=1, info=self._info())

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
