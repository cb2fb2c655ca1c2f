"""SIGINT, SIGTERM and SIGKILL to ``compare --jobs 2``, ``run --jobs 2`` and ``import mcp``
(issue 16, item 2 and 6): exit 130/143 with one line and no traceback from any process, the
finished runs kept and resumable, and no process protomesh started alive 5 s later.

Each signal lands at a seeded random moment; the processes of a trial are found by a marker
variable in their environment (``/proc/<pid>/environ``), the MCP server by its pid file."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from sim.experiments.runner import fingerprint, is_complete
from sim.scenario import load_scenario
from tests.harness.paths import REPO, SERVERS
from tests.harness.signals import marked, start, wait_until

LONG = """
name: long-mesh
seed: 5
duration: 1500
replications: 4
routers: [dijkstra, resilient]
trace: protocol
protocols: [MCP, MCP+]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: gw1, type: GATEWAY, protocols: {MCP+: 1.0, MCP: 1.0}}
  - {id: srv, type: TOOL_SERVER, protocols: {MCP: 1.0, MCP+: 1.0}, tools: [lookup]}
links:
  - {between: [planner, gw1], latency: {MCP+: 0.01}}
  - {between: [gw1, srv], latency: {MCP: 0.01, MCP+: 0.01}}
tools:
  - name: lookup
    side_effects: read
    failure_modes: [{error: ServiceDown, recovery: {retry: 2}}]
    service_time: {dist: exponential, mean: 0.05}
    errors: {ServiceDown: 0.05}
workflows:
  - name: ask
    initiator: planner
    protocol: MCP+
    arrivals: {process: poisson, rate: 0.3}
    tasks: [{id: a, tool: lookup}, {id: b, tool: lookup, after: [a]}]
    timeout: 5
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


@pytest.fixture
def long_file(tmp_path: Path) -> Path:
    path = tmp_path / "long.yaml"
    path.write_text(LONG, encoding="utf-8")
    return path


def started_runs(out: Path) -> bool:
    """True once a worker is writing (a temporary run directory exists)."""
    return any(".tmp-" in p.name for p in out.glob("*/.rep-*")) or any(out.glob("*/rep-*"))


def trial(long_file: Path, tmp_path: Path, sig: int, seed: int, argv: list[str]) -> None:
    rng = random.Random(seed)
    marker = uuid.uuid4().hex
    out = tmp_path / f"out-{seed}"
    proc = start([*argv, str(long_file), "--out", str(out), "--jobs", "2"], marker)
    assert wait_until(lambda: out.exists() and started_runs(out), 60), "no run ever started"
    time.sleep(rng.uniform(0.0, 1.5))
    proc.send_signal(sig)
    if sig == signal.SIGKILL:
        proc.wait(timeout=30)
        stdout, stderr = proc.communicate()
    else:
        stdout, stderr = proc.communicate(timeout=30)
    assert wait_until(lambda: not marked(marker), 5), f"left behind: {marked(marker)}"
    assert b"Traceback" not in stdout + stderr, stderr.decode()
    scenario = load_scenario(long_file)
    fp = fingerprint(scenario)
    reps = [d for d in out.glob("*/rep-*") if d.is_dir()]
    assert all(is_complete(d, fp) for d in reps), "a run directory that is not whole"
    if sig == signal.SIGKILL:
        return
    assert proc.returncode in (128 + sig, 0), (proc.returncode, stderr.decode())
    if proc.returncode == 0:
        return  # it finished before the signal landed: nothing more to see
    # the progress lines (stderr is no terminal here: docs/experiments.md#progress) aside
    lines = [ln for ln in stderr.decode().strip().splitlines() if not ln.startswith("runs ")]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"interrupted by {signal.Signals(sig).name}")
    if "finished and kept" in lines[0]:
        count = int(lines[0].split(": ", 1)[1].split()[0])
        assert count == len(reps)


@pytest.mark.parametrize(
    ("sig", "seed"),
    [
        # SIGINT and SIGTERM take one handler (sim.processes.STOPS): SIGTERM here, and
        # SIGINT to the same pool in test_smc_signals, cover its path in the default suite
        pytest.param(signal.SIGINT, 1, marks=pytest.mark.slow),
        (signal.SIGTERM, 2),
        (signal.SIGKILL, 3),
    ],
)
def test_compare_stops_cleanly_on_a_signal(
    long_file: Path, tmp_path: Path, sig: int, seed: int
) -> None:
    """The default suite sends SIGTERM (the stop handler) and SIGKILL (none: the workers
    die with the parent); SIGINT, the same handler as SIGTERM, runs with ``-m slow``."""
    trial(long_file, tmp_path, sig, seed, ["compare", "--quiet"])


@pytest.mark.slow
def test_a_stopped_compare_resumes_to_the_clean_summary(long_file: Path, tmp_path: Path) -> None:
    trial(long_file, tmp_path, signal.SIGTERM, 7, ["compare", "--quiet"])
    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sim",
            "compare",
            str(long_file),
            "--quiet",
            "--jobs",
            "2",
            "--out",
            str(tmp_path / "out-7"),
        ],
        cwd=REPO,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()
    clean = subprocess.run(
        [
            sys.executable,
            "-m",
            "sim",
            "compare",
            str(long_file),
            "--quiet",
            "--jobs",
            "2",
            "--out",
            str(tmp_path / "clean"),
        ],
        cwd=REPO,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert clean.returncode == 0
    assert (tmp_path / "out-7" / "summary.json").read_bytes() == (
        tmp_path / "clean" / "summary.json"
    ).read_bytes()


def test_run_stops_cleanly_on_sigterm(long_file: Path, tmp_path: Path) -> None:
    trial(long_file, tmp_path, signal.SIGTERM, 4, ["run"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 22))
def test_compare_stops_cleanly_at_many_random_moments(
    long_file: Path, tmp_path: Path, seed: int
) -> None:
    sig = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)[seed % 3]
    trial(long_file, tmp_path, sig, seed, ["compare", "--quiet"])


@pytest.mark.parametrize(
    "sig",
    [
        signal.SIGTERM,
        signal.SIGKILL,
        # SIGINT to import mcp waiting on this server: the default suite's
        # test_signals_startup.test_ctrl_c_while_import_mcp_loads_prints_one_line
        pytest.param(signal.SIGINT, marks=pytest.mark.slow),
    ],
)
def test_import_mcp_leaves_no_server_behind(tmp_path: Path, sig: int) -> None:
    pidfile = tmp_path / "pid"
    server = [sys.executable, str(SERVERS / "raw_server.py"), "slow", str(pidfile)]
    proc = start(["import", "mcp", "--timeout", "120", "--", *server], uuid.uuid4().hex)
    assert wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), 60)
    pid = int(pidfile.read_text())
    time.sleep(0.2)
    proc.send_signal(sig)
    if sig == signal.SIGKILL:
        proc.wait(timeout=30)
        stdout, stderr = proc.communicate()
    else:
        stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 128 + sig, stderr.decode()
        lines = stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("interrupted by"), lines
    assert b"Traceback" not in stdout + stderr
    assert wait_until(lambda: not alive(pid), 5), f"server {pid} left behind"


def test_a_finished_command_ignores_signals_while_the_interpreter_exits() -> None:
    """Python puts the default handlers back while it finalises: a SIGTERM then (pools
    being joined after the work is done) would kill a finished command with -15. The
    handlers seen by an exit hook must be SIG_IGN."""
    probe = (
        "import atexit, runpy, signal, sys\n"
        "atexit.register(lambda: print(signal.getsignal(signal.SIGTERM) is signal.SIG_IGN,"
        " signal.getsignal(signal.SIGINT) is signal.SIG_IGN))\n"
        "sys.argv = ['sim', 'validate', 'scenarios/train_booking.yaml']\n"
        "runpy.run_module('sim', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["True", "True"], done.stdout


def test_a_stop_swallowed_by_a_finaliser_is_delivered_again() -> None:
    """A signal whose handler runs inside ``__del__`` (or a weakref callback) raises there,
    where Python only prints "Exception ignored"; the stop must still reach the command."""
    probe = (
        "import gc, os, signal, time\n"
        "from sim.processes import Stopped, stop_on_signals\n"
        "class Finalised:\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        for _ in range(100000): pass\n"
        "try:\n"
        "    with stop_on_signals():\n"
        "        Finalised()\n"
        "        gc.collect()\n"
        "        time.sleep(30)\n"  # cut short by the stop sent again
        "        print('not stopped')\n"
        "except Stopped as stop:\n"
        "    print('stopped', stop.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "stopped 143", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
