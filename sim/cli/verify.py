"""``verify FILE``: exhaustive verification of the untimed model (SPEC §11).

Per workflow (decided for every initiator), per property: holds / violated (shortest
counterexample printed and written as a SPEC §5 trace) / undecided (``--max-states``,
``--max-seconds`` or ``--suspect-sets`` reached) / not-decidable (a time bound, the run
scope, the transport checks, events the model leaves out). Exit 0 every decided property holds, 1 a
violation, 2 bad input, 3 undecided. See docs/verify.md.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.console import EXIT_BAD_INPUT, EXIT_NEGATIVE, EXIT_OK, print_table, scenario_error

if TYPE_CHECKING:
    from sim.verify import WorkflowVerdict

#: Exit code when a search reached ``--max-states`` (SPEC §11).
EXIT_UNDECIDED = 3
#: The default bound (sim.verify.MAX_STATES; kept here so --help imports nothing).
DEFAULT_MAX_STATES = 1_000_000
#: The default of --suspect-sets (sim.verify.knowledge.MAX_SUSPECT_SETS).
DEFAULT_SUSPECT_SETS = 256
#: The default of --max-seconds: wall-clock seconds for all the searches of one command.
DEFAULT_MAX_SECONDS = 300.0


def register(sub: Any) -> None:
    """Add ``verify`` to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "verify",
        help="explore every execution of the untimed model; prove or refute properties",
        description="Exhaustive verification (docs/verify.md): every execution of one instance "
        "of each workflow in the untimed model (task interleavings, approval answers, "
        "results and errors, recoveries, the caller's views per discovery route), "
        "searched breadth-first; per property: holds, violated (shortest counterexample, "
        "written as a protomesh trace (docs/reference/trace.md) that `check` confirms), "
        "undecided (the state, "
        "time or suspect-set bound reached) or not-decidable (time bounds, run "
        "scope, transport checks, events the model leaves out). Exit 0: "
        "every decided property holds; 1: a violation; 2: bad input; 3: undecided. See "
        "docs/verify.md.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML file")
    p.add_argument(
        "--workflow",
        metavar="W",
        action="append",
        dest="workflows",
        help="verify this workflow (repeat for several; default: all)",
    )
    p.add_argument("--router", metavar="R", help="router (default: the scenario's first)")
    p.add_argument(
        "--property",
        metavar="NAME",
        action="append",
        dest="property_names",
        help="decide this property or check (repeat; default: the scenario's and the seven checks)",
    )
    p.add_argument(
        "--properties",
        metavar="FILE",
        help="a YAML list of {name, scope, formula} besides the scenario's own",
    )
    p.add_argument(
        "--max-states",
        type=int,
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"states stored per search before it stops undecided (default {DEFAULT_MAX_STATES:,})",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=DEFAULT_MAX_SECONDS,
        metavar="S",
        help="wall-clock seconds for all the searches; when spent, every search still "
        "running or to run stops undecided (checked every 1,024 states; default "
        f"{DEFAULT_MAX_SECONDS:g})",
    )
    p.add_argument(
        "--suspect-sets",
        type=int,
        default=DEFAULT_SUSPECT_SETS,
        metavar="N",
        help="a dynamic router's suspect sets routed under per caller, smallest first; more "
        f"make a property that holds undecided (default {DEFAULT_SUSPECT_SETS})",
    )
    p.add_argument(
        "--counterexamples",
        type=Path,
        metavar="DIR",
        help="where counterexample traces go, DIR/<workflow>/<router>/<property>.jsonl "
        "(default: results/<scenario>/verify)",
    )
    p.add_argument(
        "--aut",
        type=Path,
        metavar="OUT.aut",
        help="write the model's state space in Aldebaran form (one file per workflow and "
        "distinct initiator model: OUT-<workflow>-<initiator>.aut when there are several)",
    )
    p.add_argument(
        "--engine",
        choices=("explicit", "storm"),
        help="who decides: explicit (the breadth-first search, the default) or storm (the "
        "PRISM program of the model decided by Storm: pip install 'protomesh[storm]'); a "
        "violation's shortest counterexample always comes from the explicit search",
    )
    p.add_argument(
        "--probability",
        action="store_true",
        help="print each property's exact probability of a violation (the minimum and "
        "maximum over the model's nondeterministic choices); implies --engine storm",
    )
    p.add_argument(
        "--symbolic",
        action="store_true",
        help="Storm's decision-diagram (BDD) engine instead of its sparse one; implies "
        "--engine storm",
    )
    p.add_argument(
        "--export",
        type=Path,
        metavar="FILE.prism",
        help="write each property's model as a PRISM program (FILE-<workflow>-<property>"
        "[-<initiator>].prism when there are several) for Storm or PRISM",
    )
    p.add_argument(
        "--no-reduction",
        action="store_true",
        help="plain breadth-first search, without the partial-order reduction",
    )
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a field, e.g. approval.mcp_policy=never",
    )
    p.add_argument(
        "--json", action="store_true", help="print the verdicts as JSON (docs/verify.md)"
    )
    p.set_defaults(handler=verify)


def _bad(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_BAD_INPUT


def verify(args: argparse.Namespace) -> int:
    """Decide the properties; print; write counterexamples; 0, 1, 2 or 3."""
    from sim.admission import load_scenario_with_warnings
    from sim.cli.engine import _overrides
    from sim.experiments.sweep import SweepError
    from sim.mesh.errors import RouterError
    from sim.mesh.registry import unknown_router
    from sim.scenario import ScenarioError
    from sim.scenario.properties import load_properties
    from sim.verify import UnknownProperty, selected

    if args.max_states < 1:
        return _bad("--max-states: must be at least 1")
    if args.suspect_sets < 1:
        return _bad("--suspect-sets: must be at least 1")
    if not (args.max_seconds > 0 and math.isfinite(args.max_seconds)):
        return _bad("--max-seconds: must be a positive number of seconds")
    deadline = time.monotonic() + args.max_seconds
    try:
        overrides = _overrides(args.settings)
        scenario, warnings = load_scenario_with_warnings(args.file, overrides)
        extra = load_properties(args.properties, scenario) if args.properties else []
    except SweepError as exc:
        return _bad(str(exc))
    except ScenarioError as exc:
        return scenario_error(exc)
    except OSError as exc:
        return _bad(f"{exc.filename or args.file}: {exc.strerror or exc}")
    for diag in warnings:
        print(diag, file=sys.stderr)
    router = args.router or scenario.router_names[0]
    problem = unknown_router(router, scenario)
    if problem is not None:
        return _bad(f"--router: {problem}")
    names = [w.name for w in scenario.workflows]
    wanted = list(dict.fromkeys(args.workflows or names))
    unknown = [w for w in wanted if w not in names]
    if unknown:
        return _bad(
            f"--workflow: unknown workflow {', '.join(unknown)} (known: {', '.join(names)})"
        )
    try:
        props = selected(scenario, extra, args.property_names)
    except UnknownProperty as exc:
        return _bad(f"--property: {exc}")
    engine = args.engine or ("storm" if args.probability or args.symbolic else "explicit")
    if engine == "explicit" and (args.probability or args.symbolic):
        return _bad("--probability and --symbolic are Storm's: not with --engine explicit")
    if engine == "storm":
        from sim.verify.storm import StormMissing, require

        try:
            require()
        except StormMissing as exc:
            return _bad(f"--engine storm: {exc}")

    def give_up() -> bool:
        return bool(time.monotonic() >= deadline)

    try:
        if args.export is not None:
            code = _export(args, scenario, wanted, router, props)
            if code:
                return code
        results = [_decide(args, engine, scenario, w, router, props, give_up) for w in wanted]
    except RouterError as exc:  # a plug-in router that misbehaved (sim.mesh.isolation)
        return _bad(f"{args.file}: {exc}")
    except ValueError as exc:
        return _bad(f"error: {exc}")
    from sim.view.violations import workflow_folder

    base = args.counterexamples or Path("results") / scenario.name / "verify"
    for wv in results:
        folder = base / workflow_folder(wv.workflow) / wv.router
        for pv in wv.properties:
            if pv.events is not None:
                pv.path = _write(folder / f"{pv.name}.jsonl", pv.events)
                pv.confirm = _confirm(args, pv.name, pv.path)
    if args.aut is not None:
        code = _aut(args, scenario, wanted, router)
        if code:
            return code
    if args.json:
        objs = [wv.to_json() for wv in results]
        print(json.dumps(objs[0] if len(objs) == 1 else objs, indent=2))
    else:
        for wv in results:
            _print(wv)
    verdicts = {pv.verdict for wv in results for pv in wv.properties}
    if "violated" in verdicts:
        return EXIT_NEGATIVE
    if "undecided" in verdicts:
        return EXIT_UNDECIDED
    return EXIT_OK


def _decide(
    args: argparse.Namespace,
    engine: str,
    scenario: Any,
    workflow: str,
    router: str,
    props: Any,
    give_up: Any,
) -> WorkflowVerdict:
    """One workflow's verdicts by the chosen engine."""
    if engine == "storm":
        from sim.verify.engines import decide_storm

        return decide_storm(
            scenario,
            workflow,
            router,
            props,
            args.max_states,
            args.suspect_sets,
            args.symbolic,
            args.probability,
            give_up,
        )
    from sim.verify import decide

    return decide(
        scenario,
        workflow,
        router,
        props,
        args.max_states,
        not args.no_reduction,
        args.suspect_sets,
        give_up,
    )


def _export(
    args: argparse.Namespace, scenario: Any, workflows: list[str], router: str, props: Any
) -> int:
    """``--export``: one PRISM program per workflow, decidable property and initiator
    model (the parts that tell the files apart in the name, as ``--aut``)."""
    import re

    from sim.atomic import StorageError, write_atomic
    from sim.verify.engines import programs

    out: Path = args.export
    for w in workflows:
        for name, prop in props:
            found = programs(scenario, w, router, name, prop, args.max_states, args.suspect_sets)
            if isinstance(found, str):
                print(f"{w} {name}: not exported: not decidable: {found}", file=sys.stderr)
                continue
            for model, prog in found:
                parts = [w] if len(workflows) > 1 else []
                parts += [name] if len(props) > 1 else []
                parts += [model.initiator] if len(found) > 1 else []
                tail = re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(parts))
                target = out.with_name(f"{out.stem}-{tail}{out.suffix}") if parts else out
                if not prog.complete:
                    print(
                        f"{w} {name}: not exported: the flat product has more than "
                        f"{args.max_states:,} states (--max-states)",
                        file=sys.stderr,
                    )
                    continue
                try:
                    write_atomic(target, prog.text)
                except StorageError as exc:
                    return _bad(f"--export: {exc}")
                how = prog.construction + (f" ({prog.why_flat})" if prog.why_flat else "")
                print(f"{w} {name}: PRISM program written to {target}: {how}", file=sys.stderr)
    return EXIT_OK


def _write(path: Path, events: list[dict[str, Any]]) -> Path:
    from sim.verify.counterexample import write_trace

    write_trace(events, path)
    return path


def _confirm(args: argparse.Namespace, name: str, path: Path) -> str:
    """The ``check`` command that reports the same violation."""
    from sim.conformance.checks import CHECK_NAMES

    cmd = ["python", "-m", "sim", "check", str(path), "--scenario", args.file]
    if name in CHECK_NAMES:
        cmd += ["--only", name]
    else:
        cmd += ["--property", name]
        if args.properties:
            cmd += ["--properties", args.properties]
    return shlex.join(cmd)


def _aut(args: argparse.Namespace, scenario: Any, workflows: list[str], router: str) -> int:
    """One ``.aut`` file per workflow and distinct initiator model (the groups the search
    decides with one search each): ``OUT``, or ``OUT-<workflow>-<initiator>.aut`` with
    the parts that tell the files apart (the initiator named is its group's first;
    characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``)."""
    import re

    from sim.atomic import StorageError, write_atomic
    from sim.calculus.lts import write_aut
    from sim.verify.aut import state_space
    from sim.verify.verdicts import initiator_groups

    out: Path = args.aut
    for w in workflows:
        groups = initiator_groups(scenario, w, router, suspect_sets=args.suspect_sets)
        for model, names in groups:
            parts = ([w] if len(workflows) > 1 else []) + (
                [model.initiator] if len(groups) > 1 else []
            )
            tail = re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(parts))
            target = out.with_name(f"{out.stem}-{tail}{out.suffix}") if parts else out
            lts, complete = state_space(model, args.max_states)
            try:
                write_atomic(target, write_aut(lts))  # whole or not at all
            except StorageError as exc:
                return _bad(f"--aut: {exc}")
            cut = "" if complete else f" (cut at --max-states {args.max_states:,})"
            if not model.suspicions.complete:
                sets = len(model.suspicions.sets)
                cut += f" (routes under the first {sets} suspect sets: --suspect-sets)"
            who = f"initiator {model.initiator}"
            if len(names) > 1:
                who += f" and {len(names) - 1} more of the same model"
            print(
                f"{w} ({who}): state space written to {target}: {lts.n_states:,} states, "
                f"{len(lts.transitions):,} transitions{cut}",
                file=sys.stderr,
            )
    return EXIT_OK


def _probability(pr: tuple[float, float] | None, deterministic: bool) -> str:
    """A probability (a model without nondeterminism) or [min, max], or ``-``."""
    if pr is None:
        return "-"
    return f"{pr[1]:.6g}" if deterministic else f"[{pr[0]:.6g}, {pr[1]:.6g}]"


def _print(wv: WorkflowVerdict) -> None:
    who = f"initiator {wv.initiator}"
    if len(wv.initiators) > 1:
        who = f"{len(wv.initiators)} initiators, {wv.models} distinct models"
    print(f"workflow {wv.workflow} ({who}), router {wv.router}:")
    rows = [
        [p.name, p.verdict, f"{p.states:,}", f"{p.transitions:,}", p.note or "-"]
        for p in wv.properties
    ]
    head = ["property", "verdict", "states", "transitions", "note"]
    if any(p.probability is not None for p in wv.properties):
        head.insert(2, "Pr[violation]")
        for row, p in zip(rows, wv.properties, strict=True):
            row.insert(2, _probability(p.probability, p.deterministic))
    print_table(head, rows, align="llrrrl"[: len(head) - 1] + "l")
    for p in wv.properties:
        if p.events is None:
            continue
        print()
        who = f"initiator {p.initiator}, " if len(wv.initiators) > 1 else ""
        print(
            f"shortest counterexample of {p.name} ({who}{len(p.events)} events), "
            f"written to {p.path}:"
        )
        for ev in p.events:
            print("  " + json.dumps(ev, separators=(",", ":"), ensure_ascii=False))
        print(f"confirm: {p.confirm}")
    print()
