"""``compare FILE``: every router on the same seeds; summary, plots and report (SPEC §7)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.against import (
    add_options,
    check_routers,
    live_runs,
    print_against,
    with_live_duration,
)
from sim.cli.console import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    TRACE_LEVEL_NAMES,
    BadInput,
    Choices,
    add_guard_options,
    at_least,
    guard_of,
    output_directory,
    print_table,
    scenario_error,
)
from sim.cli.progress import LiveProgress

if TYPE_CHECKING:
    from sim.experiments.runner import ExecutorHandle, Plan
    from sim.experiments.summary import Stat, Summary
    from sim.experiments.sweep import Setting

EXECUTOR_NAMES = Choices("sim.experiments.runner", "EXECUTORS")


def _num(x: float) -> str:
    """Three significant digits, whole numbers from 100 on (``1,480`` not ``1.48e+03``)."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _interval(stat: Stat | None) -> str:
    """``0.882 [0.877, 0.888]`` (mean and 95 % CI), or ``-``."""
    if stat is None or stat.mean is None:
        return "-"
    low, high = stat.ci_low, stat.ci_high
    if low is None or high is None:
        return _num(stat.mean)
    return f"{_num(stat.mean)} [{_num(low)}, {_num(high)}]"


def _print_headline(summary: Summary, routers: list[str]) -> None:
    """Per sweep point, one row per router: the figures a reader looks at first (mean
    [95 % CI]; violations summed over the checks, per 1,000 workflow instances)."""
    from sim.experiments.summary import VIOLATION_PREFIX, Stat

    header = [
        "router",
        "success rate",
        "p95 latency s",
        "dropped",
        "reroutes",
        "violations / 1,000",
    ]
    for point in summary.points:
        pid = point.id
        if pid is not None:
            print(f"point {pid}: {point.params}")
        rows = []
        for router in routers:
            total: Stat | None = None
            result = summary.result(pid, router)
            checks = [
                stat
                for m, stat in (result.metrics.items() if result is not None else ())
                if m.startswith(VIOLATION_PREFIX)
            ]
            if checks:
                mean = sum(float(c.mean or 0.0) for c in checks)
                total = Stat(len(checks), mean, None, None, None)
            rows.append(
                [
                    router,
                    _interval(summary.stat(pid, router, "success_rate")),
                    _interval(summary.stat(pid, router, "latency_p95")),
                    _interval(summary.stat(pid, router, "messages_dropped")),
                    _interval(summary.stat(pid, router, "reroutes")),
                    _interval(total),
                ]
            )
        print_table(header, rows, indent="  ", align="l")
        _print_reasons(summary, pid, routers)


def _print_reasons(summary: Summary, point: str | None, routers: list[str]) -> None:
    """One line: each router's leading reasons for failed tasks."""
    from sim.experiments.reasons import leading_text, reasons_of

    shown = [f"{r} {leading_text(reasons_of(summary, point, r))}" for r in routers]
    print(f"  why tasks failed: {'; '.join(shown)}")


def register(sub: Any) -> None:
    """Add ``compare`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "compare",
        help="run every router on the same seeds; summary with 95 %% CIs, plots, report",
        description="Run FILE with each router for N replications on the same seeds "
        "(common random numbers), at every sweep point (the file's `sweep:` block and "
        "--set lists), then write results/<scenario>/{summary.json,summary.csv,plots/,"
        "report.md}. Finished runs are reused (--force redoes them); a replication that "
        "crashes is recorded with its error and the others complete (exit 2). "
        "With --against DIR, the summary is set beside the live mesh's runs in DIR. "
        "See docs/experiments.md.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    p.add_argument("--routers", type=_routers, metavar="R1,R2", help="default: the scenario's")
    p.add_argument("--replications", type=at_least(1), metavar="N", help="default: the scenario's")
    p.add_argument(
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="workers of the local executor (default: the cores this process may use); "
        "1 runs in this process",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTOR_NAMES,
        default="local",
        metavar="NAME",
        help="%(choices)s (default: local)",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--out", type=Path, metavar="DIR", help="replaces results/<scenario>")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="PATH=V1[,V2...]",
        help="set a field (e.g. routing.loss_penalty=0.5,1,2 or failures.0.for=60,300); "
        "several values make a sweep; repeat for a cross product",
    )
    p.add_argument(
        "--trace",
        choices=TRACE_LEVEL_NAMES,
        metavar="LEVEL",
        help="trace level: %(choices)s (default: the scenario's)",
    )
    resume = p.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume",
        dest="force",
        action="store_false",
        default=False,
        help="reuse finished runs (the default)",
    )
    resume.add_argument("--force", dest="force", action="store_true", help="redo every run")
    add_guard_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument(
        "--no-plots",
        dest="plots",
        action="store_false",
        help="draw no figures (summary, report and page as usual; plots/ left as it is)",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="if another protomesh process is writing into the folder, wait for it "
        "(default: exit 2 naming its pid)",
    )
    add_options(p)
    p.set_defaults(handler=compare)


def _routers(text: str) -> list[str]:
    names = [r.strip() for r in text.split(",") if r.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one router")
    return list(dict.fromkeys(names))


def compare(args: argparse.Namespace) -> int:
    """Run the comparison; print where the report is; 0, or 2 on bad input or a crashed run.

    The figures' pool is forked first, before the engine is imported, to import
    matplotlib while this process imports the engine and loads the scenario
    (:func:`sim.experiments.figures.drawing_pool`; with Dask too: the figures are drawn
    on this machine, beside the results folder, while the cluster runs)."""
    from sim.experiments.executors import default_jobs
    from sim.experiments.figures import drawing_pool

    drawers = drawing_pool(args.jobs or default_jobs()) if args.plots else None
    code = EXIT_BAD_INPUT
    try:
        code = _compare(args, drawers)
    finally:  # idle after a success; else perhaps still importing: not waited for
        if drawers is not None:
            drawers.close() if code == EXIT_OK else drawers.terminate()
    return code


def _compare(args: argparse.Namespace, drawers: ExecutorHandle | None) -> int:
    """:func:`compare`, the figures drawn by ``drawers`` when given."""
    from sim.admission import load_scenario_with_warnings
    from sim.experiments.compare import run_compare
    from sim.experiments.rundir import results_base
    from sim.experiments.runner import default_jobs, make_executor
    from sim.experiments.store import FolderBusy, StorageError
    from sim.experiments.sweep import SweepError, expand, load_points, parse_set
    from sim.processes import Stopped, stop_on_signals
    from sim.scenario import ScenarioError

    try:
        settings: list[Setting] = [parse_set(text) for text in args.settings]
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        base_scenario, warnings = load_scenario_with_warnings(args.file)
    except ScenarioError as exc:
        return scenario_error(exc)
    try:
        live = live_runs(args, base_scenario, settings)
        if live is not None:
            settings = with_live_duration(live, base_scenario, settings)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        points = expand(base_scenario, settings)
        loaded, more = load_points(args.file, base_scenario, points)
    except ScenarioError as exc:
        return scenario_error(exc)
    except SweepError as exc:
        print(f"{args.file}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for diag in [*warnings, *(d for d in more if d not in warnings)]:
        print(diag, file=sys.stderr)
    from sim.mesh.registry import unknown_router

    routers = args.routers or base_scenario.router_names
    for name in routers:
        problem = unknown_router(name, base_scenario)
        if problem is not None:
            print(f"--routers: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if live is not None:
        try:
            check_routers(live, routers)
        except BadInput as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    reps = args.replications or base_scenario.replications
    base = args.out if args.out is not None else results_base(base_scenario.name, args.settings)
    try:
        output_directory(base)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    jobs = args.jobs or default_jobs()
    try:
        handle: ExecutorHandle = make_executor(args.executor, jobs, args.scheduler)
    except (ValueError, ImportError, OSError) as exc:
        hint = (
            " (install it with: pip install 'protomesh[dask]')"
            if isinstance(exc, ImportError)
            else ""
        )
        print(f"error: {exc}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    n_points = len(loaded)
    told = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only
    print(
        f"{base_scenario.name}: routers {', '.join(routers)}, {reps} replication(s)"
        + (f", {n_points} sweep points" if n_points > 1 else "")
        + f", seed {base_scenario.seed}, executor {handle.kind} ({handle.workers})",
        file=told,
    )
    progress = LiveProgress(
        float(max(s.duration for _, s in loaded)),
        not args.quiet,
        handle.kind,
        terminal=sys.stderr.isatty(),
        workers=handle.workers,
        after="every run done: writing the summary, "
        + ("the plots, " if args.plots else "")
        + "report.md and report.html",
    )

    try:
        with stop_on_signals():
            outcome = run_compare(
                base_scenario,
                loaded,
                routers,
                reps,
                base,
                handle,
                force=args.force,
                trace_level=args.trace,
                report=progress.report,
                on_start=progress.start,
                on_record=progress.record,
                on_plan=say_damaged,
                wait=args.wait,
                plots=args.plots,
                drawers=drawers,
                guard=guard_of(args, args.file),
                against=live,
                on_wait=lambda pid: print(
                    f"{base}: waiting for protomesh process {pid} to finish with it",
                    file=sys.stderr,
                ),
            )
    except Stopped:
        progress.stop()
        handle.terminate()
        raise
    except (FolderBusy, StorageError) as exc:
        progress.stop()
        handle.terminate()
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, StorageError):
            say_kept(exc.kept, base)
        return EXIT_BAD_INPUT
    finally:
        progress.stop()
        handle.close()
    failed = outcome.failed
    for err in failed:
        print(f"error: {err.run}: {err.message or err.error}", file=sys.stderr)
    _say_failing(outcome.summary)
    print(
        f"{len(outcome.ran)} run(s) done, {outcome.skipped} reused, {len(failed)} failed, "
        f"in {outcome.wall:.1f} s",
        file=told,
    )
    with contextlib.redirect_stdout(told):
        _print_headline(outcome.summary, routers)
        if outcome.against is not None and not args.json:
            print_against(outcome.against, as_json=False)
        print(f"summary: {base / 'summary.json'}")
        if outcome.against is not None:
            print(f"against: {base / 'against.json'}")
        print(f"report:  {outcome.report}")
    if outcome.against is not None and args.json:
        print_against(outcome.against, as_json=True)
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _say_failing(summary: Summary) -> None:
    """One warning line per (point, router) that failed every instance, with why."""
    from sim.experiments.failing import sentence

    for row in summary.results:
        if row.failed_every_instance is not None:
            point = f"{row.point}: " if row.point else ""
            text = sentence(row.router, row.failed_every_instance, row.failure_reasons)
            print(f"warning: {point}{text}", file=sys.stderr)


def say_damaged(todo: Plan) -> None:
    """One line per run found damaged, which runs again."""
    for task, why in todo.damaged:
        print(f"{task.key}: damaged ({why}); running it again", file=sys.stderr)


def say_kept(kept: tuple[str, ...], base: Path) -> None:
    """The finished runs a failed experiment leaves in ``base``, on one line."""
    if kept:
        print(f"{len(kept)} finished run(s) kept in {base}: {', '.join(kept)}", file=sys.stderr)
    else:
        print(f"no finished run in {base}", file=sys.stderr)
