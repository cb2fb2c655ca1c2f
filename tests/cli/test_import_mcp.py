"""``import mcp URL`` reads the options that follow the URL (issue 37, item 6)."""

from __future__ import annotations

import pytest

from sim.cli import build_parser
from sim.cli.console import BadInput
from sim.cli.import_mcp import _options_after_url

URL = "http://127.0.0.1:8000/mcp"


def test_options_after_the_url_are_read_as_options() -> None:
    args = build_parser().parse_args(["import", "mcp", "--timeout", "5", URL, "--out", "x.yaml"])
    assert _options_after_url(args) == [URL]
    assert (args.out, args.timeout) == ("x.yaml", 5.0)


def test_a_stdio_commands_arguments_stay_its_own() -> None:
    args = build_parser().parse_args(["import", "mcp", "--", "uvx", "srv", "--out", "y"])
    assert _options_after_url(args) == ["--", "uvx", "srv", "--out", "y"]
    assert args.out is None


def test_a_word_after_the_url_is_named() -> None:
    args = build_parser().parse_args(["import", "mcp", URL, "--out", "x.yaml", "more"])
    with pytest.raises(BadInput, match=r"unexpected 'more' after the URL"):
        _options_after_url(args)


def test_a_bad_option_after_the_url_is_the_subcommands_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sim.cli import main

    assert main(["import", "mcp", URL, "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m sim import mcp ")
    assert "unrecognized arguments: --bogus" in err
