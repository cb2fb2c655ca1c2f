"""Where a stop is raised (sim.processes): never inside code that would turn it into another
exception or drop it. Each probe runs in a fresh interpreter that arms the stops as
``python -m sim`` does, sends itself the signal at the awkward place, and says where the stop
landed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

ARMED = (
    "import os, signal, sys, time\n"
    "from sim.processes import Stopped, stop_on_signals_from_now\n"
    "stop_on_signals_from_now()\n"
)

#: A module whose loading runs a function called by class creation: ``type.__new__`` turns
#: any exception of ``__set_name__`` into a RuntimeError (Python 3.11), which an ``except
#: Exception`` on the way would then swallow.
NAMED = """
import os, signal
class Named:
    def __set_name__(self, owner, name):
        os.kill(os.getpid(), {sig})
        for _ in range(200000):  # the handler runs in here
            pass
class Owner:
    field = Named()
"""


def probe(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` after :data:`ARMED` in a fresh interpreter in ``tmp_path``."""
    return subprocess.run(
        [sys.executable, "-c", ARMED + code],
        cwd=tmp_path,  # where the probe's modules are
        env={**os.environ, "PYTHONPATH": str(REPO)},  # the sim package of these tests
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_a_module_loads_lands_after_it(tmp_path: Path, sig: int) -> None:
    (tmp_path / "named.py").write_text(NAMED.format(sig=int(sig)), encoding="utf-8")
    done = probe(
        "try:\n"
        "    import named\n"
        "    time.sleep(30)\n"  # cut short by the stop sent again
        "    print('not stopped')\n"
        "except Stopped as stop:\n"
        "    print('stopped', stop.code, 'named' in sys.modules)\n",
        tmp_path,
    )
    assert done.stdout.split() == ["stopped", str(128 + sig), "True"], (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr


def test_a_stop_inside_an_asyncio_callback_ends_the_loop(tmp_path: Path) -> None:
    """asyncio logs and drops what a plain callback raises, but for KeyboardInterrupt and
    SystemExit: a stop is a KeyboardInterrupt, so it ends the loop instead of vanishing."""
    done = probe(
        "import asyncio\n"
        "def callback():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    for _ in range(200000):\n"
        "        pass\n"
        "async def serve():\n"
        "    asyncio.get_running_loop().call_soon(callback)\n"
        "    await asyncio.sleep(30)\n"
        "try:\n"
        "    asyncio.run(serve())\n"
        "    print('not stopped')\n"
        "except Stopped as stop:\n"
        "    print('stopped', stop.code, isinstance(stop, KeyboardInterrupt))\n",
        tmp_path,
    )
    assert done.stdout.split() == ["stopped", "143", "True"], (done.stdout, done.stderr)
    assert "Exception in callback" not in done.stderr, done.stderr


def test_a_deferred_stop_lands_after_the_section(tmp_path: Path) -> None:
    done = probe(
        "from sim.processes import stops_deferred\n"
        "where = 'inside'\n"
        "try:\n"
        "    with stops_deferred():\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(0.2)\n"  # the handler runs, sends it again, and returns
        "        where = 'after'\n"
        "    time.sleep(30)\n"
        "    print('not stopped')\n"
        "except Stopped as stop:\n"
        "    print('stopped', stop.code, where)\n",
        tmp_path,
    )
    assert done.stdout.split() == ["stopped", "130", "after"], (done.stdout, done.stderr)


def test_a_child_forked_under_the_handler_ends_by_sigterm_not_by_stopped() -> None:
    """A pool worker forked while a command's handler is in place gets SIGTERM before its
    initializer resets it (a stop racing the pool's start): it ends by the signal, as a
    worker does, instead of raising Stopped inside multiprocessing (which printed
    'Process ForkProcess-2:' and half a traceback)."""
    from sim.processes import stop_on_signals

    ready_r, ready_w = os.pipe()
    with stop_on_signals():
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            try:
                os.write(ready_w, b"x")
                time.sleep(30)  # the signal's handler runs here
                os._exit(0)
            except BaseException:
                os._exit(3)
        assert os.read(ready_r, 1) == b"x"
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status), f"exit code {os.waitstatus_to_exitcode(status)}"
    assert os.WTERMSIG(status) == signal.SIGTERM
