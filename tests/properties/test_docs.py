"""docs/properties.md is true to the code: each formula it shows parses."""

from __future__ import annotations

import re
from pathlib import Path

from sim.properties import parse
from sim.scenario import load_scenario
from sim.scenario.properties import tool_attributes

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "properties.md").read_text(encoding="utf-8")


def test_every_example_formula_parses_against_the_train_scenario() -> None:
    tools = tool_attributes(load_scenario(ROOT / "scenarios" / "train_booking.yaml"))
    rows = [line for line in PAGE.splitlines() if line.startswith("| ") and "`" in line]
    formulas = [re.findall(r"`([^`]+)`", row)[-1].replace("\\|", "|") for row in rows]
    examples = [f for f in formulas if any(op in f for op in ("G ", "F ", "O ", "->"))]
    assert len(examples) >= 12
    for text in examples:
        parse(text, tools=tools)
