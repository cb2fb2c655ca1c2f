"""Loading never breaks on any YAML mapping: ``parse_scenario`` returns a scenario or raises
:class:`ScenarioError`, and every error and warning it gives is located in the text
(``file:line:col: field: message``, the line one of the text's, the column at least 1, a
field and a message named). The documents are the minimal scenario with one to three of
its values replaced, keys added or keys removed, drawn over the schema's own field names
and values of every YAML type; and mappings of the top-level fields with any values."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = yaml.safe_load((ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml").read_text())
FILE = "any.yaml"


def _schema_keys() -> list[str]:
    """Every property name the scenario schema declares (at any depth)."""
    keys: set[str] = set()
    stack: list[Any] = [json.loads((ROOT / "scenarios" / "protomesh.schema.json").read_text())]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                keys |= set(node["properties"])
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    return sorted(keys)


KEYS = _schema_keys()
#: names a scenario uses for its agents, protocols, tools and tasks, and a few others
WORDS = ("planner", "gw", "server", "MCP", "A2A", "lookup", "store", "flow", "a", "b", "x")
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(WORDS)
    | st.text(alphabet="ab:-_ .0\n", max_size=6)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.sampled_from(WORDS), inner, max_size=3)
    ),
    max_leaves=8,
)


def located(diag: Diagnostic, text: str) -> str | None:
    """Why ``diag`` is not located in ``text`` (None when it is)."""
    lines = text.count("\n") + 1
    if diag.file != FILE or not 1 <= diag.line <= lines or diag.column < 1:
        return f"not located in {FILE} ({lines} lines): {diag}"
    if not diag.field or not diag.message:
        return f"no field or no message: {diag!r}"
    if not str(diag).startswith(f"{FILE}:{diag.line}:{diag.column}: "):
        return f"not printed file:line:col: {diag}"
    return None


def check_loads_or_locates(parse: Callable[[str, str], Any], text: str) -> None:
    """``parse(text, FILE)`` loads or raises ScenarioError, every diagnostic located."""
    try:
        _, found = parse(text, FILE)
    except ScenarioError as exc:
        assert exc.errors, f"a ScenarioError without an error on:\n{text}"
        found = [*exc.errors, *exc.warnings]
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__}: {exc} on:\n{text}") from exc
    problems = [p for p in (located(d, text) for d in found) if p]
    assert not problems, f"{problems} on:\n{text}"


@st.composite
def damaged(draw: st.DrawFn) -> Any:
    """The minimal scenario with 1 to 3 values replaced, keys added or keys removed."""
    doc = json.loads(json.dumps(MINIMAL))
    for _ in range(draw(st.integers(1, 3))):
        node: Any = doc
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            child = node[
                draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            ]
            if not isinstance(child, (dict, list)):
                break
            node = child
        if isinstance(node, dict):
            action = draw(st.sampled_from(["replace", "add", "remove"])) if node else "add"
            if action == "add":
                node[draw(st.sampled_from(KEYS))] = draw(VALUES)
            else:
                key = draw(st.sampled_from(sorted(node)))
                if action == "remove":
                    del node[key]
                else:
                    node[key] = draw(VALUES)
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(VALUES)
    return doc


TOP = st.dictionaries(
    st.sampled_from([*MINIMAL, "routers", "trace", "approval", "seed", "properties"]),
    VALUES,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(doc=damaged() | TOP)
def test_any_mapping_loads_or_is_located(doc: Any) -> None:
    check_loads_or_locates(parse_scenario, yaml.safe_dump(doc, sort_keys=False))


def test_a_traceback_or_an_unlocated_error_is_caught() -> None:
    text = yaml.safe_dump(MINIMAL, sort_keys=False)
    check_loads_or_locates(parse_scenario, text)

    def crashes(text: str, file: str) -> Any:
        return {}["agents"]

    def unlocated(text: str, file: str) -> Any:
        raise ScenarioError([Diagnostic(file, 0, 1, "agents", "bad")])

    def unnamed(text: str, file: str) -> Any:
        return None, [Diagnostic(file, 2, 1, "", "bad")]

    with pytest.raises(AssertionError, match=r"^KeyError: 'agents' on:"):
        check_loads_or_locates(crashes, text)
    with pytest.raises(
        AssertionError, match=r"not located in any.yaml \(\d+ lines\): any.yaml:0:1:"
    ):
        check_loads_or_locates(unlocated, text)
    with pytest.raises(AssertionError, match="no field or no message"):
        check_loads_or_locates(unnamed, text)
