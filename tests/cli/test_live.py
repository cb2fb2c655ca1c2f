"""``python -m sim live``'s command line (sim/cli/live.py): an output folder that cannot be
made is one located line and exit 2, as for ``run``, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.live_paths import TINY
from tests.harness.live_runs import live, ours


@pytest.mark.parametrize("where", ["file", "under_a_file"])
def test_an_output_folder_that_cannot_be_made_is_exit_2(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder\n")
    out = blocker if where == "file" else blocker / "results"
    done = live(str(TINY), "--out", str(out), "--speed", "4", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: {out}: ")
    assert done.stdout == ""
    assert ours(str(out)) == []  # nothing was started
