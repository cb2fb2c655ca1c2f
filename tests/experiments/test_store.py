"""Results folders that cannot be corrupted (issue 16, item 1 and 2): one writer at a time,
runs reused only when intact, a damaged run redone and named, a full disk is exit 2 with the
path, the reason and the finished runs."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.experiments import runner
from sim.experiments.store import FolderBusy, FolderLock, StorageError, remove_leftovers
from tests.harness.small_mesh import SMALL

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL, encoding="utf-8")
    return path


def compare(file: Path, out: Path, *extra: str) -> int:
    """``compare`` in this process, without figures (no test here looks at them)."""
    return main(
        ["compare", str(file), "--out", str(out), "--quiet", "--jobs", "1", "--no-plots", *extra]
    )


def test_a_held_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    with (
        FolderLock(tmp_path),
        pytest.raises(
            FolderBusy, match=rf"in use by another protomesh process \(pid {os.getpid()}\)"
        ),
        FolderLock(tmp_path),
    ):
        pass
    with FolderLock(tmp_path):  # released on exit
        pass


@pytest.fixture(scope="module")
def clean_summary(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """summary.json of the small mesh at 6 replications, compared alone in its own folder:
    what a compare that queued behind or refused another must leave."""
    base = tmp_path_factory.mktemp("clean")
    (base / "small.yaml").write_text(SMALL, encoding="utf-8")
    assert compare(base / "small.yaml", base / "out", "--replications", "6") == 0
    return (base / "out" / "summary.json").read_bytes()


def _holding(small: Path, out: Path) -> subprocess.Popen[bytes]:
    """A ``compare`` subprocess, returned once it holds ``out``'s lock."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sim",
            "compare",
            str(small),
            "--out",
            str(out),
            "--quiet",
            "--jobs",
            "1",
            "--replications",
            "6",
            "--no-plots",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lock = out / ".lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if lock.exists() and lock.read_text().strip() == str(proc.pid):
            return proc
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("the first compare never took the lock")


def test_a_second_compare_into_a_busy_folder_exits_2_and_the_first_completes(
    small: Path, tmp_path: Path, clean_summary: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "shared"
    first = _holding(small, out)
    assert compare(small, out, "--replications", "6") == 2
    err = capsys.readouterr().err
    assert f"is in use by another protomesh process (pid {first.pid})" in err
    assert "--wait" in err
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err.decode()
    assert (out / "summary.json").read_bytes() == clean_summary


def test_wait_queues_behind_the_holder_and_reuses_its_runs(
    small: Path, tmp_path: Path, clean_summary: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "shared"
    first = _holding(small, out)
    assert compare(small, out, "--replications", "6", "--wait") == 0
    captured = capsys.readouterr()
    assert f"waiting for protomesh process {first.pid}" in captured.err
    assert "0 run(s) done, 12 reused, 0 failed" in captured.out
    first.communicate(timeout=300)
    assert first.returncode == 0
    assert (out / "summary.json").read_bytes() == clean_summary


def test_a_damaged_run_is_redone_and_named(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert compare(small, out) == 0
    clean = (out / "summary.json").read_bytes()
    capsys.readouterr()
    metrics = out / "dijkstra" / "rep-0" / "metrics.json"
    metrics.write_text(metrics.read_text().replace('"started"', '"started" ', 1))
    (out / "dijkstra" / "rep-1" / "error.json").write_text("{}")
    trace = out / "resilient" / "rep-2" / "trace.jsonl"
    trace.write_bytes(trace.read_bytes()[:100])
    (out / "resilient" / "rep-0" / "series.json").unlink()
    stale = out / "dijkstra" / ".rep-2.tmp-999999-deadbeef"
    stale.mkdir()
    (stale / "trace.jsonl").write_text("{")
    assert compare(small, out) == 0
    captured = capsys.readouterr()
    assert (
        "dijkstra/rep-0: damaged (metrics.json differs from the digest in run.json)" in captured.err
    )
    assert "dijkstra/rep-1: damaged (error.json is present beside an ok run.json)" in captured.err
    assert "resilient/rep-0: damaged (series.json is missing)" in captured.err
    assert (
        "resilient/rep-2: damaged (trace.jsonl differs from the digest in run.json)" in captured.err
    )
    assert captured.err.count("running it again") == 4
    assert "4 run(s) done, 2 reused, 0 failed" in captured.out
    assert not stale.exists()
    assert (out / "summary.json").read_bytes() == clean


def test_leftovers_are_temporary_names_only(tmp_path: Path) -> None:
    (tmp_path / "r" / ".rep-0.tmp-4194305-ab").mkdir(parents=True)
    (tmp_path / ".summary.json.tmp-4194305-cd").write_text("x")
    (tmp_path / "r" / "rep-0").mkdir()
    (tmp_path / ".lock").write_text("")
    removed = remove_leftovers(tmp_path)
    assert sorted(p.name for p in removed) == [
        ".rep-0.tmp-4194305-ab",
        ".summary.json.tmp-4194305-cd",
    ]
    assert (tmp_path / "r" / "rep-0").exists() and (tmp_path / ".lock").exists()


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, calls: int) -> None:
    """The ``calls``-th series written and every later one fail with ENOSPC."""
    real = runner.run_series
    count = {"n": 0}

    def extract(*args: Any) -> Any:
        count["n"] += 1
        if count["n"] >= calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args)

    monkeypatch.setattr(runner, "run_series", extract)


def test_a_full_disk_is_exit_2_with_the_path_the_reason_and_the_kept_runs(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _full_disk_after(monkeypatch, 3)
    out = tmp_path / "out"
    assert compare(small, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"error: cannot write {out / 'dijkstra' / 'rep-2'}: No space left on device"
    assert err[1] == f"2 finished run(s) kept in {out}: dijkstra/rep-0, dijkstra/rep-1"
    assert len(err) == 2
    assert sorted(p.name for p in (out / "dijkstra").iterdir()) == ["rep-0", "rep-1"]
    assert not (out / "summary.json").exists()
    monkeypatch.undo()
    assert compare(small, out) == 0  # the kept runs are reused, the rest run


def test_run_on_a_full_disk_is_exit_2(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _full_disk_after(monkeypatch, 2)
    out = tmp_path / "out"
    assert main(["run", str(small), "--out", str(out), "--replications", "3"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "1 finished replication(s) kept" in err
    assert "Traceback" not in err


def test_storage_error_names_a_path_even_without_a_file_name() -> None:
    error = StorageError.of(OSError(errno.ENOSPC, "No space left on device"), "out/x")
    assert str(error) == "cannot write out/x: No space left on device"


@pytest.fixture
def tiny_disk(tmpfs: Callable[[str], Path]) -> Path:
    """A 700 KiB tmpfs (``tmpfs``: skipped where it cannot be mounted)."""
    return tmpfs("700k")


def test_compare_onto_a_really_full_disk(small: Path, tiny_disk: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sim",
            "compare",
            str(small),
            "--out",
            str(tiny_disk / "o"),
            "--quiet",
            "--jobs",
            "2",
            "--no-plots",
        ],
        cwd=REPO,
        capture_output=True,
        timeout=300,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"error: cannot write {tiny_disk / 'o'}")
    assert lines[0].endswith(": No space left on device")
    assert "finished run(s) kept" in lines[1] or lines[1] == f"no finished run in {tiny_disk / 'o'}"
    kept = [d for d in (tiny_disk / "o").glob("*/rep-*")]
    for d in kept:
        record = json.loads((d / "run.json").read_text())
        assert record["status"] == "ok"


def test_terminate_stops_an_executor_without_cancel_futures() -> None:
    from concurrent.futures import Executor

    from sim.experiments.runner import ExecutorHandle

    class Plain(Executor):  # as Dask's ClientExecutor: shutdown(wait) only
        def __init__(self) -> None:
            self.calls: list[bool] = []

        def shutdown(self, wait: bool = True) -> None:  # type: ignore[override]
            self.calls.append(wait)

    closed: list[bool] = []
    plain = Plain()
    handle = ExecutorHandle(plain, "dask", 1, [lambda: closed.append(True)])
    handle.terminate()
    handle.close()  # once only
    assert plain.calls == [False] and closed == [True]
