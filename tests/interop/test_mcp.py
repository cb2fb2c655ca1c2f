"""``import mcp -- COMMAND ARGS...`` against real server subprocesses (issue 7, item 1), and
bad servers: each gives one clear line, exit 2, and leaves no process behind."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.calculus import ToolPlus, tools_from_list
from sim.cli import main
from sim.interop import stdio_transport
from sim.interop.client import Revision, fetch_tools
from sim.scenario import parse_scenario

SERVERS = Path(__file__).resolve().parents[1] / "mcp_servers"


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
    """The server is not alive 5 s later (issue 16's window; a liveness deadline, not a
    speed measure: closing stdin, 2 s, SIGTERM, 2 s, SIGKILL may take 4 s)."""
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
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
        "lint: 7 findings in 3 of 3 tools (P1 SemanticCompleteness: 6, P2 WriteApproval: 1, "
        "P3 FailureModes: 0, P4 Dependencies: 0), 1 note"  # P3: one note for the plain tools
    )
    # export gives the MCP+ tool back as MCP+, the others without invented metadata
    code = main(["export", "mcp", str(out), "--out", str(tmp_path / "t.json")])
    assert code == 0
    back = tools_from_list(yaml.safe_load((tmp_path / "t.json").read_text(encoding="utf-8")))
    plus = {t.name: t for t in back if isinstance(t, ToolPlus)}
    assert set(plus) == {"book_room"}
    assert plus["book_room"].summary == "Books a hotel room."


@pytest.mark.parametrize(
    ("revision", "spoken"),
    [
        ("auto", "2026-07-28"),
        ("2025-11-25", "2025-11-25"),
        # paging has no revision branch (auto pages in 2026-07-28 above); the pinned
        # revision's server/discover runs in the default suite over Streamable HTTP
        # (test_import_over_streamable_http[2026-07-28-2026-07-28])
        pytest.param("2026-07-28", "2026-07-28", marks=pytest.mark.slow),
    ],
)
def test_import_follows_next_cursor(tmp_path: Path, revision: Revision, spoken: str) -> None:
    """The SDK's server is dual-era: auto negotiates the modern revision; each revision
    can be pinned, and paging works in both (stateless requests in 2026-07-28)."""
    pidfile = tmp_path / "pid"
    listing = fetch_tools(
        [sys.executable, str(SERVERS / "paged_server.py"), str(pidfile)],
        timeout=20,
        revision=revision,
    )
    assert_gone(pidfile)
    assert listing.pages == 3
    assert [t["name"] for t in listing.tools["tools"]] == [f"tool_{i}" for i in range(5)]
    assert listing.server_name == "paged-archive"
    assert listing.protocol_version == spoken


@pytest.mark.parametrize(
    ("mode", "timeout", "needle"),
    [
        ("exit", 20, "the server closed the connection; its stderr: raw_server: configuration"),
        ("garbage", 20, "not JSON-RPC on the server's stdout: Invalid JSON"),
        ("bad-list", 20, "malformed answer from the server (tools: Input should be a valid list)"),
        ("silent", 1, "no complete answer within 1 s (server stopped)"),
        # reported at once: the server keeps its stdout open until its stdin closes, so a
        # reader that waits for the end of stdout would only stop at --timeout (another line)
        ("not-utf8", 30, "the server wrote bytes that are not UTF-8 on its stdout (byte"),
    ],
)
def test_a_bad_server_gives_exit_2_and_no_orphan(
    mode: str,
    timeout: int,
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if mode == "silent":  # it ignores its stdin closing: the stop goes on to SIGTERM, the
        # path under test, after 0.1 s rather than the 2 s given to a server that exits
        monkeypatch.setattr(stdio_transport, "GRACE_EXIT", 0.1)
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


def env_tools(text: str) -> dict[str, str]:
    """``{NAME: value}`` of the ``env`` fixture server's tools in a fragment."""
    tools = yaml.safe_load(text)["tools"]
    return {t["name"][4:]: t["description"] for t in tools}


def test_env_and_inherit_env_reach_a_stdio_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the SDK's default variables pass unless --inherit-env; --env adds its own."""
    monkeypatch.setenv("PROTOMESH_TEST_INHERITED", "from protomesh")
    server = ["--", sys.executable, str(SERVERS / "raw_server.py"), "env"]
    given = ["--env", "PROTOMESH_TEST_GIVEN=a=b c"]
    assert main(["import", "mcp", *given, *server]) == 0
    assert env_tools(capsys.readouterr().out) == {"PROTOMESH_TEST_GIVEN": "a=b c"}
    assert main(["import", "mcp", "--inherit-env", *given, *server]) == 0
    assert env_tools(capsys.readouterr().out) == {
        "PROTOMESH_TEST_GIVEN": "a=b c",
        "PROTOMESH_TEST_INHERITED": "from protomesh",
    }


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--env", "NOVALUE", "--", "true"], "--env 'NOVALUE': expected NAME=VALUE"),
        (["--env", "=x", "--", "true"], "--env '': expected NAME=VALUE"),
        (["--header", "A=b", "--", "true"], "--header is for a Streamable HTTP server"),
        (["--env", "A=b", "http://127.0.0.1:9/mcp"], "--env and --inherit-env are for a stdio"),
        (["--inherit-env", "http://127.0.0.1:9/mcp"], "--env and --inherit-env are for a stdio"),
        (["--header", "Bad Name=x", "http://127.0.0.1:9/mcp"], "not an HTTP header name"),
        (["--header", "X-Key=a\nb", "http://127.0.0.1:9/mcp"], "holds a line break"),
        (["ftp://127.0.0.1/mcp"], "only http:// and https:// URLs"),
        ([], "no server (usage: import mcp URL, or import mcp -- COMMAND ARGS...)"),
        (["--"], "no server (usage"),
    ],
)
def test_bad_import_options_are_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", "mcp", *argv]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and needle in lines[0], err


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fastmcp fixture over Streamable HTTP on 127.0.0.1 (a free port), guarded by
    ``Authorization: Bearer s3cret``; yields its endpoint URL."""
    portfile = tmp_path_factory.mktemp("http") / "port"
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "fastmcp_server.py"), "--http", str(portfile), "s3cret"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not portfile.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert portfile.exists(), "the HTTP fixture server did not start"
        yield f"http://127.0.0.1:{portfile.read_text()}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


AUTH = ["--header", "Authorization=Bearer s3cret"]


@pytest.mark.parametrize(
    ("revision", "spoken"),
    [("auto", "2026-07-28"), ("2025-11-25", "2025-11-25"), ("2026-07-28", "2026-07-28")],
)
def test_import_over_streamable_http(
    http_server: str, revision: str, spoken: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["import", "mcp", "--revision", revision, *AUTH, http_server]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert (
        f"from the live MCP server 'hotel-desk' 1.2.3 (`{http_server}`, Streamable HTTP, "
        f"protocol {spoken}, 1 tools/list pages)" in out
    )
    scenario, _ = parse_scenario(out, "http.yaml")
    assert [t.name for t in scenario.tools] == ["get_forecast", "book_room", "cancel_booking"]
    assert scenario.tools[1].requires_approval is True  # MCP+ metadata came over HTTP
    assert "s3cret" not in out + err


@pytest.mark.parametrize("header", [[], ["--header", "Authorization=Bearer wrong-secret"]])
def test_an_http_refusal_says_the_status_and_never_the_header(
    http_server: str, header: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", "mcp", *header, http_server]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"error: {http_server}: the server answered HTTP 401 Unauthorized")
    assert "wrong-secret" not in err


def test_a_url_nobody_listens_on_and_user_info_never_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert main(["import", "mcp", f"http://user:pw@127.0.0.1:{port}/mcp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: http://127.0.0.1:{port}/mcp: cannot connect")
    assert "pw" not in err


def test_bad_bytes_are_an_item_while_stdout_stays_open() -> None:
    """The reader turns the first line that is not UTF-8 into an error item as soon as the
    line is complete, without waiting for the end of the stream (the SDK's reader drained
    stdout to its end first); lines before it are messages, nothing after it is read."""
    from sim.interop.stdio_transport import ServerOutputError, read_lines

    async def scenario() -> list[object]:
        send, source = anyio.create_memory_object_stream[bytes](10)
        sink, items = anyio.create_memory_object_stream[object](10)
        got: list[object] = []
        async with send, anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines, source, sink)
            await send.send(b'{"jsonrpc": "2.0", "id": 0, "result": {}}\n{"name": "caf')
            await send.send(b'\xe9"}\n{"jsonrpc": "2.0", "id": 1, "result": {}}\n')
            with anyio.fail_after(20):  # only a guard: the items come without an end of stream
                got = [await items.receive(), await items.receive()]
            tasks.cancel_scope.cancel()
        return got

    first, second = anyio.run(scenario)
    assert type(first).__name__ == "SessionMessage"
    assert isinstance(second, ServerOutputError)
    assert str(second) == (
        "the server wrote bytes that are not UTF-8 on its stdout (byte b'\\xe9' at offset 13 "
        "of line 2)"
    )


def test_a_pinned_modern_revision_refuses_a_legacy_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = [sys.executable, str(SERVERS / "raw_server.py"), "vendor"]
    assert main(["import", "mcp", "--revision", "2026-07-28", "--", *server]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(
        "the server does not speak 2026-07-28 (server/discover: error -32601: Method not found: "
        "server/discover); try --revision auto"
    ), err


LINES = st.lists(
    st.one_of(
        st.integers(0, 99).map(lambda i: b'{"jsonrpc": "2.0", "id": %d, "result": {}}' % i),
        st.just(b"not json at all"),
        st.binary(min_size=1, max_size=6).filter(lambda b: not _utf8(b) and b"\n" not in b),
    ),
    max_size=8,
)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(lines=LINES, cuts=st.lists(st.integers(0, 400), max_size=6))
def test_stdout_lines_do_not_depend_on_how_the_bytes_arrive(
    lines: list[bytes], cuts: list[int]
) -> None:
    """Whatever the chunking, one item per line in order: a message for a JSON-RPC line, a
    parse error for another UTF-8 line, and for the first line that is not UTF-8 a
    ServerOutputError naming its number, after which nothing is read."""
    from sim.interop.stdio_transport import ServerOutputError, read_lines

    data = b"".join(line + b"\n" for line in lines)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    expected: list[str] = []
    for number, line in enumerate(lines, 1):
        if not _utf8(line):
            expected.append(f"bad:{number}")
            break
        expected.append("message" if line.startswith(b'{"jsonrpc"') else "error")

    async def scenario() -> list[str]:
        send, source = anyio.create_memory_object_stream[bytes](len(chunks) + 1)
        sink, items = anyio.create_memory_object_stream[object](len(lines) + 1)
        got: list[str] = []
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines, source, sink)
            for chunk in chunks:
                await send.send(chunk)
            await send.aclose()
            with anyio.fail_after(20):  # a guard against a hang only
                for _ in expected:
                    item = await items.receive()
                    if isinstance(item, ServerOutputError):
                        got.append(f"bad:{str(item).rsplit(' ', 1)[-1].rstrip(')')}")
                    elif type(item).__name__ == "SessionMessage":
                        got.append("message")
                    else:
                        assert isinstance(item, ValueError)
                        got.append("error")
            tasks.cancel_scope.cancel()
        return got

    assert anyio.run(scenario) == expected
