"""A scenario nested thousands of levels deep (sim/scenario/compose.py): libyaml refuses
it, PyYAML's words are tried, and that retry's cost is linear in the text (PyYAML's own
scanner walked every open flow level's possible simple key before each token)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml.scanner
from hypothesis import example, given
from hypothesis import strategies as st

from sim.cli import main
from sim.scenario import load_scenario
from sim.scenario.compose import PURE_LOADER, Document, parse_yaml


class _Counted(yaml.scanner.SimpleKey):
    """A possible simple key that counts how often the scanner reads it."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        _Counted.reads += 1
        return super().__getattribute__(name)


def _reads(text: str, monkeypatch: pytest.MonkeyPatch, *loader: type[Any]) -> int:
    monkeypatch.setattr(yaml.scanner, "SimpleKey", _Counted)
    _Counted.reads = 0
    doc = Document("deep.yaml")
    assert parse_yaml(text, doc, *loader) is None
    assert len(doc.problems) == 1
    return _Counted.reads


@pytest.mark.parametrize("loader", [(), (PURE_LOADER,)], ids=["retry", "without-libyaml"])
@pytest.mark.parametrize("depth", [1000, 5000])
def test_the_retry_of_a_deep_flow_reads_each_simple_key_a_bounded_number_of_times(
    depth: int, loader: tuple[type[Any], ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "x: " + "[" * depth + "]" * depth + "\n"
    reads = _reads(text, monkeypatch, *loader)
    # linear: a bounded number of reads per character (PyYAML read 2,000 to 6,000)
    assert reads <= 20 * len(text), f"{reads:,} reads of simple keys for {len(text):,} characters"


def _tokens(text: str, loader: type[Any]) -> list[Any]:
    """The tokens ``loader`` scans (kind, value, marks), then its error if any."""
    out: list[Any] = []
    try:
        for token in yaml.scan(text, Loader=loader):
            marks = (token.start_mark.index, token.end_mark.index)
            out.append((type(token).__name__, getattr(token, "value", None), marks))
    except yaml.YAMLError as exc:
        out.append(("error", type(exc).__name__, str(exc)))
    return out


_PIECES = st.sampled_from(
    ["[", "]", "{", "}", ", ", ": ", ":", "- ", "? ", "a", "bc", "'q'", '"d"', "#c", "&x ",
     "*x", "!t ", "\n", "\n  ", "  ", "|\n  s\n", "---\n", "[" * 40, "a" * 1000,
     "a" * 1100, " " * 16]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=60).map("".join))
@example("x: 1\na\nb: 2\n")  # a required key gone stale: its line ended
@example("x: 1\n" + "a" * 1030 + ": 2\n")  # ... it ran past 1,024 characters
@example("[" * 3 + "a" * 1024 + ": b]]]\n")  # a flow key at the bound, then one past it
@example("[" * 3 + "a" * 1025 + ": b]]]\n")
def test_the_pure_loader_scans_as_pyyaml_does(text: str) -> None:
    """Tokens, marks and errors are PyYAML's own (long keys and lines make keys stale)."""
    assert _tokens(text, PURE_LOADER) == _tokens(text, yaml.SafeLoader)


SHIPPED = Path(__file__).resolve().parents[2] / "scenarios" / "train_booking.yaml"


@pytest.mark.parametrize("command", ["mcp", "a2a"])
def test_a_deep_x_value_is_read_again_without_a_recursion_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The loader never expands an ``x-`` value (the 1,000 levels libyaml takes pass);
    ``export`` reads the file again for its ``x-mcp`` / ``x-a2a`` key."""
    path = tmp_path / "deep-x.yaml"
    deep = "[" * 600 + "]" * 600
    path.write_text(SHIPPED.read_text(encoding="utf-8") + f"x-deep: {deep}\n", encoding="utf-8")
    load_scenario(path)
    argv = ["export", command, str(path), "--out", str(tmp_path / "out.json")]
    if command == "a2a":
        argv += ["--agent", "tickets"]
    assert main(argv) == 0, capsys.readouterr().err


@pytest.mark.parametrize("depth", [600, 5000])
def test_a_deep_properties_file_is_a_located_error(depth: int, tmp_path: Path) -> None:
    """``--properties FILE`` was composed by PyYAML alone: a RecursionError, exit 1."""
    from sim.scenario import ScenarioError
    from sim.scenario.properties import load_properties

    path = tmp_path / "props.yaml"
    path.write_text("- " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_properties(path, load_scenario(SHIPPED))
    (diag,) = info.value.errors
    where = (1, 3) if depth == 600 else (1, 1002)  # the item (not a mapping); libyaml stopped
    assert ((diag.line, diag.column), diag.file) == (where, str(path)), str(diag)


def test_a_control_character_in_a_properties_file_is_a_located_error(tmp_path: Path) -> None:
    """PyYAML's reader refused it before composing: a ReaderError, not a located error."""
    from sim.scenario import ScenarioError
    from sim.scenario.properties import load_properties

    path = tmp_path / "props.yaml"
    path.write_text("- name: x\x07\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_properties(path, load_scenario(SHIPPED))
    (diag,) = info.value.errors
    assert (diag.line, diag.column) == (1, 10), str(diag)
    assert diag.message.startswith("character U+0007 is not allowed in YAML text")
