"""Commands started as marked subprocesses, found again by their marker, for the signal tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.harness.paths import REPO

MARKER = "PROTOMESH_SIGNAL_TRIAL"


def marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``MARKER=marker``."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def wait_until(condition: object, seconds: float, poll: float = 0.05) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (a bound, never what is tested)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(poll)
    return bool(condition())  # type: ignore[operator]


def start(argv: list[str], marker: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, MARKER: marker}
    return subprocess.Popen(
        [sys.executable, "-m", "sim", *argv],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a signal to it never reaches pytest
    )
