"""Tool entries the engine and ``check`` could not read are errors at load time
(sim/scenario/rules/tools.py): each exactly located, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sim.scenario import Diagnostic, ScenarioError, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = (ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text()
LOOKUP = "  - name: lookup\n"


def _with_schema(schema: str) -> str:
    """The minimal scenario with ``lookup``'s input schema (line 24, after 10 columns)."""
    assert MINIMAL.count(LOOKUP) == 1
    return MINIMAL.replace(LOOKUP, f"{LOOKUP}    input_schema: {schema}\n")


def _errors(text: str) -> list[Diagnostic]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    return list(info.value.errors)


@pytest.mark.parametrize(
    ("schema", "column", "field", "message"),
    [
        ("{type: 8}", 26, "type", "expected 'object'"),
        ("{type: array}", 26, "type", "expected 'object'"),
        ("{type: object, properties: [a]}", 46, "properties", "expected an object"),
        ("{type: object, properties: 7}", 46, "properties", "expected an object"),
        ("{type: object, required: 300}", 44, "required", "expected a list of strings"),
        ("{type: object, required: [a, 3]}", 44, "required", "expected a list of strings"),
        ("{type: object, required: {a: 1}}", 44, "required", "expected a list of strings"),
    ],
)
def test_an_input_schema_the_calculus_refuses_is_located(
    schema: str, column: int, field: str, message: str
) -> None:
    errors = _errors(_with_schema(schema))
    assert [(e.line, e.column, e.field, e.message) for e in errors] == [
        (24, column, f"tools[0].input_schema.{field}", f"{message}, as in an MCP tool descriptor")
    ]


def test_required_that_is_not_a_list_gives_no_task_warning_crash() -> None:
    text = _with_schema("{type: object, required: 300}")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    assert info.value.warnings == ()  # _task_warnings skips it: its own error is enough


def test_a_good_input_schema_still_loads() -> None:
    scenario, _ = parse_scenario(
        _with_schema("{type: object, required: [id], properties: {id: {type: string}}}"), "s.yaml"
    )
    assert scenario.tools[0].input_schema["required"] == ["id"]


def test_validate_exits_2_on_a_bad_input_schema(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(_with_schema("{type: 8}"))
    done = subprocess.run(
        [sys.executable, "-m", "sim", "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"{path}:24:26: tools[0].input_schema.type: expected 'object', as in an MCP tool "
        "descriptor\n"
    )
