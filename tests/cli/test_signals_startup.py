"""SIGINT and SIGTERM at any moment of a command's start (``validate``, ``run``, ``import mcp``
against a server that never answers, ``serve mcp``): exit 130 or 143 with at most one line on
stderr, never a traceback, never a hang, no process left behind (docs/experiments.md#signals).

The delays count from the moment protomesh has armed its handlers (the first line of
``sim/__main__.py``): before, Python itself is starting (site, the ``.pth`` hooks of the
environment) and answers a signal its own way, which nothing in protomesh can change. A trial
starts the command with SIGTERM ignored, so that the arming shows in ``/proc/PID/status``
(protomesh catches it from then on, whatever it inherited). The processes of a trial carry a
marker in their environment (the MCP server gets it by ``--env``).

The default suite sends one signal per command; ``-m slow`` sends both at 12 seeded moments
spread over each command's start-up (96 trials)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness.paths import REPO, SERVERS
from tests.harness.signals import MARKER, marked, wait_until

STOPS = {signal.SIGINT, signal.SIGTERM}
ANSWERLESS = [sys.executable, str(SERVERS / "raw_server.py"), "slow"]

#: Each command's line, given the trial's folder and marker.
COMMANDS: dict[str, Callable[[Path, str], list[str]]] = {
    "validate": lambda tmp, marker: ["validate", "scenarios/train_booking.yaml"],
    "run": lambda tmp, marker: [
        "run",
        "scenarios/train_booking.yaml",
        "--out",
        str(tmp / "out"),
        "--jobs",
        "2",
        "--replications",
        "4",
        "--quiet",
    ],
    "import mcp": lambda tmp, marker: [
        "import",
        "mcp",
        "--timeout",
        "120",
        "--env",
        f"{MARKER}={marker}",
        "--",
        *ANSWERLESS,
        str(tmp / "pid"),
    ],
    "serve mcp": lambda tmp, marker: ["serve", "mcp", "scenarios/train_booking.yaml"],
}

#: Seconds from the arming to the command's work on this 2-core machine under the helpers'
#: usual load (validate done; the pool's first run, the server started, the server
#: serving): the delays are drawn below these.
START_UP = {"validate": 0.6, "run": 2.0, "import mcp": 2.0, "serve mcp": 1.5}


def status_mask(pid: int, field: str) -> int:
    """A signal mask of ``/proc/PID/status`` (``SigIgn``, ``SigCgt``, ``SigBlk``); 0 once gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return int(status.split(f"{field}:")[1].split()[0], 16)


def bit(sig: int) -> int:
    return 1 << (sig - 1)


def ignoring_sigterm() -> None:
    """In the child before ``exec``: SIGTERM ignored, until protomesh arms its handlers."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def start_armed(argv: list[str], marker: str) -> subprocess.Popen[bytes]:
    """``python -m sim ARGV``, returned once protomesh has armed its handlers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim", *argv],
        cwd=REPO,
        env={**os.environ, MARKER: marker},
        stdin=subprocess.PIPE,  # serve mcp serves until it closes: never here
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=ignoring_sigterm,
    )

    def armed() -> bool:  # or gone: then the assertion below says so
        return proc.poll() is not None or not status_mask(proc.pid, "SigIgn") & bit(signal.SIGTERM)

    wait_until(armed, 60, poll=0.002)
    assert proc.poll() is None and armed(), "never armed"
    return proc


def stop_while_starting(command: str, sig: int, delay: float, tmp: Path) -> None:
    """Start ``command``, send ``sig`` ``delay`` seconds after it armed, check how it ends."""
    marker = uuid.uuid4().hex
    proc = start_armed(COMMANDS[command](tmp, marker), marker)
    time.sleep(delay)
    proc.send_signal(sig)
    # a lost stop would leave import mcp waiting for its 120 s timeout (exit 2)
    stdout, stderr = proc.communicate(timeout=300)
    assert wait_until(lambda: not marked(marker), 10), f"left behind: {marked(marker)}"
    text = stderr.decode()
    assert "Traceback" not in text and "Exception ignored" not in text, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if command == "serve mcp":  # its banner, once it serves
        lines = [ln for ln in lines if not ln.startswith("serve: ")]
    name = signal.Signals(sig).name
    if proc.returncode == 0:  # it finished before the signal landed, then ignored it
        assert command == "validate" and not lines and b": ok (" in stdout, (stdout, lines)
    elif proc.returncode == -signal.SIGTERM and command == "serve mcp":
        assert sig == signal.SIGTERM and not lines, lines  # a server just ends on SIGTERM
    else:
        assert proc.returncode == 128 + sig, (proc.returncode, text)
        assert len(lines) == 1 and lines[0].startswith(f"interrupted by {name}"), lines


@pytest.mark.parametrize(
    ("command", "sig"),
    [
        ("validate", signal.SIGTERM),
        ("run", signal.SIGINT),
        ("import mcp", signal.SIGTERM),
        ("serve mcp", signal.SIGINT),
    ],
)
def test_a_signal_while_a_command_starts_ends_it_in_one_line(
    tmp_path: Path, command: str, sig: int
) -> None:
    delay = random.Random(f"{command} {sig}").uniform(0.0, START_UP[command])
    stop_while_starting(command, sig, delay, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("sig", sorted(STOPS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("seed", range(12))
def test_a_signal_at_many_moments_of_a_start_ends_it_in_one_line(
    tmp_path: Path, command: str, sig: int, seed: int
) -> None:
    delay = random.Random(f"{command} {sig} {seed}").uniform(0.0, START_UP[command])
    stop_while_starting(command, sig, delay, tmp_path)


@pytest.mark.parametrize("ignored", [False, True], ids=["as-started", "started-ignoring-SIGINT"])
def test_ctrl_c_while_import_mcp_loads_prints_one_line(tmp_path: Path, ignored: bool) -> None:
    """Started as a shell starts it, or as a script starts it in the background (SIGINT
    ignored: it must stop it all the same), Ctrl-C at a seeded moment while it loads."""
    marker = uuid.uuid4().hex
    argv = COMMANDS["import mcp"](tmp_path, marker)
    argv[argv.index("120")] = "30"  # a lost Ctrl-C: exit 2 after 30 s
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim", *argv],
        cwd=REPO,
        env={**os.environ, MARKER: marker},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None,
    )
    # armed: SIGTERM caught (Python never catches it by itself)
    assert wait_until(
        lambda: status_mask(proc.pid, "SigCgt") & bit(signal.SIGTERM) or proc.poll() is not None,
        60,
    )
    time.sleep(random.Random(f"ctrl-c {ignored}").uniform(0.0, 0.5))
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr.decode()
    assert b"Traceback" not in stdout + stderr, stderr.decode()
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted by SIGINT"), lines
    assert wait_until(lambda: not marked(marker), 10), f"left behind: {marked(marker)}"


#: The two ways to start the command line: the module and the installed script.
ENTRIES = {
    "python -m sim": [sys.executable, "-m", "sim"],
    "protomesh": [str(Path(sys.executable).with_name("protomesh"))],
}


@pytest.mark.parametrize("sig", sorted(STOPS))
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_signal_held_back_by_the_parent_stops_once_protomesh_starts(entry: str, sig: int) -> None:
    """A parent may start protomesh with both signals blocked: one sent while Python starts
    waits, and stops the command as soon as protomesh arms its handlers (which unblock
    them), before the command does anything; by either entry point."""
    proc = subprocess.Popen(
        [*ENTRIES[entry], "validate", "scenarios/train_booking.yaml"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, STOPS),
    )
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 128 + sig, (proc.returncode, stderr.decode())
    assert stdout == b""
    assert stderr.decode().splitlines() == [f"interrupted by {signal.Signals(sig).name}"]
