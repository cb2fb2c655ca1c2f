"""Commands on scenario files: ``validate FILE...`` and ``schema``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sim.cli.console import EXIT_BAD_INPUT, EXIT_OK


def register(sub: Any) -> None:
    """Add ``validate`` and ``schema`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "validate",
        help="load and check scenario files; report every error (exit 2 on any)",
        description="Load and check each scenario FILE against SPEC §1. Every error is "
        "printed to stderr as FILE:LINE:COL: FIELD: MESSAGE, then the warnings; a good "
        "file gets a one-line summary on stdout. Exit 0 when no file has an error, 2 "
        "otherwise.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="scenario YAML files")
    p.set_defaults(handler=validate)

    p = sub.add_parser(
        "schema",
        help="print the scenario format as JSON Schema (for editors)",
        description="Print the JSON Schema (draft 2020-12) of a scenario file, built from "
        "the models the loader uses. The repository ships it as "
        "scenarios/protomesh.schema.json (`make schema` regenerates it).",
    )
    p.set_defaults(handler=schema)


def validate(args: argparse.Namespace) -> int:
    """Check every file named in ``args.files``; 2 if any has an error, else 0."""
    from sim.scenario import ScenarioError, load_scenario_with_warnings

    failed = False
    for file in args.files:
        try:
            scenario, warnings = load_scenario_with_warnings(file)
        except ScenarioError as exc:
            failed = True
            for diag in (*exc.errors, *exc.warnings):
                print(diag, file=sys.stderr)
            continue
        for diag in warnings:
            print(diag, file=sys.stderr)
        summary = (
            f"{len(scenario.agents)} agents, {len(scenario.links)} links, "
            f"{len(scenario.tools)} tools, {len(scenario.workflows)} workflows"
        )
        print(f"{file}: ok ({summary})")
    return EXIT_BAD_INPUT if failed else EXIT_OK


def schema(args: argparse.Namespace) -> int:
    """Print the scenario JSON Schema to stdout."""
    from sim.scenario.schema import scenario_json_schema_text

    del args
    sys.stdout.write(scenario_json_schema_text())
    return EXIT_OK
