"""Commands on scenario files: ``validate FILE...`` and ``schema``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.console import EXIT_BAD_INPUT, EXIT_OK

if TYPE_CHECKING:
    from sim.scenario import Scenario
    from sim.scenario.diagnostics import Diagnostic


def register(sub: Any) -> None:
    """Add ``validate`` and ``schema`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "validate",
        help="load and check scenario files; report every error (exit 2 on any)",
        description="Load and check each scenario FILE (docs/scenario.md). Every error is "
        "printed to stderr as FILE:LINE:COL: FIELD: MESSAGE, then the warnings (a task that "
        "one of the scenario's routers cannot route is one); a good file gets a one-line "
        "summary on stdout. Exit 0 when no file has an error, 2 otherwise.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="scenario YAML files")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per file: {file, ok, errors, warnings, counts}",
    )
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
    from sim.admission import load_scenario_with_warnings
    from sim.scenario import ScenarioError

    failed = False
    reports: list[dict[str, Any]] = []
    for file in args.files:
        try:
            scenario, warnings = load_scenario_with_warnings(file)
        except ScenarioError as exc:
            failed = True
            reports.append(_report(file, None, exc.errors, exc.warnings))
            if not args.json:
                for diag in (*exc.errors, *exc.warnings):
                    print(diag, file=sys.stderr)
            continue
        routing = unroutable_warnings(file, scenario)
        errors = [d for d in routing if d.severity == "error"]
        failed = failed or bool(errors)
        every = [*warnings, *(d for d in routing if d.severity != "error")]
        reports.append(_report(file, None if errors else scenario, errors, every))
        if args.json:
            continue
        for diag in (*errors, *every):
            print(diag, file=sys.stderr)
        if not errors:
            print(f"{file}: ok ({_counts_text(scenario)})")
    if args.json:
        for report in reports:
            print(json.dumps(report, sort_keys=True))
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _counts_text(scenario: Scenario) -> str:
    return (
        f"{len(scenario.agents)} agents, {len(scenario.links)} links, "
        f"{len(scenario.tools)} tools, {len(scenario.workflows)} workflows"
    )


def _report(
    file: str,
    scenario: Scenario | None,
    errors: tuple[Diagnostic, ...] | list[Diagnostic],
    warnings: tuple[Diagnostic, ...] | list[Diagnostic],
) -> dict[str, Any]:
    """``validate --json``'s object for one file (``counts`` null when it has errors)."""

    def shown(d: Diagnostic) -> dict[str, Any]:
        return {"line": d.line, "column": d.column, "field": d.field, "message": d.message}

    counts = None
    if scenario is not None:
        counts = {
            "agents": len(scenario.agents),
            "links": len(scenario.links),
            "tools": len(scenario.tools),
            "workflows": len(scenario.workflows),
        }
    return {
        "file": file,
        "ok": not errors,
        "errors": [shown(d) for d in errors],
        "warnings": [shown(d) for d in warnings],
        "counts": counts,
    }


def unroutable_warnings(file: str, scenario: Scenario) -> list[Diagnostic]:
    """A warning at each task that one of the scenario's routers cannot route (the task,
    the router and why), as ``plan`` finds it; an error for a router that cannot be made
    or that fails otherwise (a plug-in's)."""
    from sim.mesh import MeshError, ProtocolGraph, make_router
    from sim.mesh.plan import task_routes
    from sim.scenario.diagnostics import Diagnostic

    if not scenario.workflows:
        return []
    graph = ProtocolGraph.from_scenario(scenario)
    out: list[tuple[tuple[Any, ...], str, bool]] = []
    for name in scenario.router_names:
        try:
            router = make_router(name, graph, scenario)
            for planned in task_routes(router, scenario):
                if planned.route is None:
                    out.append(
                        (
                            ("workflows", planned.workflow_index, "tasks", planned.task_index),
                            f"router {name} cannot route task {planned.task!r} ({planned.need}) "
                            f"from {planned.initiator} in {planned.protocol}: {planned.reason} "
                            "(its runs fail the task as no_route)",
                            False,
                        )
                    )
        except MeshError as exc:
            out.append((("routers",), f"router {name}: {exc}", True))
    if not out:
        return []
    from sim.scenario.compose import Document, parse_yaml

    doc = Document(file)
    parse_yaml(Path(file).read_text(encoding="utf-8"), doc)  # the marks, read once more
    diags: list[Diagnostic] = []
    for path, message, error in out:
        d = doc.diagnostic(path, message, warning=not error)
        diags.append(Diagnostic(d.file, d.line, d.column, d.field, d.message, d.severity))
    return diags


def schema(args: argparse.Namespace) -> int:
    """Print the scenario JSON Schema to stdout."""
    from sim.scenario.schema import scenario_json_schema_text

    del args
    sys.stdout.write(scenario_json_schema_text())
    return EXIT_OK
