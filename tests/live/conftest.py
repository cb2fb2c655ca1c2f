"""The live tests' shared run: one ``live`` run of the tiny mesh per session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness.live_paths import TINY
from tests.harness.live_runs import live
from tests.harness.session_once import built_once


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One live run shared by the tests that read it, made once whatever the number of
    xdist workers (``built_once``), its exit and output kept beside it in done.json. At
    ``--speed 2``: the 4 scenario seconds and the instances' ends in half the wall time,
    the same instances (15 started, 12 succeeded at speed 1, 2 and 4)."""

    def build(out: Path) -> None:
        done = live(str(TINY), "--out", str(out), "--speed", "2", "--capture", "--quiet")
        saved = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
        out.mkdir(parents=True, exist_ok=True)  # a run that failed to start made none
        (out / "done.json").write_text(json.dumps(saved))

    out = built_once(tmp_path_factory, "live-tiny", build)
    saved = json.loads((out / "done.json").read_text())
    done = subprocess.CompletedProcess(
        ["live"], saved["returncode"], saved["stdout"], saved["stderr"]
    )
    run = out / "dijkstra" / "live-0"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    return {"done": done, "out": out, "run": run, "trace": trace,
            "metrics": json.loads((run / "metrics.json").read_text())}  # fmt: skip
