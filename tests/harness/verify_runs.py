"""``python -m sim verify`` run in this process and its verdicts read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from tests.harness.paths import REPO

TRAIN = str(REPO / "scenarios" / "train_booking.yaml")


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Run ``verify ARGS --json``: exit code, parsed JSON, stderr."""
    capsys.readouterr()
    code = main(["verify", *args, "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else None, out.err


def confirm(
    capsys: pytest.CaptureFixture[str], trace: str, scenario: str, name: str, *extra: str
) -> str:
    """``check`` on a counterexample: it must report a violation of ``name``; its text."""
    capsys.readouterr()
    selector = ["--only", name] if not extra else ["--property", name, *extra]
    code = main(["check", trace, "--scenario", scenario, *selector])
    out = capsys.readouterr().out
    assert code == 1, out
    line = next(x for x in out.splitlines() if x.startswith(name + " "))
    assert "VIOLATED" in line, out
    return out


def events(path: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path(path).read_text().splitlines()]


def verdicts(obj: Any) -> dict[tuple[str, str], dict[str, Any]]:
    objs = obj if isinstance(obj, list) else [obj]
    return {(w["workflow"], p["name"]): p for w in objs for p in w["properties"]}
