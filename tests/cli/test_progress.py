"""Progress of run and compare (issue 37, item 8): plain lines when stderr is no terminal,
one per finished run and a heartbeat while none finishes; an estimate that does not climb
while runs take their usual time; a run being checked says so."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli.progress import HEARTBEAT, LiveProgress, eta
from sim.experiments.rundir import CHECKING
from sim.experiments.runner import RunRecord


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _plain(clock: Clock, workers: int = 2) -> tuple[LiveProgress, io.StringIO]:
    out = io.StringIO()
    progress = LiveProgress(
        300.0, True, "inline", terminal=False, workers=workers, clock=clock, stream=out
    )
    return progress, out


def _rec(key: str, wall: float, status: str = "ok") -> RunRecord:
    router, rep = key.split("/rep-")
    return RunRecord(key, None, router, int(rep), status, wall=wall)


def test_plain_lines_one_per_finished_run_with_the_estimate() -> None:
    clock = Clock()
    progress, out = _plain(clock)
    progress.start(3, 1)
    assert out.getvalue() == "1 finished run(s) reused\nruns 0/3: started\n"
    assert progress.report is not None
    progress.report("a/rep-1", 150.0)
    clock.t += 2.0
    progress.record(_rec("a/rep-0", 2.0))
    progress.stop()
    last = out.getvalue().splitlines()[-1]
    # mean run 2 s; a/rep-1 2 s old: 0 s left; one queued: 2 s; two workers: 1 s
    assert last == "runs 1/3: a/rep-0 ok in 2.0 s; running: a/rep-1 t=150s of 300s  ETA 0:01"


def test_a_heartbeat_only_after_a_silence() -> None:
    clock = Clock()
    progress, out = _plain(clock)
    progress.start(2, 0)
    assert progress.report is not None
    progress.report("a/rep-0", CHECKING)
    clock.t += HEARTBEAT - 1
    progress.heartbeat()
    assert out.getvalue() == "runs 0/2: started\n"
    clock.t += 1
    progress.heartbeat()
    progress.stop()
    assert out.getvalue().splitlines()[-1] == "runs 0/2: running: a/rep-0 checking of 300s  ETA –"


def test_quiet_prints_nothing() -> None:
    out = io.StringIO()
    progress = LiveProgress(300.0, False, "inline", terminal=False, stream=out)
    progress.start(2, 0)
    progress.record(_rec("a/rep-0", 1.0))
    progress.stop()
    assert out.getvalue() == "" and progress.report is None


def test_the_estimate_before_any_run_finished() -> None:
    assert eta([], [(1.0, 0.01)], 3, 1) is None  # too early to tell
    assert eta([], [(2.0, 0.5)], 1, 1) == 2.0 + 4.0  # a run is 4 s: 2 s left, then one


ages = st.lists(st.tuples(st.floats(0, 50), st.one_of(st.none(), st.floats(0, 1))), max_size=4)


@settings(max_examples=60)
@given(
    st.lists(st.floats(0.1, 100), min_size=1, max_size=5),
    ages,
    st.integers(0, 10),
    st.integers(1, 4),
    st.floats(0, 5),
)
def test_the_estimate_never_climbs_while_runs_take_their_usual_time(
    walls: list[float],
    running: list[tuple[float, float | None]],
    queued: int,
    workers: int,
    wait: float,
) -> None:
    now = eta(walls, running, queued, workers)
    assert now is not None and now >= 0
    mean = sum(walls) / len(walls)
    later = [(age + wait, share) for age, share in running]
    if all(age <= mean for age, _ in later):
        after = eta(walls, later, queued, workers)
        assert after is not None and after <= now + 1e-9


def test_the_last_run_says_what_comes_next() -> None:
    clock = Clock()
    out = io.StringIO()
    progress = LiveProgress(
        300.0, True, "inline", terminal=False, clock=clock, stream=out, after="writing the report"
    )
    progress.start(2, 0)
    progress.record(_rec("a/rep-0", 1.0))
    assert not out.getvalue().endswith("writing the report\n")
    progress.record(_rec("a/rep-1", 1.0))
    progress.stop()
    assert out.getvalue().endswith("ETA 0:00\nwriting the report\n")


#: A real process whose progress manager, as it starts, has its parent sent SIGTERM (from
#: the manager's initializer: while the parent waits for the manager's address, before
#: the manager is registered for shutdown), the command's stops armed.
STOPPED_AS_THE_MANAGER_STARTS = textwrap.dedent(
    """
    import os, signal, sys, time
    import sim.processes as processes
    from sim.processes import Stopped, stop_on_signals_from_now

    first = processes.worker_start

    def start(parent):
        os.kill(parent, signal.SIGTERM)
        first(parent)

    processes.worker_start = start
    stop_on_signals_from_now()
    from sim.cli.progress import LiveProgress

    try:
        LiveProgress(10.0, True, "processes", terminal=False, stream=sys.stderr)
        time.sleep(30)
    except Stopped:
        print("stopped", flush=True)
    """
)


def test_a_stop_while_the_progress_manager_starts_still_lets_the_command_end() -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", STOPPED_AS_THE_MANAGER_STARTS],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=60,  # a hang guard, not a timing: the stuck exit never ends
        )
    except subprocess.TimeoutExpired:
        pytest.fail("stopped while its progress manager started, the process never exited")
    assert (done.returncode, done.stdout) == (0, "stopped\n"), done.stderr
