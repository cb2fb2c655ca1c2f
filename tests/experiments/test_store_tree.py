"""The folder lock covers the tree (issue 38, item 4): a folder inside a locked folder is
locked too, so is a folder that contains a locked one, and clean-up never deletes what
another process is writing. The other process is a real one, holding its lock as
``compare`` does, with a run directory in progress under a temporary name."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.experiments.store import (
    FolderBusy,
    FolderLock,
    is_leftover,
    remove_leftovers,
    temp_name,
    writer_pid,
)

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "tests" / "fixtures" / "scenarios" / "small_mesh.yaml"
#: Above Linux's largest pid_max (2**22): no process has it.
DEAD_PID = 4_194_305

#: A writer as ``compare`` is one: the lock held, a run directory being written under its
#: temporary name; it prints that name, then holds until its stdin closes.
HOLDER = """
import sys
from pathlib import Path
from sim.experiments.store import FolderLock, temp_name
base = Path(sys.argv[1])
with FolderLock(base):
    run = temp_name(base / "dijkstra" / "rep-0")
    run.mkdir(parents=True)
    (run / "trace.jsonl").write_text("{}\\n")
    print(run, flush=True)
    sys.stdin.read()
"""


class Holder:
    """A real process holding ``base``'s lock with a run in progress (``running``)."""

    def __init__(self, base: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(base)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line, "the holder never took its lock"
        self.running = Path(line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


@pytest.fixture
def holder_inside(tmp_path: Path) -> Iterator[Holder]:
    """A process holding ``tmp_path/out/inner``."""
    holder = Holder(tmp_path / "out" / "inner")
    yield holder
    if holder.proc.poll() is None:
        holder.release()


def test_run_into_a_folder_holding_a_locked_one_is_refused_and_deletes_nothing(
    tmp_path: Path, holder_inside: Holder, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["run", str(SMALL), "--out", str(out), "--replications", "1", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: {out} is in use by another protomesh process (pid {holder_inside.pid}, which "
        f"holds {out / 'inner'}); wait for it to finish, or pass --wait to queue behind it"
    ]
    assert (holder_inside.running / "trace.jsonl").read_text() == "{}\n"
    assert not (out / "dijkstra").exists()


def test_a_folder_inside_a_locked_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = Holder(tmp_path / "out")
    try:
        inner = tmp_path / "out" / "inner"
        argv = ["compare", str(SMALL), "--out", str(inner), "--quiet", "--no-plots"]
        assert main([*argv, "--replications", "1", "--jobs", "1"]) == 2
        err = capsys.readouterr().err
        assert f"(pid {holder.pid}, which holds {tmp_path / 'out'})" in err
        assert holder.running.is_dir() and not (inner / "summary.json").exists()
    finally:
        holder.release()


def test_wait_queues_behind_a_holder_inside_then_cleans_only_dead_leftovers(
    tmp_path: Path, holder_inside: Holder
) -> None:
    out = tmp_path / "out"
    stale = out / f".summary.json.tmp-{DEAD_PID}-ab"
    stale.write_text("half")
    told: list[str] = []

    def release(pid: str) -> None:
        told.append(pid)
        holder_inside.release()

    with FolderLock(out, wait=True, on_wait=release):
        assert told == [str(holder_inside.pid)]
        assert not stale.exists()
        # the holder's run directory: its writer is dead now, so it is a leftover too
        assert not holder_inside.running.exists()


def test_clean_up_keeps_what_a_live_process_is_writing(tmp_path: Path) -> None:
    writer = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    try:
        alive = tmp_path / "r" / f".rep-0.tmp-{writer.pid}-ab"
        alive.mkdir(parents=True)
        dead = tmp_path / f".summary.json.tmp-{DEAD_PID}-cd"
        dead.write_text("x")
        mine = tmp_path / f".metrics.json.tmp-{os.getpid()}-ef"
        mine.write_text("x")
        assert remove_leftovers(tmp_path) == [mine, dead]
        assert alive.is_dir()
    finally:
        writer.communicate(b"")
    assert remove_leftovers(tmp_path) == [alive.parent / alive.name]


def test_the_same_folder_twice_in_one_process_is_still_refused(tmp_path: Path) -> None:
    with FolderLock(tmp_path / "a"), pytest.raises(FolderBusy, match=r"which holds .*/a\)"):
        FolderLock(tmp_path / "a" / "b").__enter__()


@settings(max_examples=40)
@given(st.text(st.characters(blacklist_characters="/\x00"), min_size=1, max_size=40))
def test_a_temporary_name_is_a_leftover_carrying_its_writer(name: str) -> None:
    tmp = temp_name(Path("/x") / name)
    assert is_leftover(tmp.name) and writer_pid(tmp.name) == os.getpid()
    assert writer_pid(name) is None or ".tmp-" in name


@pytest.mark.slow
def test_run_beside_a_real_compare_inside_its_folder_leaves_it_whole(tmp_path: Path) -> None:
    """The finding itself, with the real commands: ``compare --out X/inner`` running (long
    enough for ``run`` to start beside it), ``run --out X`` exits 2 naming it, and the
    compare finishes with every run."""
    inner = tmp_path / "x" / "inner"
    argv = ["compare", str(SMALL), "--out", str(inner), "--quiet", "--no-plots", "--jobs", "1"]
    compare = subprocess.Popen(
        [sys.executable, "-m", "sim", *argv, "--replications", "100"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    while not list(inner.glob("*/.rep-*.tmp-*")) and compare.poll() is None:
        time.sleep(0.05)  # its first run in progress: the lock is held
    done = subprocess.run(
        [sys.executable, "-m", "sim", "run", str(SMALL), "--out", str(inner.parent), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compare.poll() is None, "the compare ended before run started: make it longer"
    assert done.returncode == 2, done.stderr
    assert f"(pid {compare.pid}, which holds {inner})" in done.stderr
    _, err = compare.communicate(timeout=600)
    assert compare.returncode == 0, err.decode()
    assert len(list(inner.glob("*/rep-*/run.json"))) == 200
