"""The public API of ``sim`` and the README's examples, run as tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


def _console_blocks(text: str) -> list[tuple[str, str]]:
    """(command, expected output) of each ``console`` block of ``text``: the ``$`` line,
    joined with its ``\\`` continuation lines, then the rest of the block."""
    out: list[tuple[str, str]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        lines = block.splitlines()
        command = lines.pop(0).removeprefix("$ ")
        while command.endswith("\\") and lines:
            command = command[:-1] + lines.pop(0).strip()
        out.append((" ".join(command.split()), "\n".join(lines)))
    return out


@pytest.mark.parametrize(("command_word", "exit_code"), [(" route ", 0), (" validate ", 2)])
def test_readme_console_examples_print_what_the_readme_shows(
    command_word: str, exit_code: int
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = [(c, e) for c, e in _console_blocks(readme) if command_word in c]
    assert examples, f"the README shows a{command_word}example"
    for command, expected in examples:
        args = command.split()
        assert args[:3] == ["python", "-m", "sim"]
        done = subprocess.run(
            [sys.executable, "-m", "sim", *args[3:]],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=False,
        )
        assert done.returncode == exit_code, done.stderr
        assert (done.stdout + done.stderr).strip() == expected.strip()


def test_readme_scenarios_load() -> None:
    """Every scenario the README shows (a ``yaml`` block with the schema line) loads."""
    from sim.scenario import parse_scenario

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.S) if "$schema" in b]
    assert blocks
    for block in blocks:
        scenario, warnings = parse_scenario(block, "README.md")
        assert scenario.agents and warnings == []
