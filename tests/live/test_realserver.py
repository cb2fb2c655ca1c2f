"""A real server behind an agent (sim/live/realserver.py) that writes what is not an MCP
message on its stdout before it answers: the start ends at once, naming the agent, the
field and what the server wrote, as ``import mcp`` does (docs/interop.md), exit 2, nothing
left running. Before, bytes that are not UTF-8 made ``live`` wait the whole 60 s start
timeout and say ``no tools/list within 60 s``, and a line of text was silently ignored."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.harness.live_runs import SERVER, desk, live, ours

pytestmark = pytest.mark.slow

NOISY = textwrap.dedent(
    """
    import os, sys
    sys.stdout.buffer.write({line!r})
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, {server!r}])
    """
)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b"\xe9\xff not text\n", "the server wrote bytes that are not UTF-8 on its stdout"),
        (b"hello, I am a banner\n", "not JSON-RPC on the server's stdout"),
    ],
)
def test_a_server_that_writes_garbage_on_stdout_fails_the_start_at_once(
    tmp_path: Path, line: bytes, said: str
) -> None:
    noisy = tmp_path / "noisy_server.py"
    noisy.write_text(NOISY.format(line=line, server=str(SERVER)))
    path = desk(tmp_path, {"command": [sys.executable, str(noisy)]})
    began = time.monotonic()
    done = live(str(path), "--out", str(tmp_path / "out"), "--quiet", timeout=120)
    took = time.monotonic() - began
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (error,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert error.startswith("error: agent 'desk' failed to start: ")
    assert "agents[1].live.command: " in error and said in error, error
    assert took < 40, f"{took:.1f} s: the start waited for its timeout"
    assert ours(str(tmp_path)) == [] and ours(str(noisy)) == []


def test_a_server_that_exits_at_start_is_named_with_its_stderr(tmp_path: Path) -> None:
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nsys.stderr.write('no licence key, giving up\\n')\nsys.exit(3)\n")
    path = desk(tmp_path, {"command": [sys.executable, str(quits)]})
    done = live(str(path), "--out", str(tmp_path / "out"), "--quiet", timeout=120)
    assert done.returncode == 2, done.stderr
    (error,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert error.startswith("error: agent 'desk' failed to start: "), error
    assert error.endswith(
        f"agents[1].live.command: {sys.executable} {quits}: the server closed the connection; "
        "its stderr: no licence key, giving up"
    ), error
    assert ours(str(tmp_path)) == []
