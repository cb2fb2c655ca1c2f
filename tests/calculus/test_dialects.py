"""The built-in invocation dialects: what each declares, the LTS it builds, and the module
importable first (its package imports it back)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sim.calculus.lts import TAU, accepts
from sim.calculus.mcp import tool_plus_from_mapping
from sim.calculus.mcp.dialects import BUILTIN, MCP, A2aDialect, builtin_dialect, tool_lts
from tests.harness.paths import REPO

BOOK = {
    "name": "book",
    "description": "Books a table.",
    "input_schema": {"type": "object", "required": ["date"], "properties": {"date": {}}},
    "requires_approval": True,
}


def test_each_builtin_declares_its_steps_and_what_may_fail() -> None:
    assert {n: d.steps() for n, d in BUILTIN.items()} == {
        "mcp": ("call", "validate", "approve", "execute", "result"),
        "sgd": ("invoke", "collect", "approve", "execute", "result"),
        "a2a": ("call", "collect", "approve", "execute", "result"),
    }
    assert MCP.failing() == ("validate", "execute") and BUILTIN["a2a"].failing() == ("execute",)
    assert MCP.plain("book")["validate"] == TAU and "validate" not in BUILTIN["a2a"].plain("b")
    assert builtin_dialect("SGD") is BUILTIN["sgd"] and builtin_dialect("A2A") is MCP
    assert set(A2aDialect.states) == {
        "submitted", "input-required", "auth-required", "working",
        "completed", "failed", "canceled", "rejected",
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_dialect_builds_the_lts_tool_lts_builds_by_its_name(name: str) -> None:
    tool = tool_plus_from_mapping(BOOK)
    assert BUILTIN[name].lts(tool) == tool_lts(tool, dialect=name)


def test_the_a2a_dialect_asks_for_a_missing_input_instead_of_validating() -> None:
    lts = BUILTIN["a2a"].lts(tool_plus_from_mapping(BOOK), error_types=())
    done = ["approve(book)", "execute(book)", "result(book)"]
    assert accepts(lts, ["call(book)", "collect(date)", *done])
    assert accepts(lts, ["call(book)", *done])  # the arguments had the date
    assert not accepts(lts, ["call(book)", TAU, *done])
    assert not accepts(lts, ["invoke(book)", *done])


def test_the_module_imports_first_in_a_fresh_interpreter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sim.calculus.mcp.dialects"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
