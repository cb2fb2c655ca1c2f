"""Scenario texts broken one rule at a time, and the rules' warnings, for the rule tests."""

from __future__ import annotations

from pathlib import Path

from sim.scenario import Diagnostic, ScenarioError, load_scenario_with_warnings
from tests.harness.scenario_load import MINIMAL


def broken(*edits: tuple[str, str], append: str = "") -> str:
    """The minimal scenario with each ``(old, new)`` edit applied; ``old`` must occur once."""
    text = MINIMAL
    for old, new in edits:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text + append


def load(tmp_path: Path, text: str) -> tuple[str, list[Diagnostic], list[Diagnostic]]:
    """(file, errors, warnings) of ``text`` written to a file."""
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        _, warnings = load_scenario_with_warnings(path)
    except ScenarioError as exc:
        return str(path), list(exc.errors), list(exc.warnings)
    return str(path), [], warnings


def check(diag: Diagnostic, file: str, where: str, *words: str) -> None:
    """``diag`` is at ``where`` (``line:col: field``) in ``file`` and has every word."""
    tag = "warning: " if diag.severity == "warning" else ""
    line_col, field = where.split(": ")
    assert str(diag).startswith(f"{file}:{line_col}: {tag}{field}: "), str(diag)
    for word in words:
        assert word in diag.message, f"{word!r} not in {str(diag)!r}"


TASK_WARNINGS = """\
name: warn
protocols: [MCP+, SGD]
agents:
  - {id: a, type: LLM_AGENT, capabilities: [planning], protocols: {MCP+: 1, SGD: 1}}
  - {id: s, type: TOOL_SERVER, capabilities: [train_booking], protocols: {MCP+: 1}, tools: [t]}
links: [{between: [a, s], latency: {MCP+: 0.01}}]
tools:
  - {name: t, side_effects: read, input_schema: {type: object, required: [from, to]}}
workflows:
  - name: w
    initiator: a
    protocol: MCP+
    arrivals: {times: [0]}
    tasks:
      - {id: partial, tool: t, args: {from: x}}
      - {id: collected, tool: t, protocol: SGD}
      - {id: book, capability: booking_trains}
      - {id: nothing, capability: weather_forecast}
"""
