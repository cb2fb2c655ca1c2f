"""One tool descriptor: a scenario's tool entry builds the calculus's ``ToolPlus``
directly, equal to what the calculus parses from the same entry's JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.calculus import ToolPlus, tool_plus_from_mapping
from sim.calculus.mcp import (
    Abort,
    Annotations,
    Dependency,
    FailureMode,
    Fallback,
    Relation,
    Retry,
    SideEffect,
)
from sim.scenario import load_scenario, parse_scenario

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.yaml"))

TOOL = """\
name: desc
protocols: [MCP]
agents:
  - {id: a, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [book, pay]}
tools:
  - name: book
    description: Book a seat.
    summary: Books.
    input_schema: {type: object, properties: {day: {type: string}}, required: [day]}
    side_effects: write
    requires_approval: true
    annotations: {readOnlyHint: false, title: Book}
    failure_modes:
      - {error: ServiceDown, recovery: {retry: 2}}
      - {error: NotFound, recovery: {fallback: pay}}
      - {error: Denied, recovery: {abort: true}}
    dependencies: [{tool: pay, relation: ProducesInputFor}]
  - name: pay
"""


def test_a_tool_entry_builds_its_descriptor_field_by_field() -> None:
    scenario, _ = parse_scenario(TOOL, "desc.yaml")
    book = scenario.tool("book").descriptor()
    assert book == ToolPlus(
        "book",
        "Book a seat.",
        {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
        SideEffect.WRITE,
        True,
        (
            FailureMode("ServiceDown", Retry(2)),
            FailureMode("NotFound", Fallback("pay")),
            FailureMode("Denied", Abort()),
        ),
        "Books.",
        (Dependency("pay", Relation.PRODUCES_INPUT_FOR),),
        Annotations(read_only=False, title="Book"),
    )
    pay = scenario.tool("pay").descriptor()
    assert pay.side_effects is SideEffect.NONE and pay.requires_approval is False
    assert pay.failure_modes == () and pay.dependencies == () and pay.summary is None


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_the_descriptor_equals_the_calculus_parse_of_the_entry(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.tools
    for tool in scenario.tools:
        parsed = tool_plus_from_mapping(tool.model_dump(mode="json", exclude_none=True))
        assert tool.descriptor() == parsed
