"""compare --against DIR with a real live run that was interrupted (SIGINT while it ran):
``live`` keeps what it merged, with a ``metrics.json`` whose ``live.interrupted`` says why,
but such a run is not a measurement of the mesh over the duration: it is left out with a
warning, like a folder without metrics (docs/experiments.md, "Against the live mesh")."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.live_paths import ROOT, TINY
from tests.harness.live_runs import live, ours

#: three real live meshes, about 35 s of CPU: run by `make bench` and by CI (`.ci/run`)
#: with the other slow live tests
pytestmark = pytest.mark.slow


def _interrupted_live_run(out: Path) -> None:
    """A real ``live`` of the tiny mesh stopped by SIGINT about a second into its run."""
    argv = [sys.executable, "-m", "sim", "live", str(TINY), "--out", str(out)]
    process = subprocess.Popen(
        [*argv, "--speed", "0.5"], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 120
    for line in process.stderr:
        if "running" in line or time.monotonic() > deadline:
            break
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode == 130


def test_an_interrupted_live_run_is_left_out_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "live"
    done = live(str(TINY), "--out", str(out), "--speed", "4", "--quiet")
    assert done.returncode == 0, done.stderr
    _interrupted_live_run(out)
    assert ours(str(out)) == []
    stopped = out / "dijkstra" / "live-1"
    header = json.loads((stopped / "metrics.json").read_text())["live"]
    assert header["interrupted"] == "interrupted by SIGINT"
    finished = json.loads((out / "dijkstra" / "live-0" / "metrics.json").read_text())

    argv = [sys.executable, "-m", "sim", "compare", str(TINY), "--against", str(out)]
    argv += ["--replications", "2", "--jobs", "1", "--no-plots", "--quiet", "--json"]
    argv += ["--out", str(tmp_path / "sim")]
    got = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert f"warning: {stopped}: interrupted by SIGINT: left out" in got.stderr
    table = json.loads(got.stdout)
    assert [r["run"] for r in table["live_runs"]["dijkstra"]] == ["live-0"]
    started = table["routers"]["dijkstra"]["workflows_started"]
    assert started["live"] == finished["workflows"]["started"]


def test_only_interrupted_live_runs_are_exit_2_naming_them(tmp_path: Path) -> None:
    out = tmp_path / "live"
    _interrupted_live_run(out)
    argv = [sys.executable, "-m", "sim", "compare", str(TINY), "--against", str(out)]
    argv += ["--replications", "2", "--jobs", "1", "--no-plots", "--quiet"]
    got = subprocess.run(
        [*argv, "--out", str(tmp_path / "sim")], cwd=ROOT, capture_output=True, text=True
    )
    assert got.returncode == 2, got.stderr
    assert "Traceback" not in got.stderr
    assert str(out / "dijkstra" / "live-0") in got.stderr
    assert "interrupted by SIGINT" in got.stderr
