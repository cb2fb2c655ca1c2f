"""Issue 38 item 2: a formula of any shape is parsed or refused with a located error,
never a traceback: the nesting and size bounds (MAX_DEPTH, MAX_FORMULA_CHARS), the
formula's end inside its YAML scalar, and the repro files of tests/fixtures/attack/formulas
through every command that reads formulas (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.properties.ast import Formula, children
from sim.properties.parse import MAX_DEPTH, FormulaError, parse

ROOT = Path(__file__).resolve().parents[2]
ATTACK = ROOT / "tests" / "fixtures" / "attack" / "formulas"
EXPECTED: dict[str, dict[str, str]] = yaml.safe_load(
    (ATTACK / "expected.yaml").read_text(encoding="utf-8")
)
MINIMAL = ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml"


def depth(node: Formula) -> int:
    """The AST's depth (a leaf is 1), walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        here, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((kid, d + 1) for kid in children(here))
    return deepest


# each shape at depth n: nested parentheses count for the parser, the others for the AST
SHAPES = {
    "X": lambda n: "X " * (n - 1) + "call",
    "!": lambda n: "!" * (n - 1) + "call",
    "(": lambda n: "(" * n + "call" + ")" * n,
    "->": lambda n: " -> ".join(["call"] * n),
    "&": lambda n: " & ".join(["call"] * n),
    "U": lambda n: " U ".join(["call"] * n),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_nesting_up_to_max_depth_parses_and_one_more_is_refused(shape: str) -> None:
    make = SHAPES[shape]
    assert depth(parse(make(MAX_DEPTH))) <= MAX_DEPTH
    with pytest.raises(FormulaError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse(make(MAX_DEPTH + 1))


def test_a_formula_over_the_size_bound_is_refused_at_the_bound() -> None:
    with pytest.raises(FormulaError) as info:
        parse("call | " * 3000 + "call", max_chars=20_000)
    assert (info.value.pos, info.value.message) == (20_000, "formula longer than 20000 characters")


OPERATORS = ("(", ")", "[", "]", "{", "}", ",", "=", "<=", "->", "<->", "!", "&", "|")
WORDS = ("X", "F", "G", "U", "S", "Y", "O", "H", "call", "execute", "tool", "true", "1", '"s"')
TOKENS = st.sampled_from([*OPERATORS, *WORDS])


@settings(max_examples=120, deadline=None)
@given(st.lists(TOKENS, max_size=40))
def test_any_token_sequence_parses_or_raises_a_located_formula_error(words: list[str]) -> None:
    text = " ".join(words)
    try:
        parse(text)
    except FormulaError as exc:
        assert 0 <= exc.pos <= len(text)
        assert str(exc).startswith(f"{exc.line}:{exc.column}: ")


def _scenario_with(props: Path, tmp_path: Path) -> tuple[Path, int]:
    """minimal.yaml with the properties file as its ``properties:`` block (indented 2),
    and the line of that block's first entry."""
    base = MINIMAL.read_text(encoding="utf-8").rstrip("\n") + "\n"
    entries = [line for line in props.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    path = tmp_path / "s.yaml"
    path.write_text(base + "properties:\n" + "".join(f"  {e}\n" for e in entries), "utf-8")
    return path, base.count("\n") + 2


@pytest.fixture(scope="module")
def minimal_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    out = tmp_path_factory.mktemp("minimal")
    run_replication(load_scenario(MINIMAL), "dijkstra", 0, out, "full")
    return out / "trace.jsonl"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_formulas_exit_2_located_in_every_command(
    name: str, tmp_path: Path, minimal_trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = EXPECTED[name]
    props = ATTACK / f"{name}.yaml"
    tail = f"[0].formula: {want['message']} (at {want['inside']} of the formula)"
    for command in (
        ["check", str(minimal_trace), "--scenario", str(MINIMAL)],
        ["smc", str(MINIMAL)],
        ["verify", str(MINIMAL)],
    ):
        assert main([*command, "--properties", str(props)]) == 2, command
        err = capsys.readouterr().err
        assert f"{props}:{want['at']}: {tail}" in err, (command, err)
    scenario, first = _scenario_with(props, tmp_path)
    line, column = (int(x) for x in want["at"].split(":"))
    for command in ("validate", "plan"):
        assert main([command, str(scenario)]) == 2, command
        err = capsys.readouterr().err
        assert f"{scenario}:{first + line - 2}:{column + 2}: properties{tail}" in err, err
