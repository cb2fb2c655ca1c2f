"""``import mcp -- COMMAND ARGS...`` against real server subprocesses (issue 7, item 1), and
bad servers: each gives one clear line, exit 2, and leaves no process behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from sim.calculus import ToolPlus, tools_from_list
from sim.cli import main
from sim.interop.client import fetch_tools
from sim.scenario import parse_scenario

SERVERS = Path(__file__).resolve().parent / "mcp_servers"


def alive(pid: int) -> bool:
    """True if ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def assert_gone(pidfile: Path) -> None:
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"server process {pid} left behind"


def test_import_from_a_live_fastmcp_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, pidfile = tmp_path / "hotel.yaml", tmp_path / "pid"
    argv = ["import", "mcp", "--out", str(out), "--timeout", "20", "--"]
    code = main([*argv, sys.executable, str(SERVERS / "fastmcp_server.py"), str(pidfile)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert_gone(pidfile)
    text = out.read_text(encoding="utf-8")
    assert "from the live MCP server 'hotel-desk' 1.2.3" in text
    scenario, warnings = parse_scenario(text, str(out))
    assert scenario.name == "hotel-desk"
    assert [p.name for p in scenario.protocols] == ["MCP", "MCP+"]
    tools = {t.name: t for t in scenario.tools}
    assert list(tools) == ["get_forecast", "book_room", "cancel_booking"]
    # annotations became hints, the guess is cautious and labelled
    assert tools["get_forecast"].annotations.readOnlyHint is True
    assert tools["get_forecast"].side_effects.value == "read"
    assert tools["cancel_booking"].side_effects.value == "delete"
    assert "# unknown: cancel_booking: side_effects: guessed 'delete'" in text
    # MCP+ metadata became the tool's own fields, nothing guessed
    book = tools["book_room"]
    assert book.side_effects.value == "write" and book.requires_approval is True
    assert [(f.error, f.recovery.prompt) for f in book.failure_modes] == [
        ("SoldOut", "Another date?")
    ]
    assert [(d.tool, d.relation.value) for d in book.dependencies] == [("get_forecast", "Requires")]
    assert "# unknown: book_room" not in text
    ext = yaml.safe_load(text)["x-mcp"]["tools"]
    assert "guessed" not in ext["book_room"]
    assert "outputSchema" in ext["book_room"]["mcp"]  # kept for export
    # one warning: the guessed delete tool has no approval (P2)
    assert [w.field for w in warnings] == ["tools[2].requires_approval"]
    assert err.strip().splitlines()[-1] == (
        "lint: 8 findings in 3 of 3 tools (P1 SemanticCompleteness: 6, P2 WriteApproval: 1, "
        "P3 FailureModes: 1, P4 Dependencies: 0)"  # P3: one line for the two plain MCP tools
    )
    # export gives the MCP+ tool back as MCP+, the others without invented metadata
    code = main(["export", "mcp", str(out), "--out", str(tmp_path / "t.json")])
    assert code == 0
    back = tools_from_list(yaml.safe_load((tmp_path / "t.json").read_text(encoding="utf-8")))
    plus = {t.name: t for t in back if isinstance(t, ToolPlus)}
    assert set(plus) == {"book_room"}
    assert plus["book_room"].summary == "Books a hotel room."


def test_import_follows_next_cursor(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    listing = fetch_tools(
        [sys.executable, str(SERVERS / "paged_server.py"), str(pidfile)], timeout=20
    )
    assert_gone(pidfile)
    assert listing.pages == 3
    assert [t["name"] for t in listing.tools["tools"]] == [f"tool_{i}" for i in range(5)]
    assert listing.server_name == "paged-archive"
    assert listing.protocol_version == "2025-11-25"


@pytest.mark.parametrize(
    ("mode", "timeout", "needle"),
    [
        ("exit", 20, "the server closed the connection; its stderr: raw_server: configuration"),
        ("garbage", 20, "not JSON-RPC on the server's stdout: Invalid JSON"),
        ("bad-list", 20, "malformed answer from the server (tools: Input should be a valid list)"),
        ("silent", 1, "no complete answer within 1 s (server stopped)"),
        ("not-utf8", 3, "the server wrote bytes that are not UTF-8 on its stdout"),
    ],
)
def test_a_bad_server_gives_exit_2_and_no_orphan(
    mode: str, timeout: int, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pidfile = tmp_path / "pid"
    server = [sys.executable, str(SERVERS / "raw_server.py"), mode, str(pidfile)]
    code = main(["import", "mcp", "--timeout", str(timeout), "--", *server])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and needle in lines[0]
    assert "raw_server.py" in lines[0]  # names the command
    assert_gone(pidfile)
