"""A command's standard output, which says when it cannot be written (issue 38, item 8).

While a command runs, ``sys.stdout`` writes through :class:`Sink`: a write the system
refuses (a full disk or ``/dev/full``: ENOSPC; EIO, EFBIG, EDQUOT...) raises
:class:`OutputFailed`, which no ``except OSError`` of the command swallows; the command
line prints it as one line and exits 2 (``sim.cli.main``). Everything written after the
first failure is dropped, so the interpreter's last flush at exit raises nothing again.
A reader that went away (``BrokenPipeError``, e.g. ``| head``) stays what it was: a quiet
stop. A stream that is not a file (a test's capture) is left as it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Buffer


class OutputFailed(Exception):
    """Writing the command's output failed: ``where`` (``<stdout>`` or a path), ``reason``."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(where, reason)
        self.where = where
        self.reason = reason

    def __str__(self) -> str:
        return f"cannot write {self.where}: {self.reason}"


class Sink(io.RawIOBase):
    """File descriptor ``fd``, raw: a refused write is :class:`OutputFailed`, and every
    write after it is dropped (the descriptor is never closed here)."""

    def __init__(self, fd: int, where: str) -> None:
        super().__init__()
        self._fd = fd
        self.where = where
        #: the first refused write (None: none yet): the command failed, even if it
        #: caught the exception
        self.error: OutputFailed | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Buffer) -> int | None:
        view = memoryview(data)
        if self.error is not None:
            return view.nbytes
        try:
            return os.write(self._fd, view)
        except (BrokenPipeError, BlockingIOError) as exc:
            if isinstance(exc, BlockingIOError):
                return None  # a non-blocking descriptor, full for now: written later
            raise
        except OSError as exc:
            self.error = OutputFailed(self.where, exc.strerror or str(exc))
            raise self.error from None


@contextlib.contextmanager
def guarded_stdout() -> Iterator[Sink | None]:
    """While inside, ``sys.stdout`` writes through a :class:`Sink` on its descriptor (the
    value: None when stdout is not a file), with its encoding and errors, flushed at each
    newline (as on a terminal: a command's stderr lines after a result it could not write
    never claim it was); the previous stream comes back on exit. Flushed on the way out,
    so a failure is raised here, not at the interpreter's exit."""
    previous = sys.stdout
    try:
        fd = previous.fileno()
        previous.flush()
    except (AttributeError, OSError, ValueError):  # not a file: a capture, a closed stream
        yield None
        return
    sink = Sink(fd, "<stdout>")
    stream = io.TextIOWrapper(
        io.BufferedWriter(sink),
        encoding=previous.encoding,
        errors=previous.errors,
        line_buffering=True,  # a refused line fails at once, before the lines after it
    )
    sys.stdout = stream
    try:
        yield sink
        stream.flush()
    finally:
        if sys.stdout is stream:
            sys.stdout = previous
        with contextlib.suppress(OutputFailed, OSError, ValueError):
            stream.flush()  # after a failure: drops what is left, raises nothing
        stream.detach()  # the descriptor stays open: it was never this stream's
