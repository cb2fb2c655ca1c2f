"""The four principles P1–P4 as lint checks, and the calibration of θ on real descriptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.calculus.mcp import Tool, ToolPlus, load_tools
from sim.calculus.phi import phi_services
from sim.calculus.principles import (
    DEFAULT_MIN_ENTITIES,
    DEFAULT_THETA,
    Finding,
    entities,
    lint,
    sem_density,
    tokens,
)
from sim.calculus.sgd import Service, load_schema

GOOD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["user_id"],
    "properties": {"user_id": {"type": "string", "description": "Account identifier of the user"}},
}


def clean_plus(**changes: Any) -> dict[str, Any]:
    """An MCP⁺ tool entry that satisfies P1–P4."""
    entry: dict[str, Any] = {
        "name": "delete_user",
        "description": "Permanently deletes a user account and its stored bookings",
        "input_schema": GOOD_SCHEMA,
        "side_effects": "delete",
        "requires_approval": True,
        "failure_modes": [{"error": "NotFound", "recovery": {"abort": True}}],
        "dependencies": [],
        "summary": "Permanently deletes a user account.",
    }
    entry.update(changes)
    return entry


def one(tools: list[Tool | ToolPlus]) -> list[tuple[str, str, str]]:
    return [(f.tool, f.principle, f.field) for f in lint(tools)]


@pytest.fixture(scope="module")
def services(shared_data: Path) -> tuple[Service, ...]:
    return load_schema(shared_data / "sgd" / "train" / "schema.json")


def _descriptions(shared_data: Path, services: tuple[Service, ...]) -> dict[str, list[str]]:
    tool_desc: list[str] = []
    prop_desc: list[str] = []
    for path in sorted((shared_data / "mcp_tools").glob("*.json")):
        if path.name == "MANIFEST.json":
            continue
        for t in json.loads(path.read_text())["tools"]:
            tool_desc.append(t.get("description", ""))
            for p in (t["inputSchema"].get("properties") or {}).values():
                if isinstance(p, dict) and p.get("description"):
                    prop_desc.append(p["description"])
    return {
        "sgd": [i.description for s in services for i in s.intents]
        + [sl.description for s in services for sl in s.slots]
        + [s.description for s in services],
        "mcp_tools": tool_desc,
        "mcp_props": prop_desc,
    }


def test_tokens_and_entities() -> None:
    text = "Check the amount of money in a user's bank account"
    assert tokens(text) == [
        "check",
        "the",
        "amount",
        "of",
        "money",
        "in",
        "a",
        "user",
        "bank",
        "account",
    ]
    assert entities(text) == ["check", "amount", "money", "user", "bank", "account"]
    assert sem_density(text) == pytest.approx(0.6)
    assert sem_density("") == 0.0
    assert entities("Get some data for the given thing") == ["get"]


def test_theta_default_is_calibrated_on_the_sgd_descriptions(
    shared_data: Path, services: tuple[Service, ...]
) -> None:
    """θ is the largest multiple of 0.05 that every SGD description (intents, slots, services:
    the paper's reference of descriptions good enough for zero-shot use) meets."""
    desc = _descriptions(shared_data, services)
    sgd = [sem_density(d) for d in desc["sgd"]]
    assert len(sgd) == 53 + 215 + 26
    assert round(min(sgd), 2) == 0.29
    assert pytest.approx(int(min(sgd) * 20) / 20) == DEFAULT_THETA
    assert sum(d < DEFAULT_THETA for d in sgd) == 0
    assert sum(d < 0.5 for d in sgd) == 35  # a θ of 0.5 would reject 35 SGD descriptions
    tools = [sem_density(d) for d in desc["mcp_tools"]]
    props = [sem_density(d) for d in desc["mcp_props"]]
    assert (len(tools), sum(d < DEFAULT_THETA for d in tools)) == (194, 0)
    assert (len(props), sum(d < DEFAULT_THETA for d in props)) == (735, 0)
    short = [d for d in desc["mcp_tools"] if len(entities(d)) < DEFAULT_MIN_ENTITIES]
    assert sorted(short) == ["Create a new gist", "Switches branches"]


def test_lint_pins_findings_on_real_tool_lists(shared_data: Path) -> None:
    tools = shared_data / "mcp_tools"
    fs = lint(load_tools(tools / "filesystem.json"))
    assert ("write_file", "P2", "annotations.destructiveHint") in [
        (f.tool, f.principle, f.field) for f in fs
    ]
    github = [(f.tool, f.principle, f.field) for f in lint(load_tools(tools / "github.json"))]
    assert ("create_or_update_file", "P2", "annotations") in github
    assert ("create_or_update_file", "P3", "failure_modes") in github
    git = lint(load_tools(tools / "git.json"))
    checkout = [f for f in git if f.tool == "git_checkout" and f.field == "description"]
    assert [str(f) for f in checkout] == [
        "git_checkout: P1 SemanticCompleteness: field description: 2 entities (switches "
        "branches) < 3: does not say what the tool acts on and why"
    ]
    memory = [(f.tool, f.principle, f.field) for f in lint(load_tools(tools / "memory.json"))]
    assert ("delete_entities", "P2", "annotations.destructiveHint") in memory
    assert ("delete_relations", "P4", "dependencies") in memory
    assert ("create_entities", "P2", "requires_approval") in memory  # writes, no approval info
    time_tools = lint(load_tools(tools / "time.json"))
    assert {f.principle for f in time_tools} == {"P3"}  # read-only, well described


def test_a_one_word_description_violates_p1() -> None:
    tool = Tool("go", "Switches", {"type": "object"}, None)
    findings = [f for f in lint([tool]) if f.principle == "P1"]
    assert [f.field for f in findings] == ["description"]
    assert "1 entity" in findings[0].message


def test_a_clean_mcp_plus_list_has_no_findings() -> None:
    assert lint([ToolPlus.from_mapping(clean_plus())]) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"description": ""}, ("P1", "description")),
        ({"description": "It does the thing with the data for you"}, ("P1", "description")),
        (
            {"input_schema": {"type": "object", "properties": {"x": {"type": "string"}}}},
            ("P1", "inputSchema.properties.x.description"),
        ),
        ({"requires_approval": False}, ("P2", "requires_approval")),
        ({"side_effects": None}, ("P2", "side_effects")),
        ({"side_effects": "read", "requires_approval": None}, ("P2", "requires_approval")),
        ({"failure_modes": None}, ("P3", "failure_modes")),
        (
            {"failure_modes": [{"error": "AuthError", "recovery": {"fallback": "nowhere"}}]},
            ("P3", "failure_modes[0].recovery.fallback"),
        ),
        (
            {"dependencies": [{"tool": "ghost", "relation": "Requires"}]},
            ("P4", "dependencies[0].tool"),
        ),
    ],
)
def test_each_rule_fails_on_bad_input(changes: dict[str, Any], expected: tuple[str, str]) -> None:
    tool = ToolPlus.from_mapping(clean_plus(**changes))
    assert expected in [(f.principle, f.field) for f in lint([tool])]


def test_p4_finds_an_undeclared_producer_and_accepts_either_declaration() -> None:
    producer = clean_plus(
        name="find_user",
        input_schema={
            "type": "object",
            "required": ["email"],
            "properties": {"email": {"type": "string", "description": "Email address of the user"}},
        },
        side_effects="read",
        requires_approval=False,
        output_schema={"type": "object", "properties": {"user_id": {"type": "string"}}},
    )
    consumer = clean_plus()
    plain = [ToolPlus.from_mapping(producer), ToolPlus.from_mapping(consumer)]
    assert one(list(plain)) == [("delete_user", "P4", "dependencies")]
    consumer_declares = clean_plus(dependencies=[{"tool": "find_user", "relation": "Requires"}])
    assert lint([plain[0], ToolPlus.from_mapping(consumer_declares)]) == []
    producer_declares = {
        **producer,
        "dependencies": [{"tool": "delete_user", "relation": "ProducesInputFor"}],
    }
    assert lint([ToolPlus.from_mapping(producer_declares), plain[1]]) == []


def test_p2_on_plain_mcp_tools_reads_the_annotations() -> None:
    from sim.calculus.mcp import Annotations

    def p2(ann: Annotations | None) -> list[str]:
        tool = Tool("t", "Reads the current weather for a city", {"type": "object"}, ann)
        return [f.field for f in lint([tool]) if f.principle == "P2"]

    assert p2(None) == ["annotations"]
    assert p2(Annotations(read_only=True)) == []
    assert p2(Annotations(read_only=False, destructive=False)) == ["requires_approval"]
    assert p2(Annotations(read_only=False)) == ["annotations.destructiveHint"]
    assert p2(Annotations(destructive=False)) == ["annotations.readOnlyHint", "requires_approval"]


def test_phi_plus_of_the_train_schema_lints_clean_but_for_one_short_description(
    services: tuple[Service, ...],
) -> None:
    plain = lint(phi_services(services))
    assert sorted({f.principle for f in plain}) == ["P1", "P2", "P3", "P4"]
    plus = lint(phi_services(services, plus=True))
    assert [str(f) for f in plus] == [
        "Music_1__LookupSong: P1 SemanticCompleteness: field description: 2 entities "
        "(search song) < 3: does not say what the tool acts on and why"
    ]


def test_finding_renders_tool_principle_field() -> None:
    f = Finding("t", "P2", "requires_approval", "missing")
    assert str(f) == "t: P2 WriteApproval: field requires_approval: missing"


REAL_LINT = {
    # file: (tools, findings, {principle: count})  -- reported in docs/calculus.md
    "everything.json": (13, 18, {"P1": 1, "P2": 4, "P3": 13}),
    "fetch.json": (1, 1, {"P3": 1}),
    "filesystem.json": (14, 36, {"P1": 18, "P2": 4, "P3": 14}),
    "git.json": (12, 40, {"P1": 23, "P2": 5, "P3": 12}),
    "github-official.json": (117, 177, {"P1": 1, "P2": 59, "P3": 117}),
    "github.json": (26, 103, {"P1": 51, "P2": 26, "P3": 26}),
    "memory.json": (9, 28, {"P1": 4, "P2": 6, "P3": 9, "P4": 9}),
    "time.json": (2, 2, {"P3": 2}),
}


@pytest.mark.parametrize("name", sorted(REAL_LINT))
def test_lint_counts_on_each_real_tool_list(shared_data: Path, name: str) -> None:
    from collections import Counter

    tools = load_tools(shared_data / "mcp_tools" / name)
    findings = lint(tools)
    counts = dict(sorted(Counter(f.principle for f in findings).items()))
    assert (len(tools), len(findings), counts) == REAL_LINT[name]
