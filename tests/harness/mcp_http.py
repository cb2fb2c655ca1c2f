"""What the HTTP serving tests share: ``serve mcp --http 127.0.0.1:0`` (or ``serve a2a``)
as a process whose URL is read from its stderr (loopback only), and a stop that checks
its exit. The process is started warm (``tests.harness.warm_sim``) unless ``warm=False``."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.harness.paths import REPO
from tests.harness.warm_sim import warm_sim

URL = re.compile(r"at (http://127\.0\.0\.1:\d+/mcp) ")
A2A_URL = re.compile(r"over A2A at (http://127\.0\.0\.1:\d+) ")
"""The base URL ``serve a2a`` prints."""


@contextmanager
def http_server(
    path: Path, *extra: str, kind: str = "mcp", url: re.Pattern[str] = URL, warm: bool = True
) -> Iterator[str]:
    """``serve KIND PATH --http 127.0.0.1:0 EXTRA...`` running (started warm, or with
    ``warm=False`` as ``python -m sim``); yields the URL ``url`` finds on its stderr; on
    exit stops it with SIGTERM and asserts exit code 0."""
    argv = ["serve", kind, str(path), "--http", "127.0.0.1:0", *extra]
    proc = subprocess.Popen(
        [*(warm_sim() if warm else [sys.executable, "-m", "sim"]), *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            found = url.search(line)
            if found:
                break
        else:
            raise AssertionError("serve --http printed no URL: " + "".join(lines))
        drain = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
        drain.start()
        yield found.group(1)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
        drain.join(timeout=5)
        assert code == 0, "".join(lines)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
