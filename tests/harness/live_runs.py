"""``python -m sim live`` as a subprocess, and the processes a live run left running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.harness.live_paths import ROOT


def live(*args: str, cwd: Path = ROOT, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sim", "live", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ours(marker: str) -> list[str]:
    """Processes still running whose command line names ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmd and "pytest" not in cmd:
                found.append(cmd)
    return found
