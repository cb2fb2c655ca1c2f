"""``live FILE``: the scenario as a real mesh on this machine (SPEC §13, docs/live.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sim.cli.console import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    TRACE_LEVEL_NAMES,
    BadInput,
    at_least,
    output_directory,
    positive_number,
    print_table,
    scenario_error,
)


def register(sub: Any) -> None:
    """Add ``live`` to ``sub`` (an argparse subparsers action)."""
    from sim.live import DEFAULT_DRAIN, DEFAULT_MAX_PROCESSES

    p = sub.add_parser(
        "live",
        help="deploy the scenario as a real mesh on 127.0.0.1 and run its workload",
        description="Deploy FILE as real processes on this machine, one per agent (one "
        "process group; none outlives the command): tool servers are real MCP servers "
        "(the mcp SDK, Streamable HTTP), gateways and coordinators relay along the route "
        "each call carries and translate the real message, A2A links speak A2A (the "
        "a2a-sdk); ANP, SGD and user-defined protocols have no real implementation here "
        "and travel as JSON-RPC 2.0 over HTTP with the protocol's name. Each hop waits its "
        "link latency; outages stop (SIGSTOP) or kill the agent's process. Writes "
        "DIR/<router>/live-<k>/{trace.jsonl,metrics.json} (k: the next free number) and "
        "checks the trace like run. See docs/live.md.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    p.add_argument("--router", metavar="NAME", help="one router (default: each of the scenario's)")
    p.add_argument(
        "--duration",
        type=positive_number,
        metavar="S",
        help="scenario seconds (default: the scenario's)",
    )
    p.add_argument(
        "--speed",
        type=positive_number,
        default=1.0,
        metavar="X",
        help="scenario seconds per wall second (default 1)",
    )
    p.add_argument(
        "--seed", type=at_least(0), metavar="S", help="root seed (default: the scenario's)"
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="default: results/<scenario>-live")
    p.add_argument(
        "--trace", choices=TRACE_LEVEL_NAMES, metavar="LEVEL", help="full (default), protocol, off"
    )
    p.add_argument("--quiet", action="store_true", help="print only where the results are")
    p.add_argument(
        "--json",
        action="store_true",
        help='print [{"router", "dir", "started", "success_rate", "latency_p50", "latency_p95", '
        '"dropped", "reroutes", "violations"}] per live run (the progress on stderr)',
    )
    p.add_argument(
        "--max-processes",
        type=at_least(1),
        default=DEFAULT_MAX_PROCESSES,
        metavar="N",
        help=f"processes this machine may host (default {DEFAULT_MAX_PROCESSES}: 8 per core)",
    )
    p.add_argument(
        "--processes",
        type=at_least(1),
        metavar="N",
        help="pack the agents into N processes (hops between them stay real messages)",
    )
    p.add_argument(
        "--drain",
        type=positive_number,
        default=DEFAULT_DRAIN,
        metavar="S",
        help=f"scenario seconds after the duration for instances to end ({DEFAULT_DRAIN:g})",
    )
    p.add_argument(
        "--capture",
        action="store_true",
        help="record every HTTP request each agent receives in live-<k>/wire/<agent>.jsonl",
    )
    p.set_defaults(handler=_live)


def _live(args: argparse.Namespace) -> int:
    from sim.live.forked import cool

    try:
        code = _started(args)
    except BaseException:  # a stop (SIGINT, SIGTERM) included
        cool()
        raise
    if code != EXIT_OK:
        cool()  # refused or failed: not a wait for the template's imports on the way out
    return code


def _started(args: argparse.Namespace) -> int:
    from sim.admission import load_scenario
    from sim.atomic import StorageError
    from sim.live.forked import warm
    from sim.live.layout import LiveError
    from sim.live.run import live_run
    from sim.processes import stop_on_signals
    from sim.scenario import ScenarioError

    warm()  # the hosts' template imports on the other core while the scenario loads
    source = Path(args.file)
    try:
        scenario = load_scenario(source)
    except ScenarioError as exc:
        return scenario_error(exc)
    updates: dict[str, Any] = {}
    if args.duration is not None:
        updates["duration"] = float(args.duration)
    if args.seed is not None:
        updates["seed"] = int(args.seed)
    if updates:
        scenario = scenario.model_copy(update=updates)
    names = [r.name for r in scenario.routers]
    if args.router is not None:
        from sim.mesh.registry import unknown_router

        problem = unknown_router(args.router, scenario)
        if problem is not None:
            print(f"error: --router: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
        names = [args.router]
    try:
        base = output_directory(args.out or Path("results") / f"{scenario.name}-live")
    except BadInput as exc:  # a file in the way, a folder that cannot be made: one line
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    level = args.trace or "full"
    say = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr))
    runs = []
    try:
        with stop_on_signals():
            for name in names:
                runs.append(
                    live_run(
                        source,
                        scenario,
                        name,
                        base,
                        speed=args.speed,
                        trace_level=level,
                        max_processes=args.max_processes,
                        processes=args.processes,
                        drain=args.drain,
                        capture=args.capture,
                        say=say,
                        warn=lambda line: print(f"warning: {line}", file=sys.stderr),
                    )
                )
    except LiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (StorageError, OSError) as exc:  # the results folder on a full disk: one line
        error = exc if isinstance(exc, StorageError) else StorageError.of(exc, base)
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps([_shown(r.router, r.directory, r.metrics) for r in runs]))
        return EXIT_OK
    if not args.quiet:
        keys = ("router", "started", "success_rate", "latency_p50", "latency_p95", "dropped")
        shown = [_shown(r.router, r.directory, r.metrics) for r in runs]
        rows = [[d[k] for k in (*keys, "reroutes", "violations")] for d in shown]
        print_table(
            ["router", "started", "success", "p50 s", "p95 s", "drops", "reroutes", "violations"],
            rows,
        )
    for r in runs:
        print(f"results in {r.directory}")
    return EXIT_OK


def _shown(router: str, directory: Path, m: dict[str, Any]) -> dict[str, Any]:
    """``live --json``'s object for one run (``metrics.json``'s figures the table shows)."""
    wf = m["workflows"]
    return {
        "router": router,
        "dir": str(directory),
        "started": wf["started"],
        "success_rate": wf["succeeded"] / wf["started"] if wf["started"] else None,
        "latency_p50": m["latency"]["p50"],
        "latency_p95": m["latency"]["p95"],
        "dropped": m["messages"]["dropped"],
        "reroutes": m["reroutes"],
        "violations": sum(v or 0 for v in (m.get("violations") or {}).values()),
    }
