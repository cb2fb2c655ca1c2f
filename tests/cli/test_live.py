"""``python -m sim live``'s command line (sim/cli/live.py): an output folder that cannot be
made is one located line and exit 2, as for ``run``, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_a_refused_live_command_ends_the_template_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The template (sim.live.forked) holds the command's stderr while it imports: a
    refusal ends it rather than leave whoever reads that stderr waiting for its imports."""
    import os
    from multiprocessing import forkserver

    from sim.cli import main
    from sim.live import forked

    server: Any = forkserver._forkserver
    started: list[int | None] = []
    warm = forked.warm

    def recorded() -> None:
        warm()
        started.append(server._forkserver_pid)

    monkeypatch.setattr(forked, "warm", recorded)
    code = main(["live", str(TINY), "--router", "nope", "--out", str(tmp_path / "out")])
    assert code == 2
    assert capsys.readouterr().err.startswith("error: --router: unknown router 'nope'")
    assert started and started[0] is not None  # the template was started early...
    assert server._forkserver_pid is None  # ...and is ended, reaped
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)
