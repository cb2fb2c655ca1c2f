"""Ctrl-C and SIGTERM to ``smc --jobs 2``: exit 130/143 with one line, no traceback, no
worker left behind (the pool is that of ``run`` and ``compare``)."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.harness.signals import marked, start, wait_until

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "sig",
    [
        signal.SIGINT,
        # one handler for both (sim.processes.STOPS); SIGTERM to this pool's parent runs
        # in the default suite as test_signals.test_compare_stops_cleanly_on_a_signal[15-2]
        pytest.param(signal.SIGTERM, marks=pytest.mark.slow),
    ],
)
def test_smc_stops_cleanly_on_a_signal(sig: int) -> None:
    marker = uuid.uuid4().hex
    argv = ["smc", "scenarios/smc_approval.yaml", "--width", "0.001", "--jobs", "2"]
    proc = start(argv, marker)
    # the parent and its two pool workers are up (and the workers are computing)
    assert wait_until(lambda: len(marked(marker)) >= 3, 60), "the pool never started"
    time.sleep(0.5)  # the workers take their first batch at once: half a second in it
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert wait_until(lambda: not marked(marker), 5), f"left behind: {marked(marker)}"
    assert proc.returncode == 128 + sig, (proc.returncode, stderr.decode())
    assert b"Traceback" not in stdout + stderr, stderr.decode()
    lines = stderr.decode().strip().splitlines()
    assert lines == [f"interrupted by {signal.Signals(sig).name}"], lines
