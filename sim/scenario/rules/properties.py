"""The rules on ``properties:``: each formula parses against the SPEC §5 labels and the
scenario's tools (an error located at its token inside the formula), each name once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from sim.scenario.findings import Finding, KnownNames
from sim.scenario.model import Scenario
from sim.scenario.properties import tool_attributes

if TYPE_CHECKING:  # sim.properties is imported only when a scenario has properties
    from sim.properties import ToolAttributes


def _tools_known(scn: Scenario, known: KnownNames) -> dict[str, ToolAttributes] | None:
    """The tool table to check names against (None when ``tools:`` itself is broken)."""
    from sim.properties import ToolAttributes

    if "tools" not in known.sections:
        return None
    table = tool_attributes(scn)
    for name in known.tools - table.keys():  # declared, but with invalid fields
        table[name] = ToolAttributes("none", False)
    return table


def property_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """Each formula that does not parse (located inside it) and each repeated name."""
    if not scn.properties:
        return
    from sim.properties import FormulaError, parse

    tools = _tools_known(scn, known)
    first: dict[str, int] = {}
    for i, spec in enumerate(scn.properties):
        if spec.name in first:
            yield Finding(
                ("properties", i, "name"),
                f"duplicate property name '{spec.name}'",
                first=("properties", first[spec.name], "name"),
            )
        first.setdefault(spec.name, i)
        try:
            parse(spec.formula, tools=tools)
        except FormulaError as exc:
            yield Finding(("properties", i, "formula"), exc.located, inner=(spec.formula, exc.pos))
