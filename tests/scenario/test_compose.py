"""Composing YAML with marks (sim/scenario/compose.py): libyaml's composer gives the
marks PyYAML's gives, and every bound (size, characters, depth, aliases) is a located
error, never a crash."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.scenario import Diagnostic, ScenarioError, load_scenario, parse_scenario
from sim.scenario.compose import (
    FAST_LOADER,
    MAX_ALIAS_VALUES,
    MAX_BYTES,
    MAX_DEPTH,
    PURE_LOADER,
    Document,
    parse_yaml,
)
from tests.harness.warm_sim import warm_sim

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
    (ROOT / "tests" / "fixtures" / "scenarios").glob("*.yaml")
)
MINIMAL = (ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text()

needs_libyaml = pytest.mark.skipif(
    FAST_LOADER is PURE_LOADER, reason="PyYAML is built without libyaml"
)

#: Documents that are malformed or odd in the ways the located-error tests use.
ODD: dict[str, str] = {
    "tab": "name: x\nagents:\n\t- id: a\n",
    "indentation": "name: x\n  protocols: [MCP]\n",
    "unclosed": "name: x\nprotocols: [MCP,\n  A2A\nagents: []\n",
    "duplicate": "name: x\nname: y\nagents:\n  - {id: a, id: b}\n",
    "merge": "x-d: &d {type: GATEWAY}\nagents:\n  - <<: *d\n    id: a\n  - {<<: [*d], id: b}\n",
    "unicode": "name: \"é✓ü\"\ndescription: ñandú — 漢字 x\nagents: [{id: 'ü', k: [1, 2]}]\n",
    "scalars": "a: [1, 1.5, .inf, null, ~, true, off, 0x1f, 2020-01-01, '', \"\\t\"]\n",
    "complex key": "? [a, b]\n: 1\nname: x\n",
    "crlf": "name: x\r\nagents:\r\n  - id: a\r\n",
    "block scalars": "d: |\n  one\n  two\ne: >-\n  folded\n  text\nf: 1\n",
}


def _marks(text: str, loader: type[Any]) -> tuple[Any, dict[Any, Any], dict[Any, Any], list[str]]:
    doc = Document("f.yaml")
    data = parse_yaml(text, doc, loader)
    values = {path: (m.line, m.column) for path, m in doc.value_marks.items()}
    keys = {path: (m.line, m.column) for path, m in doc.key_marks.items()}
    return data, values, keys, [str(d) for d in doc.problems]


def _assert_same_marks(text: str) -> None:
    fast = _marks(text, FAST_LOADER)
    pure = _marks(text, yaml.SafeLoader)
    assert fast[0] == pure[0], "the data differ"
    assert fast[1] == pure[1], "value marks differ"
    assert fast[2] == pure[2], "key marks differ"
    assert fast[3] == pure[3], "diagnostics differ"


@needs_libyaml
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_libyaml_marks_every_value_and_key_as_pyyaml_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _assert_same_marks(text)
    assert len(_marks(text, FAST_LOADER)[1]) > 50  # the shipped files are not trivial


@needs_libyaml
@pytest.mark.parametrize("name", sorted(ODD))
def test_libyaml_and_pyyaml_agree_on_odd_documents(name: str) -> None:
    _assert_same_marks(ODD[name])


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
)
_documents = st.dictionaries(
    st.text("abcxyz-_é", min_size=1, max_size=6),
    st.recursive(
        _scalars,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text("abcé", min_size=1, max_size=4), inner, max_size=4)
        ),
        max_leaves=20,
    ),
    min_size=1,
    max_size=6,
)


@needs_libyaml
@settings(max_examples=60, deadline=None)
@given(document=_documents, flow=st.sampled_from([None, True, False]))
def test_marks_agree_on_any_document(document: dict[str, Any], flow: bool | None) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, width=40)
    _assert_same_marks(text)


# --- bounds -------------------------------------------------------------------------------


def _only(text: str) -> Diagnostic:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    errors = info.value.errors
    assert len(errors) == 1, "\n".join(map(str, errors))
    return errors[0]


def _at(diag: Diagnostic, line: int, column: int, field: str, message: str) -> None:
    assert (diag.line, diag.column, diag.field) == (line, column, field), str(diag)
    assert diag.message == message, str(diag)


CONTROL = (
    "character U+{code:04X} is not allowed in YAML text (a control character); "
    'write it as an escape in a double-quoted string ("\\x{code:02x}")'
)


@pytest.mark.parametrize(
    ("text", "line", "column", "code"),
    [("name: x\x1b\n", 1, 8, 0x1B), ("name: x\n\x00\n", 2, 1, 0), ("a: 1\nb: 'q\x07'\n", 2, 6, 7)],
)
def test_a_control_character_is_located(text: str, line: int, column: int, code: int) -> None:
    _at(_only(text), line, column, "<root>", CONTROL.format(code=code))


NESTED = f"values nest deeper than {MAX_DEPTH} levels"


def test_deep_block_nesting_is_refused_where_it_passes_the_bound() -> None:
    text = "x:\n" + "".join("  " * i + "-\n" for i in range(1, 300))
    _at(_only(text), MAX_DEPTH + 1, 2 * MAX_DEPTH + 1, "x", NESTED)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("x: " + "[" * 5000 + "]" * 5000 + "\n", 1, 1003),  # libyaml stops at 1,000 levels
        ("x:\n" + "- " * 5000 + "a\n", 2, 1999),
        ("x: " + "[" * 200 + "]" * 200 + "\n", 1, 4 + MAX_DEPTH - 1),
    ],
    ids=["flow-5000", "dashes-5000", "flow-200"],
)
@needs_libyaml
def test_very_deep_nesting_is_refused_not_a_recursion_error(
    text: str, line: int, column: int
) -> None:
    diag = _only(text)
    assert (diag.line, diag.column, diag.message) == (line, column, NESTED), str(diag)


def test_without_libyaml_deep_nesting_is_still_an_error() -> None:
    doc = Document("s.yaml")
    assert parse_yaml("x: " + "[" * 5000 + "]" * 5000, doc, PURE_LOADER) is None
    assert [d.message for d in doc.problems] == [NESTED]


def test_a_self_referencing_alias_is_refused() -> None:
    _at(
        _only("name: &a [*a]\n"),
        1,
        7,
        "name[0]",
        "an alias refers to the collection that contains it (line 1): the value would be infinite",
    )


def test_a_merge_cycle_is_refused() -> None:
    _at(
        _only("a: &a {<<: *a}\n"),
        1,
        1,
        "a",
        "merge keys (<<) form a cycle: the mapping would be infinite",
    )


def _bomb(use: str) -> str:
    lines = ["x-l0: &l0 [a, a, a, a, a, a, a, a, a]"]
    lines += [f"x-l{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 9) + "]" for k in range(1, 10)]
    return "\n".join(lines) + f"\n{use}\n"


def test_an_alias_bomb_is_refused_at_the_field_that_expands_it() -> None:
    _at(
        _only(_bomb("name: *l9")),
        11,
        1,
        "name",
        f"aliases expand to more than {MAX_ALIAS_VALUES:,} values (an alias bomb?); "
        "repeat less, or anchor smaller values",
    )


def test_an_alias_bomb_inside_x_keys_is_never_expanded() -> None:
    text = MINIMAL + "\n" + _bomb("x-self: &s [*s]")
    scenario, _ = parse_scenario(text, "s.yaml")  # neither the bomb nor the cycle is built
    assert scenario.name


def test_aliases_within_the_budget_load() -> None:
    text = MINIMAL.replace("agents:\n", "x-caps: &caps [" + ", ".join(["c"] * 50) + "]\nagents:\n")
    text = text.replace(
        "    type: LLM_AGENT\n", "    type: LLM_AGENT\n    capabilities: *caps\n", 1
    )
    scenario, _ = parse_scenario(text, "s.yaml")
    assert len(scenario.agents[0].capabilities) == 50


def test_a_huge_integer_is_a_located_error() -> None:
    _at(
        _only("name: " + "9" * 5000 + "\n"),
        1,
        7,
        "name",
        f"cannot read this value: a whole number of more than {sys.get_int_max_str_digits():,} "
        "digits",
    )


TOO_LARGE = f"the file is larger than {MAX_BYTES // 2**20} MiB, the most a scenario may be"


def test_a_file_over_the_size_bound_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: no disk used
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert [(d.line, d.column, d.message) for d in info.value.errors] == [(1, 1, TOO_LARGE)]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        # ctrl.yaml and self.yaml with -m slow: their ScenarioErrors (the message and its
        # place) are asserted in this process above; the command's path from a ScenarioError
        # to exit 2 and one message is the one deep.yaml and /dev/zero take here
        pytest.param(
            "ctrl.yaml",
            b"name: x\x1b\n",
            "1:8: <root>: character U+001B is not allowed",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "self.yaml",
            b"name: &a [*a]\n",
            "1:7: name[0]: an alias refers to the collection",
            marks=pytest.mark.slow,
        ),
        ("deep.yaml", b"x: " + b"[" * 5000 + b"]" * 5000, "values nest deeper than 64"),
        ("/dev/zero", b"", f"/dev/zero:1:1: <root>: {TOO_LARGE}"),
    ],
)
def test_validate_exits_2_with_the_message_and_no_traceback(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = Path(name) if name.startswith("/") else tmp_path / name
    if content:
        path.write_bytes(content)
    done = subprocess.run(  # warm: a real process of its own, the command as it ends
        [*warm_sim(), "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_many_x_keys_are_accepted() -> None:
    text = MINIMAL + "".join(f"x-k{i}: {{a: [{i}]}}\n" for i in range(2000))
    scenario, warnings = parse_scenario(text, "s.yaml")
    assert scenario.name and warnings == []


def test_a_scenario_that_is_a_list_of_anchors_is_still_not_a_mapping() -> None:
    text = textwrap.dedent(
        """\
        - &a {id: a}
        - *a
        """
    )
    _at(_only(text), 1, 1, "<root>", "a scenario is a mapping of fields, not a list")


READ = "    side_effects: read\n"


def test_a_300_deep_enum_in_an_input_schema_is_refused_at_load() -> None:
    """Once it validated, then crashed pydantic's serialisation in every replication."""
    deep = "[" * 300 + "]" * 300
    schema = f"{{type: object, properties: {{a: {{enum: {deep}}}}}}}"
    text = MINIMAL.replace(READ, f"{READ}    input_schema: {schema}\n")
    diag = _only(text)
    assert (diag.field, diag.message) == ("tools", NESTED), str(diag)
    assert diag.line == 25
