"""``run FILE``: simulate a scenario with one router for N replications (SPEC §7);
``native status|build|clean``: the compiled engine (:mod:`sim.native`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.console import (
    EXIT_BAD_INPUT,
    EXIT_NEGATIVE,
    EXIT_OK,
    TRACE_LEVEL_NAMES,
    BadInput,
    add_guard_options,
    at_least,
    guard_of,
    output_directory,
    print_table,
    scenario_error,
)
from sim.plugins import BUILTIN_ROUTERS

if TYPE_CHECKING:
    from sim.scenario.load import Override
    from sim.scenario.model import Scenario


def register(sub: Any) -> None:
    """Add ``run`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "run",
        help="simulate a scenario with one router; write traces and metrics",
        description="Simulate FILE with one router for N replications and write "
        "results/<scenario>/<router>/rep-<k>/{trace.jsonl,metrics.json}; every replication's "
        "trace is checked (docs/checks/README.md) and the verdicts stored in its metrics.json. "
        "Then print "
        "a summary table. A bad scenario prints its located errors and exits 2; an error "
        "inside a replication is reported (scenario, replication, simulated time), its "
        "files so far stay, the other replications still run, and the exit code is 2.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    p.add_argument(
        "--router",
        metavar="NAME",
        help=f"{', '.join(BUILTIN_ROUTERS)}, an installed plug-in or one of the scenario's "
        "routers (default: its first)",
    )
    p.add_argument("--replications", type=at_least(1), metavar="N", help="default: the scenario's")
    p.add_argument(
        "--seed", type=at_least(0), metavar="S", help="root seed (default: the scenario's)"
    )
    p.add_argument(
        "--jobs",
        type=at_least(1),
        default=1,
        metavar="N",
        help="replications run at once in a process pool (results never depend on it)",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="replaces results/<scenario>")
    p.add_argument(
        "--trace",
        choices=TRACE_LEVEL_NAMES,
        metavar="LEVEL",
        help="trace level: %(choices)s (default: the scenario's)",
    )
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a field, e.g. approval.mcp_policy=hints (compare takes value lists)",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="if another protomesh process is writing into the folder, wait for it "
        "(default: exit 2 naming its pid)",
    )
    add_guard_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"scenario", "router", "seed", "replications", "results", "runs": [{'
        '"replication", "status", "dir", the table\'s figures, "violations_per_1000"} or '
        '{"replication", "status": "error", "error"}]} (the tables go to stderr)',
    )
    p.set_defaults(handler=run)
    n = sub.add_parser(
        "native",
        help="say which engine runs; build or remove the compiled engine of a checkout",
        description="status: print which engine this process runs (compiled by mypyc, or "
        "pure Python) and why. build: compile the engine's per-event modules in place, "
        "beside their sources, in a checkout (what make native runs; about a minute; exit 1 "
        "if the compiler fails, and nothing compiled is left). clean: remove that build, "
        "so that the pure-Python engine runs (the same results, slower). An installed "
        "package carries the compiled engine when its wheel was built with "
        "PROTOMESH_COMPILE=1 (make wheel).",
    )
    n.add_argument("action", choices=("build", "status", "clean"))
    n.add_argument(
        "--json",
        action="store_true",
        help='status: print {"running", "compiled"} (running: what status prints)',
    )
    n.set_defaults(handler=native)


def native(args: argparse.Namespace) -> int:
    """``native status|build|clean``."""
    import sim.native as compiled

    if args.action == "status":
        try:
            import sim.engine  # noqa: F401  (what status reads: the modules it loaded)
        except compiled.StaleBuild as exc:
            running = f"refused ({exc})"
        else:
            running = compiled.status()
        if args.json:
            print(json.dumps({"running": running, "compiled": running.startswith("compiled")}))
            return EXIT_OK
        print(f"running: {running}")
        return EXIT_OK
    if args.action == "clean":
        gone = compiled.clean()
        print(f"removed {len(gone)} files of the compiled engine from {compiled.SOURCE}")
        return EXIT_OK
    from sim.native.build import BuildError, build_in_place

    try:
        where = build_in_place()
    except BuildError as exc:
        print(f"the compiled engine was not built: {exc}", file=sys.stderr)
        print("the pure-Python engine runs (the same results, slower)", file=sys.stderr)
        return EXIT_NEGATIVE
    print(f"compiled {len(compiled.MODULES)} engine modules in place in {where}")
    return EXIT_OK


def _total(counts: dict[str, int | None]) -> int | None:
    """Violations summed over the checks that were checked (None: nothing was)."""
    checked = [n for n in counts.values() if n is not None]
    return sum(checked) if checked else None


def _mean(values: list[float | None]) -> float | None:
    """The mean of the non-null values (None when there are none)."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _overrides(settings: list[str]) -> list[Override]:
    """``--set PATH=VALUE`` options as overrides; one value each (sweeps are compare's)."""
    from sim.experiments.sweep import SweepError, parse_set
    from sim.scenario.load import Override

    out: list[Override] = []
    for text in settings:
        setting = parse_set(text)
        if len(setting.values) != 1:
            raise SweepError(
                f"--set {text}: run takes one value per field; use compare to sweep several values"
            )
        out.append(Override(setting.path, setting.values[0], f"--set {text}"))
    return out


def _say_failing(scenario: Scenario, router: str, runs: list[dict[str, Any]]) -> None:
    """One warning line when ``router`` failed every instance of ``runs`` (and why)."""
    from dataclasses import replace

    from sim.experiments.failing import failed_every_instance, sentence, why
    from sim.experiments.reasons import failure_reasons

    failed = failed_every_instance(runs)
    if failed is not None:
        failed = replace(failed, why=why(scenario, router))
        reasons = failure_reasons(m.get("tasks_failed_by_reason") for m in runs)
        print(f"warning: {sentence(router, failed, reasons)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Run the replications; print the summary (with ``--json``, the JSON on stdout and the
    tables on stderr); 0, or 2 on bad input or a failed run."""
    if not args.json:
        return _run(args, None)
    shown: dict[str, Any] = {}
    with contextlib.redirect_stdout(sys.stderr):
        code = _run(args, shown)
    if shown:
        print(json.dumps(shown, sort_keys=True))
    return code


#: the keys of ``run --json``'s figures, in the order of the table's columns after ``rep``
_RUN_KEYS = (
    "started",
    "succeeded",
    "failed",
    "cancelled",
    "latency_p50",
    "latency_p95",
    "dropped",
    "approvals",
    "writes_without_approval",
    "violations",
)


def _run(args: argparse.Namespace, shown: dict[str, Any] | None) -> int:
    """Run the replications; print the summary; 0, or 2 on bad input or a failed run."""
    from sim.admission import load_scenario_with_warnings
    from sim.cli.progress import LiveProgress
    from sim.experiments.rundir import results_base
    from sim.experiments.runner import (
        ERROR_FILE,
        METRICS_FILE,
        RunRecord,
        Task,
        fingerprint,
        is_complete,
        make_executor,
        run_dir,
        run_tasks,
        running_inline,
    )
    from sim.experiments.store import FolderBusy, FolderLock, StorageError
    from sim.experiments.sweep import SweepError
    from sim.processes import Stopped, stop_on_signals
    from sim.scenario import ScenarioError

    try:
        overrides = _overrides(args.settings)
    except SweepError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        scenario, warnings = load_scenario_with_warnings(args.file, overrides)
    except ScenarioError as exc:
        return scenario_error(exc)
    except OSError as exc:
        print(f"{args.file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for diag in warnings:
        print(diag, file=sys.stderr)
    if args.seed is not None:
        scenario = scenario.model_copy(update={"seed": args.seed})
    from sim.mesh.registry import unknown_router

    router = args.router or scenario.router_names[0]
    problem = unknown_router(router, scenario)
    if problem is not None:
        print(f"--router: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    reps = args.replications or scenario.replications
    base = args.out if args.out is not None else results_base(scenario.name, args.settings)
    try:
        output_directory(base)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    header = [
        "rep",
        "started",
        "succeeded",
        "failed",
        "cancelled",
        "p50 s",
        "p95 s",
        "dropped",
        "approvals",
        "unapproved writes",
        "violations",
    ]
    rows: list[list[Any]] = []
    per_thousand: list[dict[str, float | None]] = []
    per_property: list[dict[str, Any]] = []
    failed = 0
    print(f"{scenario.name}: router {router}, {reps} replication(s), seed {scenario.seed}")
    fp = fingerprint(scenario)
    guard = guard_of(args, args.file)
    tasks = [
        Task(
            scenario,
            router,
            rep,
            str(run_dir(base, None, router, rep)),
            None,
            args.trace,
            fp,
            guard=guard,
        )
        for rep in range(reps)
    ]
    handle = make_executor("local", min(args.jobs, reps))
    progress = LiveProgress(
        float(scenario.duration),
        not args.quiet,
        handle.kind,
        say_errors=False,
        terminal=sys.stderr.isatty(),
        workers=handle.workers,
    )
    finished: list[RunRecord] = []
    read: list[dict[str, Any]] = []  # the finished runs' metrics.json
    try:
        with (
            stop_on_signals(),
            FolderLock(base, wait=args.wait),
            running_inline(handle.kind == "inline"),
        ):
            progress.start(len(tasks), 0)
            for record in run_tasks(tasks, handle, report=progress.report):
                finished.append(record)
                progress.record(record)
    except Stopped as exc:
        progress.stop()
        handle.terminate()
        # counted on disk once no worker can write any more (as compare): a run a worker
        # renamed into place after its last record reached us is kept too
        done = sum(1 for t in tasks if is_complete(Path(t.run_dir), fp))
        done = max(done, sum(r.status == "ok" for r in finished))
        raise Stopped(
            exc.signum, f"{done} of {reps} replication(s) finished and kept in {base / router}"
        ) from None
    except (FolderBusy, StorageError) as exc:
        progress.stop()
        handle.terminate()
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, StorageError):
            kept = [r.key for r in finished if r.status == "ok"]
            print(
                f"{len(kept)} finished replication(s) kept in {base}"
                + (f": {', '.join(kept)}" if kept else ""),
                file=sys.stderr,
            )
        return EXIT_BAD_INPUT
    finally:
        progress.stop()
        handle.close()
    records = sorted(finished, key=lambda r: r.rep)
    runs: list[dict[str, Any]] = []
    if shown is not None:
        shown.update(
            scenario=scenario.name,
            router=router,
            seed=scenario.seed,
            replications=reps,
            results=str(base / router),
            runs=runs,
        )
    for record in records:
        out = run_dir(base, None, router, record.rep)
        if record.status != "ok":
            runs.append({"replication": record.rep, "status": "error", "error": record.error})
            failed += 1
            where = f" (files so far in {out})" if (out / ERROR_FILE).exists() else ""
            print(f"error: {record.error}{where}", file=sys.stderr)
            continue
        m = json.loads((out / METRICS_FILE).read_text(encoding="utf-8"))
        read.append(m)
        wf = m["workflows"]
        per_thousand.append(m.get("violations_per_1000_instances", {}))
        per_property.append(m.get("properties") or {})
        rows.append(
            [
                record.rep,
                wf["started"],
                wf["succeeded"],
                wf["failed"],
                wf["cancelled"],
                m["latency"]["p50"],
                m["latency"]["p95"],
                m["messages"]["dropped"],
                m["approvals"]["asked"],
                m["writes_without_approval"],
                _total(m.get("violations") or {}),
            ]
        )
        runs.append(
            {
                "replication": record.rep,
                "status": "ok",
                "dir": str(out),
                **dict(zip(_RUN_KEYS, rows[-1][1:], strict=True)),
                "violations_per_1000": m.get("violations_per_1000_instances", {}),
            }
        )
    if rows:
        mean: list[Any] = ["mean"]
        for col in range(1, len(header)):
            values = [r[col] for r in rows if r[col] is not None]
            mean.append(sum(values) / len(values) if values else None)
        print_table(header, [*rows, mean])
    checks = sorted({name for verdicts in per_thousand for name in verdicts})
    if checks:
        print("\nviolations per 1,000 workflow instances (mean over replications; - not checked)")
        print_table(checks, [[_mean([v.get(c) for v in per_thousand]) for c in checks]])
    names = sorted({name for verdicts in per_property for name in verdicts})
    if names:
        print("\nproperty violations per 1,000 scopes (mean over replications; - not checked)")
        rate = "violations_per_1000_scopes"
        means = [_mean([v.get(n, {}).get(rate) for v in per_property]) for n in names]
        print_table(names, [means])
    print(f"results in {base / router}")
    _say_failing(scenario, router, read)
    if failed:
        print(f"{failed} of {reps} replication(s) failed", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK
