"""``python -m sim``: parse the command line, call one function, render errors, exit.

Each command group lives in its own module with a ``register(subparsers)`` function;
a command's handler takes the parsed ``argparse.Namespace`` and returns the exit code.
Only this package prints for the user.

Exit codes (docs/reference/cli.md): 0 success, 1 a negative answer (no route, a violation, not
equivalent, lint findings), 2 bad input, and an output that cannot be written (a full
stdout or disk: :mod:`sim.cli.sink`, a result file: ``StorageError``), in one line.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from sim import __version__
from sim.cli import (
    calculus,
    calibrate,
    conformance,
    engine,
    experiments,
    interop,
    live,
    mesh,
    scenario,
    smc,
    verify,
    view,
)

_GROUPS = (
    scenario,
    mesh,
    calculus,
    engine,
    interop,
    live,
    conformance,
    calibrate,
    experiments,
    view,
    smc,
    verify,
)


def build_parser() -> argparse.ArgumentParser:
    """The full ``python -m sim`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m sim",
        description="protomesh: simulate multi-protocol AI-agent meshes.",
    )
    parser.add_argument("--version", action="version", version=f"protomesh {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in _GROUPS:
        group.register(sub)
    _mark_commands(sub)
    return parser


def _mark_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Give each (sub)command's parser as ``command_parser`` to what it parses, so that an
    unknown option is reported with that command's usage, not the top level's."""
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _mark_commands(action)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # the command's usage, not the top level's
            owner = getattr(args, "command_parser", parser)
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    handler = args.handler
    from sim.cli.sink import OutputFailed, guarded_stdout
    from sim.native import StaleBuild
    from sim.processes import Stopped, ignore_signals

    try:
        with guarded_stdout() as sink:
            code = int(handler(args))
        if sink is not None and sink.error is not None:  # refused, and caught by the command
            raise sink.error
        return code
    except OutputFailed as exc:  # a full disk or /dev/full as stdout: one line, exit 2
        with contextlib.suppress(OSError):
            print(f"error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # a handler's own argparse (its usage printed): bad usage
        return int(exc.code or 0)
    except StaleBuild as exc:  # a compiled engine older than its sources: never run it
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Stopped as exc:  # SIGINT or SIGTERM: the command cleaned up; one line
        ignore_signals()
        print(exc, file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        ignore_signals()
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # a result file that could not be written: one line, exit 2
        from sim.atomic import StorageError

        if not isinstance(exc, StorageError):
            raise
        with contextlib.suppress(OSError):
            print(f"error: {exc}", file=sys.stderr)
        return 2
