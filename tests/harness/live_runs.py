"""``python -m sim live`` as a subprocess, and the processes a live run left running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.harness.live_paths import ROOT


def live(*args: str, cwd: Path = ROOT, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``python -m sim live ARGS``, its environment marked with ARGS (:func:`ours`)."""
    return subprocess.run(
        [sys.executable, "-m", "sim", "live", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **{MARK: " ".join(args)}),
    )


def compare_against(scenario: Path, runs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``python -m sim compare SCENARIO --against RUNS --json --replications 1``."""
    against = ["--against", str(runs), "--json", "--replications", "1", "--out", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "sim", "compare", str(scenario), *against],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


MARK = "PROTOMESH_TEST_LIVE"
"""The environment variable :func:`live` marks its command's processes with."""


def ours(marker: str, grace: float = 5.0) -> list[str]:
    """Processes still running that name ``marker`` in their command line, their
    environment or an open file (a live run's hosts hold their logs under its output
    folder; the hosts' template carries the command's environment, which :func:`live`
    marks with its arguments), once those dying have been given ``grace`` seconds."""
    import time

    end = time.monotonic() + grace
    while True:
        found = [cmd for pid, cmd in _processes() if marker in cmd or _holds(pid, marker)]
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.05)


def _processes() -> list[tuple[str, str]]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if cmd and "pytest" not in cmd:
                found.append((pid, cmd))
    return found


def _holds(pid: str, marker: str) -> bool:
    """Whether process ``pid`` has ``marker`` in its environment or an open file's path."""
    try:
        if marker.encode() in Path(f"/proc/{pid}/environ").read_bytes():
            return True
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if marker in os.readlink(f"/proc/{pid}/fd/{fd}"):
                return True
        except OSError:
            continue
    return False


#: a hotel desk written with the MCP SDK's high-level API (nobody's simulation)
SERVER = ROOT / "tests" / "mcp_servers" / "fastmcp_server.py"


def desk(tmp_path: Path, entry: dict[str, Any]) -> Path:
    """A planner that asks a real hotel desk for a forecast, then books a room."""
    scenario = {
        "name": "real-desk",
        "seed": 1,
        "duration": 3,
        "routers": ["dijkstra"],
        "protocols": ["MCP"],
        "approval": {"latency": {"dist": "constant", "value": 0.05}, "grant_probability": 1.0},
        "agents": [
            {"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP": 1.0}},
            {
                "id": "desk",
                "type": "TOOL_SERVER",
                "protocols": {"MCP": 1.0},
                "tools": ["get_forecast", "book_room"],
                "live": entry,
            },
        ],
        "links": [{"between": ["planner", "desk"], "latency": {"MCP": 0.005}}],
        "tools": [
            {"name": "get_forecast", "description": "Forecast.", "side_effects": "read"},
            {
                "name": "book_room",
                "description": "Books.",
                "side_effects": "write",
                "requires_approval": True,
            },
        ],
        "workflows": [
            {
                "name": "stay",
                "initiator": "planner",
                "protocol": "MCP",
                "arrivals": {"times": [0.2, 1.0, 1.8]},
                "timeout": 10,
                "tasks": [
                    {
                        "id": "sky",
                        "tool": "get_forecast",
                        "args": {"city": "Bern", "date": "2026-12-24"},
                    },
                    {
                        "id": "room",
                        "tool": "book_room",
                        "args": {"city": "Bern", "nights": 2},
                        "after": ["sky"],
                    },
                ],
            },
        ],
    }
    path = tmp_path / "desk.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return path
