"""A results folder that cannot be corrupted: one writer at a time, atomic files and runs.

- **One writer per tree**: :class:`FolderLock` takes an exclusive ``fcntl.flock`` on
  ``<base>/.lock`` (the holder's pid is written in it), then makes sure no other process holds
  the lock of a folder above ``base`` or inside it: a folder inside a locked folder is locked
  too, and so is a folder that contains a locked one (``run --out X`` while ``compare --out
  X/inner`` runs). A second writer fails at once with :class:`FolderBusy` naming the pid and
  the folder it holds, or waits for it (``--wait``). The kernel drops the lock when the
  holder dies, even by SIGKILL. Taking one's own lock before looking at the others' makes
  the check race-free: of two processes on nested folders, the later to look sees the other.
- **Atomic writes**: every file and every run directory is written under a name unique to its
  writer (``.<name>.tmp-<pid>-<random>``) and renamed into place, so a reader sees it whole or
  not at all; leftovers are removed by the next holder of the lock, except those whose
  writer (the pid in the name) is another process still alive.
- **Verified reuse**: a run's ``run.json`` records the SHA-256 of its files; a run is reused
  only when every recorded file still has that digest (:func:`damage`).
- **Storage errors**: an ``OSError`` while writing (``ENOSPC`` above all) becomes
  :class:`StorageError`: the path and the reason, one line.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType

from sim.atomic import StorageError as StorageError  # re-exported: one place, sim.atomic
from sim.atomic import temp_name as temp_name
from sim.atomic import write_atomic as write_atomic

LOCK_FILE = ".lock"


class FolderBusy(Exception):
    """Another process holds the results folder's lock."""


class FolderLock:
    """An exclusive lock on a results folder, held from ``__enter__`` to ``__exit__``.

    ``wait`` False: :class:`FolderBusy` at once when another process holds it, a folder
    above it or one inside it; True: block until they are free (``on_wait`` is called once
    with the first holder's pid before blocking)."""

    def __init__(
        self, base: Path, *, wait: bool = False, on_wait: Callable[[str], None] | None = None
    ) -> None:
        self.base = base
        self.wait = wait
        self.on_wait = on_wait
        self._fd: int | None = None
        self._told = False

    def _holder(self, fd: int) -> str:
        with contextlib.suppress(OSError):
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            if text:
                return text
        return "unknown"

    def __enter__(self) -> FolderLock:
        path = self.base / LOCK_FILE
        self._told = False
        while True:
            fd = self._own(path)
            try:
                conflict, leftovers = survey(self.base)
            except OSError as exc:
                os.close(fd)
                raise StorageError.of(exc, self.base) from None
            if conflict is None:
                break
            os.close(fd)  # never hold ours while waiting for another's: no deadlock
            other, holder = conflict
            if not self.wait:
                raise FolderBusy(
                    f"{self.base} is in use by another protomesh process (pid {holder}, "
                    f"which holds {other}); wait for it to finish, or pass --wait to queue "
                    "behind it"
                )
            self._waiting(holder)
            wait_for(other / LOCK_FILE)
        self._fd = fd
        for leftover in leftovers:
            _remove(leftover)
        return self

    def _waiting(self, holder: str) -> None:
        """Say once (``on_wait``) that this lock waits for ``holder``."""
        if self.on_wait is not None and not self._told:
            self.on_wait(holder)
        self._told = True

    def _own(self, path: Path) -> int:
        """A descriptor of ``base``'s lock file, exclusively locked (blocking with ``wait``)."""
        try:
            self.base.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError.of(exc, path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder(fd)
            if not self.wait:
                os.close(fd)
                raise FolderBusy(
                    f"{self.base} is in use by another protomesh process (pid {holder}); "
                    "wait for it to finish, or pass --wait to queue behind it"
                ) from None
            self._waiting(holder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # the holder's pid, written before it looks at the others' locks
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise StorageError.of(exc, path) from None
        return fd

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None


def is_leftover(name: str) -> bool:
    """True for a temporary name of :func:`temp_name` (or the older ``.<name>.tmp``)."""
    return name.startswith(".") and (".tmp-" in name or name.endswith(".tmp"))


def writer_pid(name: str) -> int | None:
    """The pid a :func:`temp_name` carries (``.<name>.tmp-<pid>-<random>``), or None."""
    _, sep, tail = name.rpartition(".tmp-")
    pid, dash, _ = tail.partition("-")
    return int(pid) if sep and dash and pid.isdigit() and len(pid) <= 10 else None


def _alive_elsewhere(pid: int | None) -> bool:
    """Whether ``pid`` is a process other than this one that is still alive (a pid reused
    since keeps its leftover: kept, never deleted wrongly)."""
    if pid is None or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def lock_holder(lock: Path) -> str | None:
    """The pid (as written in it) of the process holding ``lock``'s flock; None when no
    process holds it or it cannot be opened. Tested with a shared lock taken and dropped
    at once, so a holder is seen whatever it is doing."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        text = ""
        with contextlib.suppress(OSError):
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return text or "unknown"
    except OSError:
        return None
    finally:
        os.close(fd)  # drops the shared lock, if taken
    return None


def wait_for(lock: Path) -> None:
    """Block until no process holds ``lock`` (returns at once if it cannot be opened)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


def survey(base: Path) -> tuple[tuple[Path, str] | None, list[Path]]:
    """What the holder of ``base``'s lock must know: the first folder above or inside
    ``base`` whose lock another process holds (with that holder's pid), or None; and the
    leftovers under ``base`` it may delete (their writers are gone). Call with ``base``'s
    own lock held."""
    resolved = base.resolve()
    for folder in resolved.parents:
        holder = lock_holder(folder / LOCK_FILE)
        if holder is not None:
            return (folder, holder), []
    leftovers: list[Path] = []
    for root, dirs, files in os.walk(base):
        here = Path(root)
        if here != base and LOCK_FILE in files:
            holder = lock_holder(here / LOCK_FILE)
            if holder is not None:
                return (here, holder), []
        for name in [*dirs, *files]:
            if is_leftover(name):
                if name in dirs:
                    dirs.remove(name)
                if not _alive_elsewhere(writer_pid(name)):
                    leftovers.append(here / name)
    return None, sorted(leftovers)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def remove_leftovers(base: Path) -> list[Path]:
    """Delete every temporary file or directory under ``base`` whose writer is gone (call
    with the lock held). Returns what was removed; nothing when another process holds a
    folder above or inside ``base``."""
    if not base.is_dir():
        return []
    conflict, leftovers = survey(base)
    if conflict is not None:
        return []
    for path in leftovers:
        _remove(path)
    return leftovers


def publish(tmp: Path, final: Path) -> None:
    """Put the directory ``tmp`` in the place of ``final`` (renames only: a reader sees the
    old run or the new one, never a mixture)."""
    old: Path | None = None
    if final.exists():
        old = temp_name(final)
        os.replace(final, old)
    os.replace(tmp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def digest(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def digests(directory: Path, names: Iterable[str]) -> dict[str, str]:
    """``{name: sha256}`` of the files ``names`` in ``directory``."""
    return {name: digest(directory / name) for name in names}


def damage(directory: Path, recorded: Mapping[str, object]) -> str | None:
    """Why the files of ``directory`` do not match the digests in ``recorded`` (None: they
    all do; an empty record is damage too: nothing can be verified)."""
    if not recorded:
        return "run.json records no file digests"
    for name, expected in sorted(recorded.items()):
        try:
            actual = digest(directory / name)
        except FileNotFoundError:
            return f"{name} is missing"
        except OSError as exc:
            return f"{name} cannot be read: {exc.strerror or exc}"
        if actual != expected:
            return f"{name} differs from the digest in run.json"
    return None
