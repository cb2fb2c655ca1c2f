"""``check``: the conformance checks of SPEC §6 on a trace, or on SGD dialogues."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from sim.cli import property_verdicts
from sim.cli.console import EXIT_BAD_INPUT, scenario_error

if TYPE_CHECKING:
    from sim.conformance.checks import Report


def register(sub: Any) -> None:
    """Add ``check`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "check",
        help="conformance checks on a trace (or on SGD dialogues)",
        description="Run the conformance checks of docs/checks/README.md over TRACE "
        "(trace.jsonl) against "
        "the ground truth of --scenario, streaming: per check the events examined, the "
        "violations and the first counterexample (its trace events with their seq). With "
        "--sgd, convert SGD dialogues to a trace and run write_approval, lts and recovery "
        "against --schema. A gzip-compressed TRACE is read. Exit 0: all hold; 1: a violation; "
        "2: bad input (a malformed line, named FILE:LINE with its field; an empty trace "
        "unless --allow-empty).",
    )
    p.add_argument(
        "trace", nargs="?", metavar="TRACE", help="trace.jsonl (docs/reference/trace.md)"
    )
    p.add_argument("--scenario", metavar="FILE", help="the scenario the trace was run from")
    p.add_argument("--sgd", metavar="DIALOGUES.json", help="SGD dialogues instead of a trace")
    p.add_argument("--schema", metavar="SCHEMA.json", help="SGD schema.json (with --sgd)")
    p.add_argument(
        "--only",
        metavar="CHECKS",
        help="comma-separated subset of the checks of docs/checks/README.md (default: all; an "
        "unknown "
        "name lists them)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="accept a trace with no events (all checks then hold vacuously); "
        "without it an empty trace is bad input (exit 2)",
    )
    property_verdicts.add_arguments(p)
    p.set_defaults(handler=run)


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run(args: argparse.Namespace) -> int:
    """Run the checks; print the verdicts; 0, 1 or 2."""
    from sim.conformance.checks import CHECK_NAMES, TraceError, check_trace
    from sim.conformance.dialogues import DialogueError, check_dialogues

    # the scenario's own rules only (not sim.admission's): a trace is checked against what
    # the scenario declares, and no router is built, so the mesh is not imported
    from sim.scenario import ScenarioError, load_scenario_with_warnings
    from sim.scenario.properties import UnknownProperty

    only = None
    monitor = None
    named: list[str] = []  # the checks --property names: reported among the properties
    if args.only:
        only = [c.strip() for c in args.only.split(",") if c.strip()]
        unknown = [c for c in only if c not in CHECK_NAMES]
        if unknown:
            return _bad(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECK_NAMES)}")
    try:
        if args.sgd is not None:
            if args.trace is not None or args.scenario is not None or args.properties:
                return _bad("--sgd takes no TRACE, no --scenario and no --properties")
            if args.schema is None:
                return _bad("--sgd needs --schema SCHEMA.json")
            report = check_dialogues(args.sgd, args.schema, only)
        else:
            if args.trace is None or args.scenario is None:
                return _bad("usage: check TRACE --scenario FILE (or --sgd D.json --schema S.json)")
            try:
                scenario, warnings = load_scenario_with_warnings(args.scenario)
                monitor, named = property_verdicts.monitor_for(args, scenario)
            except UnknownProperty as exc:
                return _bad(str(exc))
            except ScenarioError as exc:
                return scenario_error(exc)
            except OSError as exc:
                return _bad(f"{args.scenario}: {exc.strerror or exc}")
            for diag in warnings:
                print(diag, file=sys.stderr)
            if only is not None:
                only += [n for n in named if n not in only]
            report = check_trace(args.trace, scenario, only, consumers=[monitor] if monitor else ())
            if report.events == 0 and not args.allow_empty:
                return _bad(f"{args.trace}: no events (an empty trace; --allow-empty accepts it)")
    except (TraceError, DialogueError) as exc:
        return _bad(str(exc))
    verdicts = monitor.finish() if monitor is not None else []
    verdicts += [report.verdict(n) for n in named]
    if args.json:
        out = property_verdicts.with_verdicts(report.to_json(), verdicts)
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print(report)
        property_verdicts.print_verdicts(verdicts)
    return 1 if any(not v.ok for v in verdicts) else report.exit_code


def _print(report: Report) -> None:
    rate = report.events / report.seconds if report.seconds > 0 else 0.0
    print(
        f"{report.source}: {report.events:,} events, {report.instances:,} workflow instances, "
        f"checked against {report.truth} ({rate:,.0f} events/s)"
    )
    if report.note:
        print(f"note: {report.note}")
    width = max(len(v.name) for v in report.verdicts) if report.verdicts else 0
    for v in report.verdicts:
        status = "ok" if v.ok else "VIOLATED"
        note = f"  ({v.note})" if v.note else ""
        print(
            f"{v.name:<{width}}  examined {v.examined}  violations {v.violations}  {status}{note}"
        )
    for v in report.verdicts:
        if v.ok:
            continue
        print()
        print(f"first counterexample of {v.name}: {v.message}")
        for event in v.counterexample:
            print("  " + json.dumps(event, separators=(",", ":"), ensure_ascii=False))
