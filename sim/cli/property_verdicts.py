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


def monitor_for(args: argparse.Namespace, scenario: Scenario) -> Monitor | None:
    """The monitor of the selected properties (None when there are none): the
    scenario's and ``--properties``' (all of them, or those ``--property`` names), and
    the formulas of the seven checks that have one when named (``--property
    write_approval``), as ``verify`` selects them. Raises
    :class:`~sim.scenario.ScenarioError` for a bad ``--properties`` file and
    :class:`~sim.scenario.properties_rules.UnknownProperty` for an unknown ``--property``
    or a check without a formula."""
    from sim.conformance.checks.families import CHECK_NAMES
    from sim.properties import Monitor
    from sim.scenario.properties_rules import (
        UnknownProperty,
        load_properties,
        select_properties,
        tool_attributes,
    )

    extra = load_properties(args.properties, scenario) if args.properties is not None else []
    chosen = select_properties(scenario, extra, args.property_names, CHECK_NAMES, every_check=False)
    props = []
    for name, prop in chosen:
        if prop is None:
            raise UnknownProperty(
                f"{name} is one of the seven checks and has no formula "
                f"(docs/properties.md): check runs it on a trace (--only {name}), compare "
                f"reports its violations per 1,000 instances, verify --property {name} "
                "decides it"
            )
        props.append(prop)
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
