"""A real server (``live: {command}``) that dies in the middle of a live run: its death,
its exit status and its last stderr line are recorded in ``metrics.json`` (``live.
server_exits``) and said in one warning line; the call it died in and every call after it
fail ``ServiceDown`` with ``cause`` ``server_exit`` (the server is gone, not a
``ToolError`` of the tool, nor one of its outcomes); the run ends
as runs end (exit 0, checked) and no process is left; ``compare --against`` keeps the run
and says that its server died. Before, nothing said so: the calls
failed ``ToolError`` and the run ended with exit 0 and no word of the death."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.harness.live_runs import compare_against, desk, live, ours

#: a hotel desk that dies in its second forecast, saying why on stderr
DYING = textwrap.dedent(
    """
    import os, sys
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("dying-desk")
    calls = 0

    @server.tool(description="Forecast.")
    def get_forecast(city: str, date: str) -> str:
        global calls
        calls += 1
        if calls == 2:
            sys.stderr.write("out of memory in the forecast, goodbye\\n")
            sys.stderr.flush()
            os._exit(3)
        return f"sunny in {city} on {date}"

    @server.tool(description="Books.")
    def book_room(city: str, nights: int) -> str:
        return f"booked {nights} nights in {city}"

    server.run()
    """
)


#: a live mesh of about 9 s: run by `make bench` and by CI beside the other slow live tests
@pytest.mark.slow
def test_a_real_server_that_dies_mid_run_is_recorded_and_its_calls_fail_service_down(
    tmp_path: Path,
) -> None:
    dying = tmp_path / "dying_desk.py"
    dying.write_text(DYING)
    path = desk(tmp_path, {"command": [sys.executable, str(dying)]})
    done = live(str(path), "--out", str(tmp_path / "out"), "--quiet", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warnings = [x for x in done.stderr.splitlines() if x.startswith("warning:")]
    assert len(warnings) == 1, done.stderr
    assert "agent 'desk'" in warnings[0] and "exited with status 3" in warnings[0], warnings
    assert "out of memory in the forecast, goodbye" in warnings[0], warnings
    run = tmp_path / "out" / "dijkstra" / "live-0"
    metrics = json.loads((run / "metrics.json").read_text())
    (exit_,) = metrics["live"]["server_exits"]
    assert exit_["agent"] == "desk" and exit_["returncode"] == 3, exit_
    assert exit_["server"] == f"{sys.executable} {dying}"
    assert exit_["stderr"] == "out of memory in the forecast, goodbye"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    assert 0.0 < exit_["t"] < max(e["t"] for e in trace)
    errors = [
        (e["inst"], e["tool"], e["detail"]["error"], e["detail"].get("cause"))
        for e in trace
        if e["label"] == "error"
    ]
    # the first instance ran whole; the second's forecast killed the server; the third's
    # found it gone: ServiceDown both, never the generic ToolError, and the trace says why
    # (``cause``: no outcome of the tool, which calibrate leaves out of its error rates)
    assert errors == [
        (1, "get_forecast", "ServiceDown", "server_exit"),
        (2, "get_forecast", "ServiceDown", "server_exit"),
    ]
    assert metrics["workflows"]["succeeded"] == 1 and metrics["workflows"]["failed"] == 2
    assert metrics["conformance"]["ok"], metrics["conformance"]
    assert ours(str(tmp_path)) == [] and ours(str(dying)) == []
    # compare --against keeps the run (it lasted its duration) and says what happened in it
    compared = compare_against(path, tmp_path / "out", tmp_path / "c")
    assert compared.returncode == 0, compared.stderr
    said = [x for x in compared.stderr.splitlines() if x.startswith("warning:")]
    assert said == [
        f"warning: {run}: agent 'desk': its real server exited with status 3 at "
        f"t={exit_['t']:g} s (its later calls failed ServiceDown)"
    ], compared.stderr


def test_how_a_server_ended_is_said_from_its_returncode() -> None:
    from sim.live.realserver import ended

    assert ended(0) == "exited with status 0"
    assert ended(3) == "exited with status 3"
    assert ended(-9) == "was killed by SIGKILL (returncode -9)"
    assert ended(-200) == "was killed by signal 200 (returncode -200)"


def test_only_a_lost_connection_waits_for_the_servers_exit_status() -> None:
    """A call that failed because the connection closed (the SDK's CONNECTION_CLOSED, a
    stream closed under it) waits for the server's exit status; any other error (a
    JSON-RPC error the server answered) is the tool's ToolError at once."""
    import anyio
    import mcp.types as mt
    from mcp.shared.exceptions import MCPError

    from sim.live.realserver import lost_connection

    assert lost_connection(MCPError(code=mt.CONNECTION_CLOSED, message="Connection closed"))
    assert lost_connection(anyio.ClosedResourceError())
    assert lost_connection(anyio.BrokenResourceError())
    assert lost_connection(ExceptionGroup("in a task group", [anyio.EndOfStream()]))
    assert not lost_connection(MCPError(code=mt.INVALID_PARAMS, message="no such tool"))
    assert not lost_connection(ValueError("a result that is not JSON"))
