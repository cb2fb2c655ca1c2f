"""What every command shares: exit codes, one-line input errors, reading JSON files,
plain-text tables, and argument choices read only when a command needs them.

Exit codes (SPEC §7): 0 success, 1 a negative answer (no route, a violation, not
equivalent, lint findings), 2 bad input.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.engine.guard import Guard
    from sim.scenario import ScenarioError

EXIT_OK = 0
EXIT_NEGATIVE = 1
EXIT_BAD_INPUT = 2

Handler = Callable[[argparse.Namespace], int]


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number ≥ ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return value

    return parse


def positive_number(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


class Choices(Sequence[str]):
    """An argparse ``choices`` list read from ``module.attribute`` on first use.

    Building the parser then imports nothing heavy: the names are read only when an
    option that has them is given or its command's help is printed. Give the argument
    a ``metavar`` (argparse would otherwise list the choices at once) and put
    ``%(choices)s`` in its help.
    """

    def __init__(self, module: str, attribute: str) -> None:
        self._source = (module, attribute)
        self._names: tuple[str, ...] | None = None

    def _resolved(self) -> tuple[str, ...]:
        if self._names is None:
            module, attribute = self._source
            self._names = tuple(getattr(importlib.import_module(module), attribute))
        return self._names

    def __getitem__(self, index: Any) -> Any:
        return self._resolved()[index]

    def __len__(self) -> int:
        return len(self._resolved())

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __contains__(self, name: object) -> bool:
        return name in self._resolved()


#: The trace levels (SPEC §5). Router names are checked once the scenario is loaded
#: (the registry's names and the scenario's plug-ins: :func:`sim.mesh.registry.unknown_router`).
TRACE_LEVEL_NAMES = Choices("sim.engine.trace", "TRACE_LEVELS")


def add_guard_options(p: argparse.ArgumentParser) -> None:
    """``--max-events``, ``--max-wall`` and ``--max-memory``: the progress guard of each
    replication (:mod:`sim.engine.guard`; its defaults are ``DEFAULT_MAX_EVENTS`` and
    ``DEFAULT_MAX_MEMORY``)."""
    p.add_argument(
        "--max-events",
        type=_budget(int),
        metavar="N",
        help="stop a replication after N simulation events (at the first multiple of 4,096 "
        "at or past N) with the scenario element that drives them, located (default "
        "20,000,000; 0: no limit)",
    )
    p.add_argument(
        "--max-wall",
        type=_budget(float),
        metavar="SECONDS",
        help="stop a replication after SECONDS of wall-clock time, the same way "
        "(default: no limit)",
    )
    p.add_argument(
        "--max-memory",
        type=memory_size,
        metavar="SIZE",
        help="stop a replication before the process's resident memory passes SIZE "
        "(bytes, or with KB, MB, GB), the same way (default 1.5GB; 0: no limit)",
    )


def memory_size(text: str) -> int:
    """``--max-memory``'s value in bytes: a whole number of bytes, or a number with
    ``KB``, ``MB`` or ``GB`` (powers of 1000); 0 is no limit."""
    number = text.strip().upper()
    factor = 1
    for unit, size in (("KB", 10**3), ("MB", 10**6), ("GB", 10**9), ("B", 1)):
        if number.endswith(unit):
            number, factor = number[: -len(unit)].strip(), size
            break
    try:
        value = float(number) if len(number) <= 30 else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value * factor < 10**15:
        raise argparse.ArgumentTypeError(
            f"not a memory size: {text[:40]!r} (give bytes, or e.g. 800MB, 1.5GB; 0: no limit)"
        )
    return round(value * factor)


def _budget(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value >= 0 or value == float("inf"):
            raise argparse.ArgumentTypeError("must be a finite number, at least 0")
        return value

    return parse


def guard_of(args: argparse.Namespace, source: str) -> Guard:
    """The :class:`sim.engine.guard.Guard` of ``--max-events``/``--max-wall``/
    ``--max-memory`` (0: none), locating its reasons in the scenario file ``source``."""
    from sim.engine.guard import DEFAULT_MAX_EVENTS, DEFAULT_MAX_MEMORY, Guard

    events = DEFAULT_MAX_EVENTS if args.max_events is None else args.max_events or None
    memory = DEFAULT_MAX_MEMORY if args.max_memory is None else args.max_memory or None
    return Guard(events, args.max_wall or None, source, memory)


class BadInput(Exception):
    """A user-facing one-line error: printed as ``error: ...``, exit 2."""


def guarded(*errors: type[Exception]) -> Callable[[Handler], Handler]:
    """Turn :class:`BadInput` (and ``errors``) raised by a handler into exit 2."""
    caught: tuple[type[Exception], ...] = (BadInput, *errors)

    def wrap(fn: Handler) -> Handler:
        @functools.wraps(fn)
        def run(args: argparse.Namespace) -> int:
            try:
                return int(fn(args))
            except caught as exc:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_BAD_INPUT

        return run

    return wrap


def read_json(path: str | Path) -> Any:
    """The JSON document at ``path``, read within the bounds of :mod:`sim.json_input`;
    :class:`BadInput` naming the file (and the line and column of a syntax error or of
    what passes a bound) when it cannot be read."""
    from sim.json_input import JsonInputError
    from sim.json_input import read_json as read_bounded

    try:
        return read_bounded(path)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    except JsonInputError as exc:
        raise BadInput(exc.reported) from None


def output_directory(path: Path) -> Path:
    """Create ``path`` (with its parents) and check that results can be written there;
    :class:`BadInput` naming the directory when they cannot."""
    if path.exists() and not path.is_dir():
        raise BadInput(f"{path}: is a file; the output must be a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise BadInput(f"{path}: cannot create the output directory: {reason}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BadInput(f"{path}: the output directory is not writable")
    return path


def cell(value: Any) -> str:
    """A table cell: ``-`` for None, three decimals for a float, else ``str``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = "", align: str = ""
) -> None:
    """Print ``rows`` under ``header`` in columns, a rule below the header. ``align`` has
    one letter per column, ``l`` or ``r`` (default: all right-aligned)."""
    cells = [list(header)] + [[cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    sides = align.ljust(len(header), "r")
    for k, row in enumerate(cells):
        line = "  ".join(
            c.ljust(w) if side == "l" else c.rjust(w)
            for c, w, side in zip(row, widths, sides, strict=True)
        )
        print(indent + line.rstrip())
        if k == 0:
            print(indent + "  ".join("-" * w for w in widths))


def scenario_error(exc: ScenarioError) -> int:
    """Print every located error and warning of a scenario that did not load; exit 2."""
    for diag in (*exc.errors, *exc.warnings):
        print(diag, file=sys.stderr)
    return EXIT_BAD_INPUT
