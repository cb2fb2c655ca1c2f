"""``compare FILE --against DIR [--json]``: the simulation beside the live mesh's runs
(:mod:`sim.experiments.against`): the options, the checks made before anything runs,
and what is printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli.console import BadInput, print_table

if TYPE_CHECKING:
    from sim.experiments.against import Live
    from sim.experiments.sweep import Setting
    from sim.scenario.model import Scenario


def add_options(p: argparse.ArgumentParser) -> None:
    """``--against DIR`` and ``--json``."""
    p.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="set the simulation beside the live runs in DIR (DIR/<router>/live-<k>/, as "
        "python -m sim live writes them): per router and metric the simulated mean and "
        "95 %% interval, the live value, the relative error; simulated for the live runs' "
        "duration",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="with --against: print the comparison as JSON (against.json) on stdout",
    )


def live_runs(args: argparse.Namespace, scenario: Scenario, settings: list[Setting]) -> Live | None:
    """The live runs of ``--against`` (None without it); :class:`BadInput` naming the file
    when they cannot be compared, or when the experiment is a sweep."""
    if args.against is None:
        if args.json:
            raise BadInput("--json needs --against DIR")
        return None
    from sim.experiments.against import LiveError, read_live

    swept = [s.text for s in settings if len(s.values) > 1]
    if scenario.sweep is not None or swept:
        why = "the file's sweep: block" if scenario.sweep is not None else f"--set {swept[0]}"
        raise BadInput(
            f"--against compares one configuration with the live runs, but {why} makes a "
            "sweep: set one value (--set PATH=V)"
        )
    try:
        live = read_live(args.against, scenario.name)
    except LiveError as exc:
        raise BadInput(str(exc)) from None
    for folder in live.unfinished:
        print(
            f"warning: {folder}: no metrics.json (an unfinished live run?): left out",
            file=sys.stderr,
        )
    for folder, why in live.interrupted:
        print(f"warning: {folder}: {why}: left out", file=sys.stderr)
    for run in live.runs:
        for died in run.died:  # kept: the figures hold the ServiceDown errors that followed
            print(
                f"warning: {run.path.parent}: {died} (its later calls failed ServiceDown)",
                file=sys.stderr,
            )
    return live


def with_live_duration(live: Live, scenario: Scenario, settings: list[Setting]) -> list[Setting]:
    """``settings`` with ``duration`` set to the live runs' when the scenario's differs
    (counts then compare); :class:`BadInput` when ``--set duration`` says otherwise."""
    from sim.experiments.sweep import Setting

    asked = [s for s in settings if s.path == ("duration",)]
    duration: Any = asked[-1].values[0] if asked else scenario.duration
    try:
        same = float(duration) == live.duration
    except (TypeError, ValueError):
        return settings  # the loader reports the bad value, located
    if same:
        return settings
    if asked:
        raise BadInput(
            f"--set {asked[-1].text}: the live runs lasted {live.duration:g} s of scenario "
            "time; compare --against simulates as long (leave duration out)"
        )
    print(
        f"note: the live runs lasted {live.duration:g} s of scenario time, the file says "
        f"{scenario.duration:g} s: simulating {live.duration:g} s "
        f"(as --set duration={live.duration:g})",
        file=sys.stderr,
    )
    value = int(live.duration) if live.duration.is_integer() else live.duration
    return [*settings, Setting(f"duration={value}", ("duration",), (value,))]


def check_routers(live: Live, routers: list[str]) -> None:
    """Say which routers are on one side only; :class:`BadInput` when none is on both."""
    common = [r for r in routers if r in live.routers]
    if not common:
        raise BadInput(
            f"{live.directory}: no router in common: live runs of {', '.join(live.routers)}; "
            f"simulated routers {', '.join(routers)} (the file's routers, or --routers)"
        )
    for router in live.routers:
        if router not in routers:
            print(
                f"warning: {live.directory / router}: live runs of router '{router}', not "
                f"among the simulated routers ({', '.join(routers)}): left out",
                file=sys.stderr,
            )
    for router in routers:
        if router not in live.routers:
            print(
                f"warning: router '{router}' has no live run under {live.directory}: "
                "simulated only",
                file=sys.stderr,
            )


def print_against(table: dict[str, Any], as_json: bool) -> None:
    """The comparison: ``against.json``'s text (``as_json``), or one table per router."""
    if as_json:
        from sim.engine.metrics import dumps

        sys.stdout.write(dumps(table))
        return
    from sim.view.against import TITLE, cells, ordered

    print(f"{TITLE} (relative error |simulated - live| / |live|):")
    for router in sorted(table["routers"]):
        print(f"  {router}:")
        rows = table["routers"][router]
        body = [[name, *cells(rows[name])] for name in ordered(table, router)]
        print_table(
            ["metric", "simulated", "live", "relative error", "flag"],
            body,
            indent="    ",
            align="l",
        )
