"""A raw JSON-RPC session with ``serve mcp`` over stdio: bytes in, lines out (no SDK in between)."""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

from tests.harness.paths import REPO


class RawSession:
    """Newline-delimited JSON-RPC by hand, to see the frames themselves."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=REPO,
        )
        self.watchdog = threading.Timer(30, self.proc.kill)
        self.watchdog.start()

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        frame: dict[str, Any] = json.loads(line)
        return frame

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.watchdog.cancel()
            if self.proc.poll() is None:
                self.proc.kill()
