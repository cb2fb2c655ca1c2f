"""``check --properties FILE --property NAME``: which SPEC §9 properties a check runs, and
how their verdicts print (text and ``--json``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.properties import Monitor, PropertyVerdict
    from sim.scenario import Scenario


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--properties FILE`` and ``--property NAME`` (repeatable)."""
    p.add_argument(
        "--properties",
        metavar="FILE",
        help="a YAML list of {name, scope, formula} checked besides the scenario's own",
    )
    p.add_argument(
        "--property",
        metavar="NAME",
        action="append",
        dest="property_names",
        help="check only this property (repeat for several; default: all of them)",
    )


class UnknownProperty(ValueError):
    """``--property`` names a property neither the scenario nor ``--properties`` has."""


def monitor_for(args: argparse.Namespace, scenario: Scenario) -> Monitor | None:
    """The monitor of the selected properties (None when there are none). Raises
    :class:`~sim.scenario.ScenarioError` for a bad ``--properties`` file and
    :class:`UnknownProperty` for an unknown ``--property``."""
    from sim.properties import Monitor
    from sim.scenario.properties_rules import (
        compile_properties,
        load_properties,
        tool_attributes,
    )

    props = compile_properties(scenario.properties, scenario)
    if args.properties is not None:
        props += load_properties(args.properties, scenario)
    wanted = args.property_names
    if wanted:
        names = [p.name for p in props]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            known = ", ".join(names) or "none"
            raise UnknownProperty(f"unknown property {', '.join(unknown)} (known: {known})")
        props = [p for p in props if p.name in wanted]
    if not props:
        return None
    return Monitor(props, tool_attributes(scenario))


def print_verdicts(verdicts: list[PropertyVerdict]) -> None:
    """Per property: scope, scopes examined and violated; then each first counterexample."""
    if not verdicts:
        return
    print()
    width = max(len(v.name) for v in verdicts)
    for v in verdicts:
        status = "ok" if v.ok else "VIOLATED"
        print(
            f"{v.name:<{width}}  {v.scope} scopes examined {v.examined}  "
            f"violated {v.violations}  {status}"
        )
    for v in verdicts:
        if v.ok:
            continue
        print()
        print(f"first counterexample of {v.name} ({v.formula}): {v.message}")
        if v.elided:
            print(f"  ({v.elided} events of the scope left out between the first and the last)")
        for event in v.counterexample:
            print("  " + json.dumps(event, separators=(",", ":"), ensure_ascii=False))


def with_verdicts(report: dict[str, Any], verdicts: list[PropertyVerdict]) -> dict[str, Any]:
    """The ``--json`` report with ``properties`` added (``ok`` covers them too)."""
    report["properties"] = [v.to_json() for v in verdicts]
    report["ok"] = bool(report.get("ok", True)) and all(v.ok for v in verdicts)
    return report
