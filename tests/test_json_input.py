"""Issue 38 item 12: the one bounded JSON reader (sim/json_input.py). Within the bounds it
reads what ``json`` reads; past them (nesting, integer digits, the float range, NaN) it
raises a located JsonInputError; the repro files of tests/fixtures/attack/json go through
every command that reads a JSON file, each exiting 2 with the located line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.json_input import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    JsonInputError,
    parse_json,
    read_json,
    too_deep_at,
)

ROOT = Path(__file__).resolve().parents[1]
ATTACK = ROOT / "tests" / "fixtures" / "attack" / "json"
EXPECTED: dict[str, dict[str, str]] = yaml.safe_load(
    (ATTACK / "expected.yaml").read_text(encoding="utf-8")
)
SGD = ROOT / "data" / "sgd" / "train"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_up_to_the_bound_is_read_and_one_more_is_refused_at_its_bracket() -> None:
    assert parse_json(_nested(MAX_JSON_DEPTH), "f") is not None
    with pytest.raises(JsonInputError) as info:
        parse_json('{"a":\n ' + _nested(MAX_JSON_DEPTH) + "}", "f")
    assert (info.value.line, info.value.column) == (2, MAX_JSON_DEPTH + 1)
    assert str(info.value) == f"f:2:{MAX_JSON_DEPTH + 1}: JSON nested deeper than 64 levels"


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[" * 500, "b": '\\"{{{{' * 100})
    assert parse_json(text, "f") == json.loads(text)


def test_integers_up_to_the_bound_are_read_and_one_digit_more_is_refused() -> None:
    ok = "-" + "9" * MAX_INT_DIGITS
    assert parse_json(f"[{ok}]", "f") == [int(ok)]
    with pytest.raises(JsonInputError) as info:
        parse_json(f'["{"9" * 400}", 1, -{"9" * (MAX_INT_DIGITS + 1)}]', "f")
    assert info.value.column == 409  # the integer (its sign), not the digits in the string
    assert info.value.message == f"an integer of {MAX_INT_DIGITS + 1} digits (at most 300)"


def test_syntax_errors_are_located_and_marked_as_syntax() -> None:
    with pytest.raises(JsonInputError) as info:
        parse_json('{"a": 1,\n  "b": }', "f")
    assert (info.value.line, info.value.column, info.value.syntax) == (2, 8, True)
    assert info.value.reported == "f: invalid JSON at line 2 column 8: Expecting value"


def test_a_file_that_is_not_utf8_is_located_at_its_byte(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"a":\n "x\xff"}')
    with pytest.raises(JsonInputError, match=r"t.json:2:4: not UTF-8 text: byte 0xff"):
        read_json(path)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**MAX_INT_DIGITS) + 1, 10**MAX_INT_DIGITS - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=50, deadline=None)
@given(JSON_VALUES)
def test_within_the_bounds_the_reader_reads_what_json_reads(value: Any) -> None:
    text = json.dumps(value)
    assert parse_json(text, "f") == json.loads(text)


def _view_folder(attack: Path, tmp_path: Path) -> Path:
    """A run folder whose trace is fine and whose metrics.json is the attack file."""
    folder = tmp_path / "run"
    folder.mkdir()
    trace = ROOT / "tests" / "fixtures" / "attack" / "traces" / "send_missing_link.jsonl"
    shutil.copy(trace, folder / "trace.jsonl")
    shutil.copy(attack, folder / "metrics.json")
    return folder


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_json_exits_2_located_in_every_command(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = EXPECTED[name]
    path = ATTACK / f"{name}.json"
    line = f"{path}:{want['at']}: {want['message']}"
    commands = [
        ["import", "tools", str(path)],
        ["unphi", str(path)],
        ["lint", str(path)],
        ["phi", str(path)],
        ["import", "sgd", str(path)],
        ["import", "a2a", str(path)],
        ["check", "--sgd", str(path), "--schema", str(SGD / "schema.json")],
        ["check", "--sgd", str(SGD / "dialogues_001_first10.json"), "--schema", str(path)],
    ]
    for argv in commands:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err == f"error: {line}\n", (argv, err)
    folder = _view_folder(path, tmp_path)
    assert main(["view", str(folder), "--out", str(tmp_path / "r.html")]) == 2
    assert f"{folder / 'metrics.json'}:{want['at']}: {want['message']}" in capsys.readouterr().err


JSON_SOUP = st.lists(
    st.sampled_from(["[", "]", "{", "}", ",", ":", '"a"', '"\\\\"', "1", "-", "9" * 400])
    | st.sampled_from(["1e999", "NaN", "-Infinity", "true", "null", " ", "\n", "\ufeff"]),
    max_size=80,
)


@settings(max_examples=80, deadline=None)
@given(JSON_SOUP, st.integers(0, 100))
def test_any_text_is_read_or_refused_located_never_another_error(
    words: list[str], depth: int
) -> None:
    text = "[" * depth + "".join(words)
    try:
        parse_json(text, "f")
    except JsonInputError as exc:
        assert exc.line >= 1 and exc.column >= 1
        assert str(exc).startswith(f"f:{exc.line}:{exc.column}: ")


def test_a_file_past_the_size_bound_is_refused_before_it_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sim import json_input

    path = tmp_path / "t.json"
    path.write_text("[1, 2, 3]", encoding="utf-8")  # 9 bytes
    monkeypatch.setattr(json_input, "MAX_JSON_BYTES", 9)
    assert read_json(path) == [1, 2, 3]
    monkeypatch.setattr(json_input, "MAX_JSON_BYTES", 8)
    with pytest.raises(JsonInputError, match=r"t.json:1:1: larger than 8 bytes"):
        read_json(path)


def test_an_unclosed_string_of_escaped_quotes_is_refused_in_one_pass() -> None:
    # a scan that retried a string at every quote took 51 s on 20,000 of these (quadratic);
    # json's own scan and the bracket count are one pass: this is refused at once
    with pytest.raises(JsonInputError) as info:
        parse_json('["' + '\\"' * 200_000, "f")
    assert (info.value.line, info.value.column, info.value.syntax) == (1, 2, True)
    assert too_deep_at('["' + '\\"[' * 200_000) == 0  # inside the string: not counted
