"""The minimal scenario and the located-error assertions of the loader tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import Diagnostic, ScenarioError, load_scenario
from tests.harness.paths import MINIMAL_FILE

MINIMAL = MINIMAL_FILE.read_text(encoding="utf-8")


def broken(*edits: tuple[str, str]) -> str:
    """The minimal scenario with each ``(old, new)`` edit applied; ``old`` must occur once."""
    text = MINIMAL
    for old, new in edits:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


def errors_of(tmp_path: Path, text: str | bytes) -> tuple[str, list[Diagnostic]]:
    """Write ``text`` to a file, load it, and return (file name, its errors)."""
    path = tmp_path / "scenario.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.errors, "a ScenarioError lists at least one error"
    return str(path), list(info.value.errors)


def assert_diag(diag: Diagnostic, file: str, line: int, col: int, field: str, *words: str) -> None:
    """``diag`` is at ``file:line:col`` on ``field`` and its message has every word."""
    assert (diag.file, diag.line, diag.column, diag.field) == (file, line, col, field), str(diag)
    for word in words:
        assert word in diag.message, f"{word!r} not in {str(diag)!r}"
    assert str(diag).startswith(f"{file}:{line}:{col}: {field}: ")


def only_error(tmp_path: Path, text: str | bytes) -> tuple[str, Diagnostic]:
    file, errors = errors_of(tmp_path, text)
    assert len(errors) == 1, "\n".join(map(str, errors))
    return file, errors[0]
