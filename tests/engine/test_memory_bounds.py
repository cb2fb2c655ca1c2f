"""The memory bounds of issue 38, measured (slow: ``make bench``): a run whose arrivals
outgrow any memory stays within the default ``--max-memory`` of 1.5 GB and stops at its
located driver; smc's memory does not grow with its replications (20,000 within 250 MB).
Each command runs in a fresh interpreter that prints its own peak (``VmHWM``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.engine.guard import DEFAULT_MAX_MEMORY

ROOT = Path(__file__).resolve().parents[2]
FLOOD = ROOT / "tests" / "fixtures" / "attack" / "resources" / "rate_1e6.yaml"

CHILD = """
import contextlib, io, json, sys
from benchmarks.memory import own_peak_rss
from sim.cli import main
err = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "peak": own_peak_rss(), "err": err.getvalue()[-2000:]}))
"""


def peak_of(argv: list[str]) -> dict[str, object]:
    """Exit code, peak resident bytes and the end of stderr of ``python -m sim argv``."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


@pytest.mark.slow  # about 3,000,000 events before the budget stops it: a minute or more
def test_a_million_arrivals_a_second_stay_within_the_default_memory(tmp_path: Path) -> None:
    figures = peak_of(["run", str(FLOOD), "--out", str(tmp_path / "out"), "--quiet"])
    assert figures["code"] == 2
    err = str(figures["err"])
    assert "(--max-memory 1.5GB: resident " in err
    assert f"rate 1e+06 ({FLOOD}:37:40: workflows[0].arrivals.rate)" in err
    peak = figures["peak"]
    assert isinstance(peak, int) and 0 < peak <= DEFAULT_MAX_MEMORY


@pytest.mark.slow  # 20,000 replications: half a minute or more
def test_smc_memory_is_flat_in_the_replications() -> None:
    scenario = ROOT / "scenarios" / "smc_approval.yaml"
    figures = peak_of(["smc", str(scenario), "--max-runs", "20000", "--width", "0.0001"])
    assert figures["code"] == 0, figures["err"]
    peak = figures["peak"]
    assert isinstance(peak, int) and 0 < peak <= 250_000_000
