"""A ``live`` start that fails (an agent's real server that exits at start, a port that is
taken) leaves nothing in the output folder: the error line is what explains it. Before,
it left ``<router>/live-<k>/processes/`` (the processes' specs, logs and empty parts),
which took the number ``k`` and which ``compare --against`` then warned about as "no
metrics.json (an unfinished live run?)"."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from tests.harness.live_runs import SERVER, compare_against, desk, live, ours

#: two failed starts and one live mesh of about 8 s: run by `make bench` and by CI
pytestmark = pytest.mark.slow


def test_a_failed_start_leaves_nothing_that_compare_against_takes_for_a_run(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nsys.stderr.write('no licence key, giving up\\n')\nsys.exit(3)\n")
    failing = desk(tmp_path, {"command": [sys.executable, str(quits)]})
    done = live(str(failing), "--out", str(out), "--quiet", timeout=120)
    assert done.returncode == 2 and "failed to start" in done.stderr, done.stderr
    assert "its stderr: no licence key, giving up" in done.stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == []

    with socket.socket() as taken:  # held open: the agent cannot listen on it
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        blocked = desk(tmp_path, {"command": [sys.executable, str(SERVER)], "port": port})
        done = live(str(blocked), "--out", str(out), "--quiet", timeout=120)
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == []

    good = desk(tmp_path, {"command": [sys.executable, str(SERVER)]})
    done = live(str(good), "--out", str(out), "--quiet", timeout=120)
    assert done.returncode == 0, done.stderr
    # the failed starts took no number: the run that ran is the first
    assert sorted(p.name for p in (out / "dijkstra").iterdir()) == ["live-0"]
    compared = compare_against(good, out, tmp_path / "c")
    assert compared.returncode == 0, compared.stderr
    assert "warning" not in compared.stderr, compared.stderr
    assert ours(str(tmp_path)) == []
