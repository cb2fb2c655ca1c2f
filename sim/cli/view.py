"""``view RESULTS_DIR_OR_TRACE``: the trace explorer, one self-contained HTML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sim.cli.console import EXIT_BAD_INPUT, EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "view",
        help="write the trace explorer (one HTML file: mesh replay, sequence charts, violations)",
    )
    p.add_argument("target", type=Path, help="a results folder, a rep folder or a trace.jsonl")
    p.add_argument("--scenario", type=Path, default=None, help="the scenario YAML (agent types)")
    p.add_argument(
        "--out", type=Path, default=None, help="output file (default: TARGET/report.html)"
    )
    p.add_argument("--max-events", type=int, default=None, help="event budget of the page")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"page", "sampling": {"instances", "kept", "events_total", "events_kept", '
        '"max_events", "seed"}}',
    )
    p.set_defaults(handler=run_view)


def run_view(args: argparse.Namespace) -> int:
    from sim.scenario import ScenarioError
    from sim.view import Budget, ViewError, write_page

    target: Path = args.target
    out: Path = args.out or (target if target.is_dir() else target.parent) / "report.html"
    budget = Budget() if args.max_events is None else Budget(max_events=args.max_events)
    try:
        sampling = write_page(target, out, args.scenario, budget)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    except (ViewError, ValueError, KeyError, OSError) as exc:
        print(f"view: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        import json

        print(json.dumps({"page": str(out), "sampling": sampling}, sort_keys=True))
    else:
        print(
            f"explorer: {out} ({sampling['kept']} of {sampling['instances']} instances, "
            f"{sampling['events_kept']} of {sampling['events_total']} events)"
        )
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return EXIT_OK
