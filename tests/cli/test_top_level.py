"""The command line as a whole: every help text renders, exit codes at the top level."""

from __future__ import annotations

import argparse

import pytest

from sim.cli import build_parser, main


def _commands() -> list[list[str]]:
    """Every command path, e.g. ``["run"]``, ``["import", "mcp"]``."""
    paths: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    paths.append([*prefix, name])
                    walk(sub, [*prefix, name])

    walk(build_parser(), [])
    return paths


def test_the_command_list_is_complete() -> None:
    top = {path[0] for path in _commands()}
    spec = {"validate", "run", "compare", "check", "route", "phi", "unphi", "lint", "bisim"}
    spec |= {"lts", "import", "export", "serve"}
    assert spec <= top


@pytest.mark.parametrize("path", [[], *_commands()], ids=lambda p: " ".join(p) or "sim")
def test_every_help_text_renders(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    assert "usage:" in capsys.readouterr().out


def test_an_unknown_command_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("out", ["/proc/protomesh-out", "FILE"])
def test_an_unusable_output_directory_is_bad_input(
    command: str, out: str, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    target = Path(str(tmp_path)) / "a-file" if out == "FILE" else Path(out)
    if out == "FILE":
        target.write_text("not a directory")
    code = main(
        [command, "scenarios/train_booking.yaml", "--replications", "1", "--out", str(target)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert str(target) in err and "Traceback" not in err
