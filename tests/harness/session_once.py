"""A folder built once per pytest session, whatever the number of xdist workers."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``<session tmp>/name``, made by ``build(folder)`` once per session: the first worker
    to ask builds it under a lock, the others wait for it and use the same folder (with one
    process, the process's own). ``build`` is deterministic (any worker would write the
    same bytes); the folder is read-only to its users (copy it to change it). A build that
    raised is started again by the next to ask, who sees its error too."""
    import fcntl

    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's
    out = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / f"{name}.built"
        if not done.exists():
            if out.exists():
                shutil.rmtree(out)
            build(out)
            done.touch()
    return out
