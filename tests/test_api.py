"""The public API of ``sim`` and the README's scenarios, run as tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sim

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_resolves() -> None:
    for name in sim.__all__:
        assert getattr(sim, name) is not None
    with pytest.raises(AttributeError):
        _ = sim.no_such_name  # type: ignore[attr-defined]


def test_the_package_docstring_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = sim.__doc__ or ""
    code = "\n".join(
        line[4:] for line in doc.splitlines() if line.startswith("    ") and line.strip()
    )
    scenario = (ROOT / "scenarios" / "train_booking.yaml").read_text()
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "train_booking.yaml").write_text(
        scenario.replace("duration: 3600", "duration: 120")
    )
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, "sim.__doc__", "exec"), namespace)
    assert namespace["route"].path == ("planner", "gw1", "tickets")  # type: ignore[attr-defined]
    assert namespace["report"].ok  # type: ignore[attr-defined]
    assert namespace["metrics"]["workflows"]["started"] > 0  # type: ignore[index]


# The README's console examples print what it shows: tests/docs/test_examples.py, which
# runs every shell block of README.md and docs/ (one place for that fact).


def test_readme_scenarios_load() -> None:
    """Every scenario the README shows (a ``yaml`` block with the schema line) loads."""
    from sim.scenario import parse_scenario

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.S) if "$schema" in b]
    assert blocks
    for block in blocks:
        scenario, warnings = parse_scenario(block, "README.md")
        assert scenario.agents and warnings == []
