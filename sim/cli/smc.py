"""``smc FILE --property NAME``: statistical model checking of SPEC §9 properties (SPEC §10).

Estimation of p = Pr[a run satisfies the property] with the exact Clopper–Pearson
interval and sequential stopping on its half-width, or Wald's SPRT with
``--threshold``; several routers on the same seeds; table or ``--json``; exit 0 done,
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING, Any

from sim.cli.console import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    TRACE_LEVEL_NAMES,
    add_guard_options,
    guard_of,
    print_table,
    scenario_error,
)

if TYPE_CHECKING:
    from sim.experiments.smc_runner import Outcome


def register(sub: Any) -> None:
    """Add ``smc`` to ``sub`` (an argparse subparsers action)."""
    from sim.cli.experiments import EXECUTOR_NAMES

    p = sub.add_parser(
        "smc",
        help="estimate Pr[a run satisfies a property] with guaranteed confidence",
        description="Statistical model checking (docs/smc.md): replications of FILE, each "
        "monitored in process (no trace file; one of the seven checks reads a temporary "
        "one), until the exact Clopper-Pearson interval of "
        "p = Pr[a run satisfies the property] has half-width <= --width, or --max-runs; "
        "with --threshold, Wald's SPRT of p >= θ+δ against p <= θ-δ. Replication k uses "
        "the streams of `run` replication k. See docs/smc.md.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    p.add_argument(
        "--property",
        metavar="NAME",
        action="append",
        dest="property_names",
        help="the property to check, or one of the seven checks (repeat for several; "
        "default: all of the scenario's properties)",
    )
    p.add_argument(
        "--properties",
        metavar="FILE",
        help="a YAML list of {name, scope, formula} besides the scenario's own",
    )
    p.add_argument(
        "--router",
        metavar="NAME",
        action="append",
        dest="routers",
        help="router (repeat for several, on the same seeds; default: the scenario's first)",
    )
    p.add_argument("--confidence", type=float, default=0.95, metavar="C", help="default 0.95")
    p.add_argument(
        "--width", type=float, default=0.01, metavar="W", help="half-width (default 0.01)"
    )
    p.add_argument(
        "--max-runs", type=int, default=None, metavar="N", help="run budget (default 100000)"
    )
    p.add_argument("--threshold", type=float, metavar="θ", help="SPRT of p ≥ θ+δ vs p ≤ θ−δ")
    p.add_argument("--delta", type=float, default=0.01, metavar="δ", help="default 0.01")
    p.add_argument("--alpha", type=float, default=0.05, metavar="α", help="default 0.05")
    p.add_argument("--beta", type=float, default=0.05, metavar="β", help="default 0.05")
    p.add_argument("--seed", type=int, metavar="S", help="root seed (default: the scenario's)")
    p.add_argument(
        "--trace",
        choices=TRACE_LEVEL_NAMES,
        metavar="LEVEL",
        help="the events the monitor sees: %(choices)s (default: the scenario's level, "
        "raised to the one that keeps every label the properties name; off is protocol)",
    )
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="workers (default 1)")
    p.add_argument(
        "--executor",
        choices=EXECUTOR_NAMES,
        default="local",
        metavar="NAME",
        help="%(choices)s (default: local)",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--json", action="store_true", help="one JSON object per (property, router)")
    add_guard_options(p)
    p.set_defaults(handler=smc)


def _bad(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_BAD_INPUT


def smc(args: argparse.Namespace) -> int:
    """Run the estimation or test; print the table or JSON; 0, or 2 on bad input."""
    from concurrent.futures.process import BrokenProcessPool

    from sim.admission import load_scenario_with_warnings
    from sim.cli.property_verdicts import selection
    from sim.engine import ReplicationError
    from sim.experiments.runner import RESENT, make_executor
    from sim.experiments.smc_job import job_key, job_level, unseen
    from sim.experiments.smc_runner import MAX_RUNS, Rule, SmcJob, estimate
    from sim.experiments.worker import ScenarioNotHeld
    from sim.mesh.registry import unknown_router
    from sim.processes import Stopped, stop_on_signals
    from sim.scenario import ScenarioError
    from sim.scenario.properties import UnknownProperty

    try:
        scenario, warnings = load_scenario_with_warnings(args.file)
        if args.seed is not None:
            scenario = scenario.model_copy(update={"seed": args.seed})
        props, checks = selection(args, scenario)
    except ScenarioError as exc:
        return scenario_error(exc)
    except UnknownProperty as exc:
        return _bad(f"--property: {exc}")
    except OSError as exc:
        return _bad(f"{exc.filename or args.file}: {exc.strerror or exc}")
    for diag in warnings:
        print(diag, file=sys.stderr)
    if not props and not checks:
        return _bad(f"{args.file}: no property to check (give --property NAME or --properties)")
    routers = list(dict.fromkeys(args.routers or [scenario.router_names[0]]))
    for name in routers:
        problem = unknown_router(name, scenario)
        if problem is not None:
            return _bad(f"--router: {problem}")
    rule = Rule(
        args.confidence,
        args.width,
        args.max_runs if args.max_runs is not None else MAX_RUNS,
        args.threshold,
        args.delta,
        args.alpha,
        args.beta,
    )
    try:
        rule.start()
    except ValueError as exc:
        return _bad(f"error: {exc}")
    if args.jobs < 1:
        return _bad("--jobs: must be at least 1")
    level = job_level(scenario, props, checks, args.trace)
    if level == "off":
        return _bad("--trace off: the monitor would see no event (use protocol or full)")
    missing = unseen(level, checks)
    if missing:
        return _bad(f"--trace {level}: {missing}")
    key = job_key(scenario, level, props, checks)
    guard = guard_of(args, args.file)
    try:
        handle = make_executor(args.executor, args.jobs, args.scheduler)
    except (ValueError, ImportError, OSError) as exc:
        return _bad(f"error: {exc}")
    job = SmcJob(scenario, tuple(props), level, key, guard, tuple(checks))
    try:
        with stop_on_signals():
            outcomes = estimate(job, routers, rule, handle)
    except Stopped:
        handle.terminate()
        raise
    except ReplicationError as exc:
        handle.terminate()
        return _bad(f"error: {exc}")
    except ScenarioNotHeld as exc:  # handed over RESENT + 1 times, never held when run
        handle.terminate()
        return _bad(f"error: {exc} (handed it {RESENT + 1} times); no estimate")
    except BrokenProcessPool:  # os._exit in a worker cannot be caught where it runs
        handle.terminate()
        return _bad(
            "error: a worker process ended abruptly (killed, out of memory, or code such as "
            "a plug-in calling os._exit); no estimate"
        )
    finally:
        handle.close()
    order = {name: i for i, name in enumerate(args.property_names or [])}
    outcomes.sort(key=lambda o: order.get(o.prop, len(order)))  # stable: routers keep theirs
    reproduce = _reproduce(args, scenario.name, scenario.trace.value, level, outcomes)
    if args.json:
        objs = [o.to_json() for o in outcomes]
        print(json.dumps(objs[0] if len(objs) == 1 else objs, indent=2))
        for line in reproduce:
            print(line, file=sys.stderr)
        return EXIT_OK
    _print(outcomes, rule, routers)
    for line in reproduce:
        print(line)
    return EXIT_OK


def _reproduce(
    args: argparse.Namespace, name: str, scenario_level: str, level: str, outcomes: list[Outcome]
) -> list[str]:
    """Per property with a violation: the ``run`` (and ``check``) reproducing its first
    violating replication's trace."""
    from sim.conformance.checks.families import CHECK_NAMES

    lines: list[str] = []
    for o in outcomes:
        k = o.first_violation
        if k is None:
            continue
        cmd = ["python", "-m", "sim", "run", args.file, "--router", o.router]
        cmd += ["--replications", str(k + 1)]
        if args.seed is not None:
            cmd += ["--seed", str(args.seed)]
        if level != scenario_level:
            cmd += ["--trace", level]
        check = ["python", "-m", "sim", "check", f"results/{name}/{o.router}/rep-{k}/trace.jsonl"]
        check += ["--scenario", args.file]
        if o.prop in CHECK_NAMES:  # a check: check runs it itself
            check += ["--only", o.prop]
        else:
            check += ["--property", o.prop]
        if args.properties and o.prop not in CHECK_NAMES:
            check += ["--properties", args.properties]
        lines.append(
            f"first violation of {o.prop} with {o.router}: replication {k}; reproduce: "
            f"{shlex.join(cmd)}  then  {shlex.join(check)}"
        )
    return lines


def _print(outcomes: list[Outcome], rule: Any, routers: list[str]) -> None:
    from sim.experiments.smc_runner import disjoint

    pct = f"{rule.confidence:.4g}"
    header = ["property", "router", "runs", "satisfied", "estimate", f"interval ({pct})"]
    header += ["stopped", "decision", "first violation"]
    rows = []
    for o in outcomes:
        lo, hi = o.interval
        d = o.to_json()
        rows.append(
            [
                o.prop,
                o.router,
                o.runs,
                o.satisfied,
                f"{d['estimate']:.4f}",
                f"[{lo:.4f}, {hi:.4f}]",
                o.stopped,
                d["decision"] or "-",
                "-" if o.first_violation is None else o.first_violation,
            ]
        )
    print_table(header, rows, align="l")
    if rule.threshold is not None:
        lo, hi = rule.threshold - rule.delta, rule.threshold + rule.delta
        print(f"SPRT: above = accepted p ≥ {hi:g}, below = accepted p ≤ {lo:g}")
    if len(routers) > 1:
        by_property: dict[str, list[Outcome]] = {}
        for o in outcomes:
            by_property.setdefault(o.prop, []).append(o)
        for name, group in by_property.items():
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    verdict = "disjoint" if disjoint(a, b) else "overlap"
                    print(f"{name}: {a.router} vs {b.router}: intervals {verdict}")
