"""``--set PATH=V1,V2,...`` over all inputs (sim/experiments/sweep.py): any text is read or
refused with a SweepError, never another exception; a path written by ``path_text`` reads
back as itself; and values written as YAML flow scalars (strings double-quoted with JSON's
escapes, so quotes, backslashes and commas inside a string) read back as themselves, in
order."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.experiments.sweep import SweepError, parse_path, parse_set, path_text, split_values

SET = settings(max_examples=40, deadline=None)
WORDS = st.text(alphabet="abcxyz_+", min_size=1, max_size=6).filter(lambda w: w.strip("+") != "")
PATHS = st.lists(WORDS | st.integers(0, 99), min_size=1, max_size=4).map(tuple)
#: strings: of the characters that mean something to the splitter or to YAML, or any
TEXTS = st.text(st.sampled_from("a ,\"'\\[]{}:#"), max_size=8) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8
)
VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXTS
    | TEXTS
)


def written(value: Any) -> str:
    """``value`` as a user writes it after ``=``: a string double-quoted (JSON's escapes,
    valid YAML; non-ASCII as itself), anything else YAML's own flow scalar."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return yaml.safe_dump(value, default_flow_style=True).removesuffix("\n...\n").strip()


@SET
@given(text=st.text(alphabet="ab.=,[]{}'\"\\ 0-:!&*#%|>\t\n", max_size=16))
def test_any_text_is_read_or_refused_with_a_sweep_error(text: str) -> None:
    with contextlib.suppress(SweepError):
        parse_set(text)


@SET
@given(path=PATHS)
def test_a_written_path_reads_back(path: tuple[str | int, ...]) -> None:
    assert parse_path(path_text(path)) == path


@SET
@given(path=PATHS, values=st.lists(VALUES, min_size=1, max_size=4))
def test_written_values_read_back_in_order(path: tuple[str | int, ...], values: list[Any]) -> None:
    text = f"{path_text(path)}={','.join(written(v) for v in values)}"
    setting = parse_set(text)
    assert (setting.path, list(setting.values)) == (path, values), text


def test_a_quoted_comma_after_an_escaped_quote_stays_in_its_string() -> None:
    assert split_values('"a\\"b,c",1') == ['"a\\"b,c"', "1"]
    assert parse_set('description="a\\"b,c",x').values == ('a"b,c', "x")
    with pytest.raises(SweepError, match="empty value"):
        parse_set("a=1,,2")
