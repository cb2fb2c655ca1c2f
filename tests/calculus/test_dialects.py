"""The built-in invocation dialects: what each declares, the LTS it builds, and the module
importable first (its package imports it back)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


SLOTS = st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(BUILTIN)), SLOTS, st.data())
def test_every_dialect_accepts_its_steps_in_order_for_any_schema(
    name: str, required: list[str], data: st.DataObject
) -> None:
    """For any required inputs: the dialect's opening, its intake (the τ, or an in-order
    subset of the slots collected), the gate and execute end in ``result``; an invocation
    opened by another label is no trace of it."""
    dialect = BUILTIN[name]
    schema = {"type": "object", "required": required, "properties": {r: {} for r in required}}
    tool = tool_plus_from_mapping({**BOOK, "input_schema": schema})
    lts = dialect.lts(tool, error_types=())
    if dialect.collects:
        asked = data.draw(st.lists(st.sampled_from(required or ["a"]), unique=True))
        intake = [f"collect({r})" for r in required if r in asked]
    else:
        intake = [TAU]
    done = ["approve(book)", "execute(book)", "result(book)"]
    assert accepts(lts, [f"{dialect.opening}(book)", *intake, *done])
    other = "invoke" if dialect.opening == "call" else "call"
    assert not accepts(lts, [f"{other}(book)", *intake, *done])


def test_the_module_imports_first_in_a_fresh_interpreter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sim.calculus.mcp.dialects"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
