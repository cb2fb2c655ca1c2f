"""``check --properties FILE --property NAME``: which SPEC §9 properties a check runs, and
how their verdicts print (text and ``--json``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.properties import Monitor, Property
    from sim.scenario import Scenario
    from sim.vocabulary.verdicts import Verdict


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


def selection(args: argparse.Namespace, scenario: Scenario) -> tuple[list[Property], list[str]]:
    """The selected properties with a formula (the scenario's and ``--properties``': all
    of them, or those ``--property`` names) and the checks ``--property`` names (a check
    is its own definition: it is run, not a formula of it), as ``verify`` selects them.
    Raises :class:`~sim.scenario.ScenarioError` for a bad ``--properties`` file and
    :class:`~sim.scenario.properties.UnknownProperty` for an unknown name."""
    from sim.conformance.checks.families import CHECK_NAMES
    from sim.scenario.properties import load_properties, select_properties

    extra = load_properties(args.properties, scenario) if args.properties is not None else []
    chosen = select_properties(scenario, extra, args.property_names, CHECK_NAMES, every_check=False)
    return [p for _, p in chosen if p is not None], [n for n, p in chosen if p is None]


def monitor_for(args: argparse.Namespace, scenario: Scenario) -> tuple[Monitor | None, list[str]]:
    """The monitor of the :func:`selection`'s formulas (None when there is none) and the
    checks it names (``check`` reports each one's own verdict among the properties)."""
    from sim.properties import Monitor
    from sim.scenario.properties import tool_attributes

    props, checks = selection(args, scenario)
    return (Monitor(props, tool_attributes(scenario)) if props else None), checks


def print_verdicts(verdicts: list[Verdict]) -> None:
    """Per property: scope, scopes examined and violated (a check named by ``--property``:
    events examined, violations); then each first counterexample."""
    if not verdicts:
        return
    print()
    width = max(len(v.name) for v in verdicts)
    for v in verdicts:
        status = "ok" if v.ok else "VIOLATED"
        what = f"{v.scope} scopes" if v.scope else "the check: events"
        print(f"{v.name:<{width}}  {what} examined {v.examined}  violated {v.violations}  {status}")
    for v in verdicts:
        if v.ok:
            continue
        print()
        how = v.formula if v.scope else "the check, SPEC §6"
        print(f"first counterexample of {v.name} ({how}): {v.message}")
        if v.elided:
            print(f"  ({v.elided} events of the scope left out between the first and the last)")
        for event in v.counterexample:
            print("  " + json.dumps(event, separators=(",", ":"), ensure_ascii=False))


def with_verdicts(report: dict[str, Any], verdicts: list[Verdict]) -> dict[str, Any]:
    """The ``--json`` report with ``properties`` added (``ok`` covers them too)."""
    report["properties"] = [v.to_json() for v in verdicts]
    report["ok"] = bool(report.get("ok", True)) and all(v.ok for v in verdicts)
    return report
