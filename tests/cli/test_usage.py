"""What a user reads of the command line (issue 37, item 9): an unknown option is reported
with its command's usage, not the top level's; no help text nor the editor schema cites
"SPEC §" (a file that does not ship): they link the docs pages instead."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from sim.cli import build_parser, main
from sim.scenario.schema import scenario_json_schema_text

SPEC = "SPEC §"


def help_texts(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, str]]:
    """(command, text) for every description, epilog and option help of every command."""
    yield name, parser.description or ""
    yield name, parser.epilog or ""
    for action in parser._actions:
        yield name, action.help or ""
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield name, choice.help or ""
            for sub_name, sub in action.choices.items():
                yield from help_texts(sub, f"{name} {sub_name}")


def test_no_help_text_cites_the_spec() -> None:
    texts = list(help_texts(build_parser(), "python -m sim"))
    assert len(texts) > 200
    assert [(name, text) for name, text in texts if SPEC in text] == []


def test_the_schema_cites_no_spec() -> None:
    assert SPEC not in scenario_json_schema_text()


def test_the_walk_finds_a_citation() -> None:
    parser = argparse.ArgumentParser(prog="p")
    sub = parser.add_subparsers()
    sub.add_parser("x", description=f"checks of {SPEC}6")
    assert ("p x", f"checks of {SPEC}6") in list(help_texts(parser, "p"))


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["route", "f.yaml", "--from", "a", "--to", "b", "--bogus"], "usage: python -m sim route "),
        (["import", "tools", "f.json", "--bogus"], "usage: python -m sim import tools "),
        (["plan", "f.yaml", "--bogus", "1"], "usage: python -m sim plan "),
    ],
)
def test_an_unknown_option_shows_its_commands_usage(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert "error: unrecognized arguments: --bogus" in err


def test_an_unknown_command_shows_the_top_level_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bogus"]) == 2
    assert capsys.readouterr().err.startswith("usage: python -m sim [-h]")
