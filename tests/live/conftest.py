"""The live tests' shared run: one ``live`` run of the tiny mesh per session."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tests.harness.live_paths import TINY
from tests.harness.live_runs import live


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One live run shared by the tests that read it, made once whatever the number of
    xdist workers: the first worker runs it under a lock, the others read its files. At
    ``--speed 2``: the 4 scenario seconds and the instances' ends in half the wall time,
    the same instances (15 started, 12 succeeded at speed 1, 2 and 4)."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # this session's
    out = shared / "live-tiny"
    with open(shared / "live-tiny.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "done.json").exists():
            done = live(str(TINY), "--out", str(out), "--speed", "2", "--capture", "--quiet")
            (out / "done.json").write_text(
                json.dumps(
                    {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
                )
            )
        saved = json.loads((out / "done.json").read_text())
    done = subprocess.CompletedProcess(
        ["live"], saved["returncode"], saved["stdout"], saved["stderr"]
    )
    run = out / "dijkstra" / "live-0"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    return {"done": done, "out": out, "run": run, "trace": trace,
            "metrics": json.loads((run / "metrics.json").read_text())}  # fmt: skip
