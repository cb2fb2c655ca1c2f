"""Files written whole or not at all, and the one error of a write that failed.

:func:`write_atomic` writes a file under a name unique to its writer
(:func:`temp_name`: ``.<name>.tmp-<pid>-<random>``) and renames it into place, so a
reader sees the old file or the new one, never half of one; any ``OSError`` (a full
disk above all) is a :class:`StorageError`: the path and the reason, one line. A leaf:
results folders (:mod:`sim.experiments.store`), the explorer, counterexamples and every
command's ``--out`` share it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path


class StorageError(Exception):
    """Writing results failed: ``path`` and ``reason`` (e.g. "No space left on device")."""

    def __init__(self, path: str, reason: str, kept: tuple[str, ...] = ()) -> None:
        super().__init__(path, reason, kept)
        self.path = path
        self.reason = reason
        self.kept = kept
        """The finished runs kept in the folder (filled in by the experiment)."""

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.reason}"

    @classmethod
    def of(cls, exc: OSError, where: Path | str) -> StorageError:
        """From an ``OSError``; ``where`` names the place when the error has no file name."""
        path = exc.filename if exc.filename is not None else where
        reason = exc.strerror or (errno.errorcode.get(exc.errno or 0) if exc.errno else str(exc))
        return cls(str(path), str(reason or exc))


def temp_name(final: Path) -> Path:
    """A sibling of ``final`` no other writer can pick: ``.<name>.tmp-<pid>-<random>``."""
    return final.with_name(f".{final.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def write_atomic(path: Path, text: str, *, parents: bool = True) -> None:
    """Write ``text`` to ``path`` under a temporary name, then rename it into place;
    :class:`StorageError` on any ``OSError`` (the temporary file is removed). ``parents``:
    create missing folders (else a missing one is the error). A symbolic link is written
    through (its target replaced); a path that is not a regular file (``/dev/null``,
    ``/dev/stdout``, a FIFO) is written as it is, never replaced. Text that UTF-8 cannot
    encode (a lone surrogate) is a StorageError before anything is written."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = f"character {exc.start + 1}"
        raise StorageError(str(path), f"not UTF-8 text: {exc.reason} at {where}") from None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise StorageError.of(exc, path) from None
        return
    final = Path(os.path.realpath(path)) if path.is_symlink() else path
    tmp = temp_name(final)
    try:
        if parents:
            final.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, final)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        error = StorageError.of(exc, path)
        if exc.filename is not None and Path(exc.filename) == tmp:  # name what was asked
            error = StorageError(str(path), error.reason)
        raise error from None
