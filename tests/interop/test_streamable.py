"""``run_app``'s stop: a SIGINT or SIGTERM from the moment the server is announced stops it
cleanly (exit 0), even one that arrives before uvicorn has put its own handlers in place."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.harness.mcp_http import REPO

#: A real uvicorn server on 127.0.0.1 whose announcement sends the process the signal: the
#: earliest moment a client that read it could (before uvicorn's handlers exist).
STOPPED_AT_ONCE = textwrap.dedent(
    """
    import os, signal, sys
    from sim.interop.streamable import listen, run_app

    async def app(scope, receive, send):
        pass

    sig = getattr(signal, sys.argv[1])
    run_app(app, listen("127.0.0.1", 0), ready=lambda: os.kill(os.getpid(), sig), lifespan="off")
    print("returned", flush=True)
    """
)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_stop_right_at_the_announcement_stops_the_server_with_exit_0(sig: str) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", STOPPED_AT_ONCE, sig],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,  # a hang guard, not a timing: a lost stop never ends
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {sig} sent as the server was announced was lost: it kept serving")
    assert (done.returncode, done.stdout) == (0, "returned\n"), done.stderr
