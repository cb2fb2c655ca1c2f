"""The ``properties:`` block and ``--properties FILE``: shape, formulas located at
file:line:col of the offending token (through plain, quoted and block scalars), exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cli import main
from sim.scenario import ScenarioError, load_scenario, parse_scenario
from sim.scenario.properties import load_properties

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"
BASE = TRAIN.read_text(encoding="utf-8").rstrip("\n") + "\n"
FIRST = BASE.count("\n") + 1  # the line of `properties:` appended to BASE


def _with(block: str) -> str:
    return BASE + "properties:\n" + block


def _errors(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    return [str(d) for d in info.value.errors]


def _one(formula_line: str, name: str = "p") -> str:
    return f"  - name: {name}\n    scope: invocation\n    formula: {formula_line}\n"


def test_a_valid_block_loads() -> None:
    scn, _ = parse_scenario(_with(_one('"G (call -> F[<=30] result)"')), "s.yaml")
    (p,) = scn.properties
    assert (p.name, p.scope, p.formula) == ("p", "invocation", "G (call -> F[<=30] result)")


# the formula as written after `formula: ` (column 14), the column of the bad token, message
CASES = [
    ('"G (call -> F[<=30] result"', 17, "unbalanced parenthesis: `(` is never closed"),
    ('"G (exec -> result)"', 18, "unknown label 'exec'"),
    ('"F execute(book_trian)"', 25, "unknown tool 'book_trian' (did you mean 'book_train'?)"),
    ('"F[<=-1] call"', 19, "the bound of `F` must be a non-negative number of seconds, not `-1`"),
    ('"G (call -> )"', 23, "operator `->` without a right operand"),
    ('"F execute(colour=red)"', 25, "unknown key 'colour'"),
    ("G (call -> F[<=-1] result)", 29, "not `-1`"),
    ("'G (call '' -> x)'", 23, 'unexpected character "\'"'),
]


@pytest.mark.parametrize(("written", "column", "needle"), CASES)
def test_formula_errors_name_file_line_and_column_of_the_token(
    written: str, column: int, needle: str
) -> None:
    (err,) = _errors(_with(_one(written)))
    assert err.startswith(f"s.yaml:{FIRST + 3}:{column}: properties[0].formula: "), err
    assert needle in err


def test_errors_inside_block_scalars_are_on_their_own_line() -> None:
    literal = "|\n      G (call ->\n         F execute(bok))\n"
    (err,) = _errors(_with(_one(literal)))
    assert err.startswith(f"s.yaml:{FIRST + 5}:20: properties[0].formula: unknown tool 'bok'")
    folded = ">\n      G (call ->\n         F execute(book_train)\n"
    (err,) = _errors(_with(_one(folded)))
    assert err.startswith(f"s.yaml:{FIRST + 4}:9: "), err
    assert "unbalanced parenthesis" in err


def test_shape_errors_and_duplicate_names() -> None:
    errs = _errors(
        _with("  - {name: Bad_Name, scope: task, formula: 'true'}\n" + _one("true", "bool"))
    )
    assert any(f"s.yaml:{FIRST + 1}:" in e and "properties[0].name" in e for e in errs), errs
    assert any("properties[0].scope" in e and "invocation" in e for e in errs), errs
    assert any("properties[1].formula" in e and "must be a string" in e for e in errs), errs
    (dup,) = _errors(_with(_one("'F call'", "dup") + _one("'F result'", "dup")))
    assert dup.startswith(f"s.yaml:{FIRST + 4}:11: properties[1].name: "), dup
    assert f"duplicate property name 'dup' (first at line {FIRST + 1})" in dup


def test_validate_exits_2_with_the_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(_with(_one('"G (call -> F[<=30] result"')), encoding="utf-8")
    assert main(["validate", str(bad)]) == 2
    assert f"{bad}:{FIRST + 3}:17: properties[0].formula: unbalanced" in capsys.readouterr().err


def test_a_properties_file_is_located_in_that_file(tmp_path: Path) -> None:
    scn = load_scenario(TRAIN)
    good = load_properties(ROOT / "tests" / "properties" / "approvals.yaml", scn)
    assert [p.name for p in good] == ["approved-writes", "answered-in-time", "no-failed-instance"]
    path = tmp_path / "props.yaml"
    path.write_text(
        "- name: ok\n  scope: run\n  formula: F call\n"
        '- name: bad\n  scope: run\n  formula: "G (call -> Y (!execute S aprove))"\n'
        "- name: worse\n  scope: scene\n  formula: F call\n  colour: red\n",
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError) as info:
        load_properties(path, scn)
    errs = [str(d) for d in info.value.errors]
    assert errs[0] == (
        f"{path}:6:38: [1].formula: unknown label 'aprove' (did you mean 'approve'?) "
        "(the trace labels, docs/reference/trace.md) (at 1:26 of the formula)"
    )
    assert f"{path}:8:10: [2].scope" in errs[1]
    assert errs[2] == f"{path}:10:3: [2].colour: unknown key"
    path.write_text("name: x\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="a YAML list"):
        load_properties(path, scn)
