"""What the interop commands share (``import``, ``export``, ``serve``; MCP, A2A, OTel):
their output written whole, an import's report, a scenario loaded with its MCP
extension, and the simulation options of a served scenario."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sim.cli.console import BadInput


def add_simulation_options(k: argparse.ArgumentParser) -> None:
    """``--speed`` and ``--seed`` of a command serving a scenario's simulated tools."""
    k.add_argument(
        "--speed",
        default="instant",
        metavar="instant|realtime|X",
        help="wall-clock sleep = service time / X (realtime = 1; default instant: no sleep)",
    )
    k.add_argument("--seed", type=int, default=None, metavar="S", help="default: the scenario's")


def write_output(text: str, out: str | None) -> None:
    """``text`` to stdout, or to the file ``out`` whole or not at all (renamed into
    place; a failed write is one line: the path and the reason)."""
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()  # a full stdout fails here, before what is said after it
        return
    from sim.atomic import StorageError, write_atomic

    try:
        write_atomic(Path(out), text, parents=False)
    except StorageError as exc:
        raise BadInput(str(exc)) from None


def report_fragment(fragment: Any, out: str | None) -> None:
    """The import's summary, notes and lint line, on stderr."""
    where = out if out is not None else "stdout"
    guessed = ", ".join(f"{k} for {v}" for k, v in fragment.guessed.items() if v)
    print(
        f"import: scenario {fragment.name!r}, {fragment.tools} tools → {where}"
        + (f"; unknown (labelled guesses): {guessed}" if guessed else "; every field known"),
        file=sys.stderr,
    )
    for note in fragment.notes:
        print(f"note: {note}", file=sys.stderr)
    print(fragment.lint.line(), file=sys.stderr)


def load_with_extension(path: str) -> tuple[Any, Any]:
    """The scenario at ``path`` (through :mod:`sim.admission`) and its MCP extension;
    :class:`BadInput` for a missing file or a bad scenario (one line)."""
    from sim.admission import load_scenario
    from sim.interop.tools_list import read_extension
    from sim.scenario import ScenarioError

    if not Path(path).is_file():
        raise BadInput(f"{path}: no such file")
    try:
        scenario = load_scenario(path)
    except ScenarioError as exc:
        raise BadInput(str(exc).strip().replace("\n", "; ")) from None
    return scenario, read_extension(path)


def speed_of(text: str) -> float | None:
    """``--speed``: None for instant, 1 for realtime, else the positive number."""
    if text == "instant":
        return None
    if text == "realtime":
        return 1.0
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"--speed must be instant, realtime or a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise BadInput(f"--speed must be a positive number, got {text!r}")
    return value
