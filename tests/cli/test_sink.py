"""A full stdout or disk is one line and exit 2 (issue 38, item 8). The repros are
``tests/fixtures/attack/output/full_stdout.txt`` (every command that prints a result,
into ``/dev/full``) and ``full_disk.txt`` (every command that writes a result file, into a
filled tmpfs): in this process through the real ``/dev/full`` and a real full file
system; a few, and every one in the slow suite, as ``python -m sim`` with ``/dev/full``
as its stdout."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.cli.sink import OutputFailed, Sink, guarded_stdout
from sim.experiments.store import StorageError, write_atomic

REPO = Path(__file__).resolve().parents[2]
REPROS = REPO / "tests" / "fixtures" / "attack" / "output"
SCENARIO = REPO / "tests" / "fixtures" / "scenarios" / "minimal.yaml"
SGD = REPO / "data" / "sgd" / "train"


def _repro(name: str) -> tuple[list[Any], int, str]:
    """A repro file's commands (``slow:`` ones marked slow), exit code and stderr line."""
    commands: list[Any] = []
    code, line = 0, ""
    for text in (REPROS / name).read_text(encoding="utf-8").splitlines():
        if text.startswith("# exit: "):
            code = int(text.removeprefix("# exit: "))
        elif text.startswith("# stderr: "):
            line = text.removeprefix("# stderr: ")
        elif text.startswith("slow: "):
            command = text.removeprefix("slow: ")
            commands.append(pytest.param(command, marks=pytest.mark.slow, id=command))
        elif text and not text.startswith("#"):
            commands.append(text)
    return commands, code, line


STDOUT_COMMANDS, STDOUT_EXIT, STDOUT_LINE = _repro("full_stdout.txt")
DISK_COMMANDS, DISK_EXIT, DISK_LINE = _repro("full_disk.txt")


def _quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the commands read: a run's trace, an .aut, a tools/list result, an agent card."""
    base = tmp_path_factory.mktemp("inputs")
    argv = ["run", str(SCENARIO), "--replications", "1", "--quiet", "--out", str(base / "run")]
    assert _quiet(argv) == 0
    made = {"scenario": str(SCENARIO), "schema": str(SGD / "schema.json")}
    made["python"] = sys.executable
    made["live"] = str(SCENARIO.with_name("live_tiny.yaml"))
    made["dialogues"] = str(SGD / "dialogues_001_first10.json")
    made["trace"] = str(base / "run" / "dijkstra" / "rep-0" / "trace.jsonl")
    for name, argv in (
        ("aut", ["lts", str(SCENARIO), "--tool", "lookup", "--aut"]),
        ("tools", ["phi", made["schema"]]),
        ("cards", ["export", "a2a", str(SCENARIO)]),
    ):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(argv) == 0
        (base / name).write_text(out.getvalue(), encoding="utf-8")
        made[name] = str(base / name)
    card = json.loads((base / "cards").read_text(encoding="utf-8"))[0]
    (base / "card.json").write_text(json.dumps(card), encoding="utf-8")
    made["card"] = str(base / "card.json")
    return made


def _argv(command: str, inputs: dict[str, str], **more: str) -> list[str]:
    return command.format(**inputs, **more).split()


@contextlib.contextmanager
def dev_full() -> Iterator[None]:
    """``sys.stdout`` on the real ``/dev/full`` (every write refused: ENOSPC), in the test's
    body (pytest puts its own capture back before a test runs)."""
    previous = sys.stdout
    with open("/dev/full", "w", encoding="utf-8") as full:
        sys.stdout = full
        try:
            yield
        finally:
            sys.stdout = previous
            with contextlib.suppress(OSError):
                full.flush()


@pytest.mark.parametrize("command", STDOUT_COMMANDS)
def test_a_full_stdout_is_one_line_and_exit_2(
    command: str, inputs: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with dev_full():
        code = main(_argv(command, inputs, out=str(tmp_path / "out")))
    assert code == STDOUT_EXIT
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == STDOUT_LINE and "Traceback" not in "\n".join(err)
    assert STDOUT_LINE not in err[:-1]  # said once, last: nothing after claims a success


def _sim(argv: list[str]) -> subprocess.CompletedProcess[str]:
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "sim", *argv],
            cwd=REPO,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )


def _in_a_process(command: str, inputs: dict[str, str], out: Path) -> None:
    done = _sim(_argv(command, inputs, out=str(out)))
    assert done.returncode == STDOUT_EXIT, done.stderr
    assert done.stderr.splitlines()[-1] == STDOUT_LINE and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["schema"])
def test_a_full_stdout_in_a_real_process(
    command: str, inputs: dict[str, str], tmp_path: Path
) -> None:
    _in_a_process(command, inputs, tmp_path / "out")


@pytest.mark.slow
@pytest.mark.parametrize("command", STDOUT_COMMANDS)
def test_every_command_into_dev_full_in_a_real_process(
    command: str, inputs: dict[str, str], tmp_path: Path
) -> None:
    _in_a_process(command, inputs, tmp_path / "out")


@pytest.fixture
def full_disk(tmpfs: Callable[[str], Path]) -> Path:
    """A 64 KiB tmpfs filled to its last byte (``tmpfs``: skipped where it cannot be
    mounted)."""
    where = tmpfs("64k")
    with open(where / "filler", "wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 512)
    return where


@pytest.mark.parametrize("command", DISK_COMMANDS)
def test_a_result_file_on_a_full_disk_is_one_line_and_nothing_left(
    command: str,
    inputs: dict[str, str],
    full_disk: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = full_disk / "result.out"
    argv = _argv(command, inputs, file=str(target), out=str(tmp_path / "report"))
    assert main(argv) == DISK_EXIT
    err = capsys.readouterr().err
    assert DISK_LINE.format(file=target) in err and "Traceback" not in err
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]  # no file, no leftover


def test_stdout_written_after_a_refusal_is_dropped_and_the_error_kept() -> None:
    with open("/dev/full", "wb") as full:
        sink = Sink(full.fileno(), "<stdout>")
        with pytest.raises(OutputFailed, match="cannot write <stdout>: No space left on device"):
            sink.write(b"x")
        assert sink.write(b"more") == 4 and sink.error is not None


def test_a_command_that_swallows_the_refusal_still_fails() -> None:
    with dev_full(), guarded_stdout() as sink:
        assert sink is not None
        with contextlib.suppress(OutputFailed):
            print("result")
    assert sink.error is not None and str(sink.error).endswith("No space left on device")


def test_write_atomic_never_replaces_a_device_and_writes_through_a_link(tmp_path: Path) -> None:
    write_atomic(Path("/dev/null"), "gone")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(StorageError, match="cannot write /dev/full: No space left on device"):
        write_atomic(Path("/dev/full"), "x")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_the_serve_trace_on_a_full_disk_keeps_whole_lines_and_says_so(full_disk: Path) -> None:
    from sim.interop.session_trace import LiveTrace, TraceFailed

    filler = full_disk / "filler"
    os.truncate(filler, filler.stat().st_size - 4096)  # room for a few lines, then full
    trace = LiveTrace(full_disk / "trace.jsonl")
    with pytest.raises(TraceFailed) as info:
        for inv in range(10_000):
            trace.event(
                "call", agent="client", inst=0, inv=inv, tool="lookup", proto="MCP", target="s"
            )
    lines = (full_disk / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines and all(line.endswith("\n") and json.loads(line) for line in lines)
    assert info.value.lines == len(lines) == [json.loads(x)["seq"] for x in lines][-1] + 1
    assert str(info.value) == (
        f"--trace {full_disk / 'trace.jsonl'}: cannot write: No space left on device (the "
        f"trace keeps the {len(lines)} line(s) written whole before)"
    )
    with pytest.raises(TraceFailed) as again:  # nothing more is written
        trace.event("call", agent="client", inst=0, inv=0, tool="lookup", proto="MCP")
    assert again.value is info.value and trace.failed is info.value
    trace.close()
    assert len((full_disk / "trace.jsonl").read_text(encoding="utf-8").splitlines()) == len(lines)


@pytest.mark.slow
@pytest.mark.parametrize("room", [0, 24 * 1024], ids=["full", "24k-free"])
def test_live_on_a_full_disk_is_one_line_and_keeps_no_half_result(
    room: int, full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filler = full_disk / "filler"
    os.truncate(filler, max(filler.stat().st_size - room, 0))
    live = SCENARIO.with_name("live_tiny.yaml")
    target = full_disk / "live"
    assert main(["live", str(live), "--duration", "1", "--out", str(target), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert err[0].startswith(f"error: cannot write {target}/")
    assert err[0].endswith(": No space left on device")
    assert not [p for p in target.rglob("*") if p.name in ("trace.jsonl", "metrics.json")]
