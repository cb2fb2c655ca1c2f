"""docs/api.md's notebook runs as written: its ``python`` cells in order, in one namespace,
from a folder holding the shipped scenarios, each printing the ``text`` block under it."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "api.md"
CELL = re.compile(r"^```python\n(.*?)^```\n\n```text\n(.*?)^```$", re.S | re.M)


def cells(text: str) -> list[tuple[str, str]]:
    """(code, what it prints) of each cell of a page."""
    return [(m.group(1), m.group(2)) for m in CELL.finditer(text)]


def test_the_notebook_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "scenarios", tmp_path / "scenarios")
    monkeypatch.chdir(tmp_path)
    found = cells(PAGE.read_text(encoding="utf-8"))
    assert len(found) == 3
    namespace: dict[str, object] = {}
    for code, shown in found:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(PAGE), "exec"), namespace)
        assert out.getvalue() == shown, code
    assert (tmp_path / "results" / "api-tour" / "summary.json").is_file()


def test_cells_are_found_with_their_output() -> None:
    page = "```python\nprint(1)\n```\n\n```text\n1\n```\n\n```python\nx = 2\n```\n"
    assert cells(page) == [("print(1)\n", "1\n")]
