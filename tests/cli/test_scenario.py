"""``python -m sim validate`` and ``python -m sim schema``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main
from sim.scenario.schema import scenario_json_schema

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "train_booking.yaml"
MINIMAL = (ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text("utf-8")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_validate_good_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SHIPPED)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{SHIPPED}: ok (5 agents, 6 links, 6 tools, 1 workflows)\n"
    assert err == ""


def test_validate_reports_every_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(
        tmp_path,
        "bad.yaml",
        MINIMAL.replace("duration: 100", "duration: -1").replace("type: GATEWAY", "type: GW"),
    )
    assert main(["validate", bad]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{bad}:4:11: duration: must be > 0 (got -1)",
        f"{bad}:11:11: agents[1].type: must be one of LLM_AGENT, TOOL_SERVER, COORDINATOR, "
        "GATEWAY (got 'GW')",
    ]


def test_validate_good_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.yaml", MINIMAL)
    bad = write(tmp_path, "bad.yaml", MINIMAL.replace("agents:", "agnets:"))
    assert main(["validate", bad, good]) == 2
    out, err = capsys.readouterr()
    assert out == f"{good}: ok (3 agents, 2 links, 2 tools, 1 workflows)\n"
    assert err == f"{bad}:6:1: agnets: unknown key 'agnets' (did you mean 'agents'?)\n"


def test_validate_prints_warnings_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "warn.yaml", MINIMAL.replace("    requires_approval: true\n", ""))
    assert main(["validate", path]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{path}: ok (")
    assert err.startswith(f"{path}:25:5: warning: tools[1].requires_approval: ")


def test_validate_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.yaml")
    assert main(["validate", missing]) == 2
    assert capsys.readouterr().err.startswith(f"{missing}:1:1: <root>: cannot read")


def test_validate_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 2
    assert "FILE" in capsys.readouterr().err


def test_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n")
    assert json.loads(out) == scenario_json_schema()


def test_validate_in_a_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sim", "validate", "scenarios/train_booking.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout
        == "scenarios/train_booking.yaml: ok (5 agents, 6 links, 6 tools, 1 workflows)\n"
    )
