"""``calibrate TRACE... --scenario FILE``: the scenario's latencies, service times, error
probabilities, translation delays and approval answers fitted to traces (SPEC §13;
:mod:`sim.calibrate`, docs/calibrate.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.console import EXIT_BAD_INPUT, EXIT_OK, BadInput, output_directory, scenario_error

if TYPE_CHECKING:
    from sim.calibrate.calibration import Calibration

#: The report folder's name beside ``--out`` (or in the current folder).
REPORT = "calibration"
#: Kept quantities named one per line (the others are counted).
KEPT_SHOWN = 10


def register(sub: Any) -> None:
    """Add ``calibrate`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "calibrate",
        help="fit a scenario's latencies, service times and error rates to traces",
        description="Measure TRACE... (trace.jsonl of `run`, `serve mcp --trace` or a live "
        "mesh; gzip is read) against --scenario: hop latencies per link and protocol, "
        "service times and error probabilities per tool, translation delays per node, "
        "approval latencies and answers. Fit each duration by maximum likelihood "
        "(exponential, lognormal, gamma), choose the lowest Kolmogorov-Smirnov distance "
        "(empirical quantiles when none fits at 1 %, constant when the samples do not "
        "vary), and write the scenario with the fitted values (YAML, --out or stdout) and "
        "the fit report (--report: fit.json, fit.md, a PNG per fit). Exit 0; 2: bad input "
        "(a trace that cannot be read, named FILE:LINE; a name the scenario lacks; a bad "
        "scenario). Method: docs/calibrate.md.",
    )
    p.add_argument(
        "traces", nargs="+", metavar="TRACE", help="trace.jsonl files (docs/reference/trace.md)"
    )
    p.add_argument("--scenario", required=True, metavar="FILE", help="the scenario to calibrate")
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write the calibrated scenario here (default: stdout)",
    )
    p.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help=f"the fit report's folder (default: {REPORT}/ beside --out, else in the current "
        "folder)",
    )
    p.add_argument(
        "--min-samples",
        type=_at_least_2,
        default=None,
        metavar="N",
        help="fit a quantity from at least N samples, else keep the scenario's value (default 30)",
    )
    p.add_argument(
        "--json", action="store_true", help="print fit.json on stdout (the scenario needs --out)"
    )
    p.set_defaults(handler=run)


def _at_least_2(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError("must be at least 2")
    return value


def run(args: argparse.Namespace) -> int:
    """Measure, fit, write; 0, or 2 on bad input (one line, or the scenario's errors)."""
    from sim.calibrate.calibration import MIN_SAMPLES, calibrate, load
    from sim.calibrate.events import TraceError
    from sim.scenario import ScenarioError

    out: Path | None = args.out
    if args.json and out is None:
        return _bad("--json prints the fit report on stdout: give --out FILE for the scenario")
    try:
        source = load(args.scenario)
    except ScenarioError as exc:
        return scenario_error(exc)
    for diag in source.warnings:
        print(diag, file=sys.stderr)
    traces = [str(t) for t in args.traces]
    minimum = MIN_SAMPLES if args.min_samples is None else args.min_samples
    try:
        cal = calibrate(traces, source, minimum)
    except TraceError as exc:
        return _bad(str(exc))
    if cal.measured.events == 0:
        return _bad(f"{', '.join(traces)}: no events (an empty trace)")
    folder = args.report if args.report is not None else (out.parent if out else Path()) / REPORT
    try:
        return _write(cal, traces, out, folder, args.json)
    except BadInput as exc:
        return _bad(str(exc))


def _write(
    cal: Calibration, traces: list[str], out: Path | None, folder: Path, as_json: bool
) -> int:
    """Check the calibrated scenario, write the report and the scenario, say what was done."""
    from sim.admission import parse_scenario
    from sim.calibrate.report import write_report
    from sim.calibrate.write import calibrated_yaml
    from sim.scenario import ScenarioError

    text = calibrated_yaml(cal, traces, str(folder), out)
    name = str(out) if out is not None else "<stdout>"
    try:
        parse_scenario(text, name)
    except ScenarioError as exc:  # a bug of calibrate's, said in one line
        raise BadInput(f"the calibrated scenario does not validate: {exc.errors[0]}") from None
    output_directory(folder)
    content = write_report(cal, traces, folder)
    if out is not None:
        from sim.atomic import StorageError, write_atomic

        try:
            write_atomic(out, text, parents=False)  # whole or not at all
        except StorageError as exc:
            raise BadInput(str(exc)) from None
    talk = sys.stderr if out is None or as_json else sys.stdout
    if as_json:
        print(json.dumps(content, indent=2, ensure_ascii=False))
    elif out is None:
        sys.stdout.write(text)
    for note in content["notes"]:
        print(f"note: {note}", file=talk)
    kept = [q for q in content["quantities"] if q["status"] == "kept"]
    for q in kept[:KEPT_SHOWN]:
        print(f"kept: {q['key']} ({q.get('note', '')})", file=talk)
    if len(kept) > KEPT_SHOWN:
        print(f"kept: {len(kept) - KEPT_SHOWN} more (fit.json)", file=talk)
    fitted = len(content["quantities"]) - len(kept)
    where = f"; the scenario in {out}" if out is not None else ""
    print(
        f"calibrated {fitted} of {len(content['quantities'])} measured quantities from "
        f"{cal.measured.events:,} events; the report in {folder}{where}",
        file=talk,
    )
    return EXIT_OK


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
