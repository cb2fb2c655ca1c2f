"""The suite's warm ``python -m sim`` (tests.harness.warm_sim) answers as the cold one: the
same exit code and bytes on stdout and stderr, a signal passed on, nothing left running
when its launcher is killed."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import threading

import httpx2

from tests.harness.paths import MINIMAL_FILE, REPO
from tests.harness.warm_sim import warm_sim

COLD = [sys.executable, "-m", "sim"]


def _answer(sim: list[str], *argv: str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [*sim, *argv], input=stdin, capture_output=True, cwd=REPO, timeout=60, check=False
    )
    return done.returncode, done.stdout, done.stderr


def test_a_warm_start_exits_and_writes_what_a_cold_start_does() -> None:
    bad = REPO / "tests" / "fixtures" / "no-such-scenario.yaml"
    for argv in (("validate", str(MINIMAL_FILE)), ("validate", str(bad))):
        assert _answer(warm_sim(), *argv) == _answer(COLD, *argv), argv
    code, out, err = _answer(warm_sim(), "validate", str(bad))
    assert code == 2 and out == b"" and err.startswith(f"{bad}:1:1: ".encode())


def test_stdin_reaches_the_warm_command_and_a_signal_ends_it_as_it_would() -> None:
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    code, out, _ = _answer(warm_sim(), "serve", "mcp", str(MINIMAL_FILE), stdin=ping)
    assert (code, out) == (0, b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    served = subprocess.Popen(
        [*warm_sim(), "serve", "mcp", str(MINIMAL_FILE), "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert served.stderr is not None
    watchdog = threading.Timer(60, served.kill)
    watchdog.start()
    try:
        announced = served.stderr.readline().decode()
        assert " over MCP Streamable HTTP at http://127.0.0.1:" in announced, announced
        url = announced.split(" at ")[1].split()[0]
        assert httpx2.get(url, timeout=30).status_code < 500  # serving: its stops are armed
        served.send_signal(signal.SIGTERM)
        assert served.wait(timeout=30) == 0  # serve's own stop, not a death by SIGTERM
    finally:
        watchdog.cancel()
        served.kill()


def test_killing_the_launcher_kills_the_command() -> None:
    """The command holds the write end of its stdout: the read sees the end only once the
    command is gone."""
    waiting = subprocess.Popen(
        [*warm_sim(), "serve", "mcp", str(MINIMAL_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert waiting.stderr is not None and waiting.stdout is not None
    watchdog = threading.Timer(60, waiting.kill)
    watchdog.start()
    announced = waiting.stderr.readline()
    watchdog.cancel()
    assert b" over MCP stdio " in announced, announced  # serving, its stdin open
    waiting.kill()
    assert waiting.wait(timeout=30) == -signal.SIGKILL
    readable, _, _ = select.select([waiting.stdout], [], [], 30)
    assert readable and waiting.stdout.read() == b""
