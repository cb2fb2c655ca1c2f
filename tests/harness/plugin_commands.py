"""What the plug-in tests share: the command line with examples/plugins on the path, and
the one located error a bad plug-in entry must give."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from sim.scenario import ScenarioError
from tests.harness.paths import REPO

EXAMPLE = REPO / "examples" / "plugins"


def sim(*args: str, cwd: Path = REPO, path: str = str(EXAMPLE)) -> subprocess.CompletedProcess[str]:
    """``python -m sim ARGS`` in ``cwd`` with ``path`` (the example package) as PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run(
        [sys.executable, "-m", "sim", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_error(
    info: pytest.ExceptionInfo[ScenarioError], where: str, words: Sequence[str]
) -> None:
    """The scenario gave exactly one error, located in plug.yaml at ``where``, naming ``words``."""
    (diag,) = info.value.errors
    assert diag.field == where and diag.file == "plug.yaml" and diag.line > 1, str(diag)
    for word in words:
        assert word in diag.message, str(diag)
