"""The four principles P1–P4 as lint checks, and the calibration of θ on real descriptions."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sim.calculus.mcp import MCP_PLUS_META, Tool, ToolPlus, load_tools, tool_plus_from_mapping
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
        for t in json.loads(path.read_text())["tools"]:  # top-level properties only
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
    # 194 tools of the first 8 lists, then 41 of the 8 added by issue 32
    assert (len(tools), sum(d < DEFAULT_THETA for d in tools)) == (235, 0)
    assert len(props) > 735 and sum(d < DEFAULT_THETA for d in props) == 0
    short = [d for d in desc["mcp_tools"] if len(entities(d)) < DEFAULT_MIN_ENTITIES]
    assert sorted(short) == ["Create a new gist", "Navigate to a URL", "Switches branches"]


def test_lint_pins_findings_on_real_tool_lists(shared_data: Path) -> None:
    tools = shared_data / "mcp_tools"
    fs = lint(load_tools(tools / "filesystem.json"))
    assert ("write_file", "P2", "requires_approval") in [(f.tool, f.principle, f.field) for f in fs]
    github = [(f.tool, f.principle, f.field) for f in lint(load_tools(tools / "github.json"))]
    assert ("create_or_update_file", "P2", "annotations") in github
    assert (None, "P3", "failure_modes") in github  # one line for the list, not one per tool
    assert not any(t == "create_or_update_file" and p == "P3" for t, p, _ in github)
    git = lint(load_tools(tools / "git.json"))
    checkout = [f for f in git if f.tool == "git_checkout" and f.field == "description"]
    assert [str(f) for f in checkout] == [
        "git_checkout: P1 SemanticCompleteness: field description: 2 entities (switches "
        "branches) < 3: does not say what the tool acts on and why; to clear: description "
        "naming at least 3 entities (an action, its object, a qualifier)"
    ]
    memory = lint(load_tools(tools / "memory.json"))
    assert ("delete_entities", "P2", "requires_approval") in [
        (f.tool, f.principle, f.field) for f in memory
    ]
    # relations name entities, which only create_entities creates (nested from/to)
    assert ("create_relations", "create_entities") in [
        (f.tool, f.requires) for f in memory if f.principle == "P4"
    ]
    time_tools = lint(load_tools(tools / "time.json"))
    assert [(f.tool, f.principle, f.severity) for f in time_tools] == [(None, "P3", "note")]


def test_p4_on_the_real_lists_keeps_the_stated_dependencies(shared_data: Path) -> None:
    """The two dependencies real descriptions state are still reported with their sentence
    quoted; the alternatives they offer (``Use read_text_file instead``, ``Prefer this tool
    over assign_copilot_to_issue``) are none."""
    found = []
    for path in sorted((shared_data / "mcp_tools").glob("*.json")):
        if path.name != "MANIFEST.json":
            found += [str(f) for f in lint(load_tools(path)) if f.principle == "P4"]
    assert (
        "issue_write: P4 Dependencies: field dependencies: depends on list_issue_types, "
        "undeclared: issue_write's inputSchema.properties.type.description says \"Use "
        "list_issue_types to get valid type values for this repository or its owner "
        'organization."; to clear: dependencies: (list_issue_types, Requires) on issue_write '
        "or (issue_write, ProducesInputFor) on list_issue_types under "
        f'_meta["{MCP_PLUS_META}"] (MCP⁺; plain MCP cannot declare it)'
    ) in found
    assert any(
        f.startswith(
            "pull_request_review_write: P4 Dependencies: field dependencies: depends on "
            "pull_request_read, undeclared: "
        )
        and "Get thread IDs from pull_request_read with method get_review_comments." in f
        for f in found
    )
    assert not any("read_text_file" in f or "assign_copilot_to_issue," in f for f in found)


#: what a ``clear`` text may name: a descriptor field (SPEC §2) or an MCP annotation
CLEARING = (
    "description",
    "inputSchema.properties.",
    "side_effects",
    "requires_approval",
    "failure_modes",
    "dependencies",
    "annotations.readOnlyHint",
    "annotations.destructiveHint",
)


def test_every_finding_on_the_real_lists_says_what_clears_it(shared_data: Path) -> None:
    n = 0
    for path in sorted((shared_data / "mcp_tools").glob("*.json")):
        if path.name == "MANIFEST.json":
            continue
        for f in lint(load_tools(path)):
            n += 1
            assert f.clear.startswith(CLEARING), str(f)
            assert str(f).endswith(f"; to clear: {f.clear}")
    assert n == sum(total for _, total, _ in REAL_LINT.values())


def test_unannotated_tools_say_the_spec_defaults_apply_and_which_hint_clears_them(
    shared_data: Path,
) -> None:
    """github.json carries no annotations: a read-only tool (``get_file_contents``) gets a
    note (not a finding) naming ``readOnlyHint: true``; with that hint the note goes."""
    tools = load_tools(shared_data / "mcp_tools" / "github.json")
    get = next(t for t in tools if t.name == "get_file_contents")
    assert isinstance(get, Tool) and get.annotations is None
    (p2,) = [f for f in lint([get]) if f.principle == "P2"]
    assert (p2.field, p2.severity) == ("annotations.readOnlyHint", "note")
    assert "the spec's default readOnlyHint: false would make it a write" in p2.message
    assert p2.clear.startswith("annotations.readOnlyHint: true if the tool only reads")
    from sim.calculus.mcp import Annotations

    cleared = replace(get, annotations=Annotations(read_only=True))
    assert [f for f in lint([cleared]) if f.principle == "P2"] == []


def test_a_one_word_description_violates_p1() -> None:
    tool = Tool("go", "Switches", {"type": "object"}, None)
    findings = [f for f in lint([tool]) if f.principle == "P1"]
    assert [f.field for f in findings] == ["description"]
    assert "1 entity" in findings[0].message


def test_a_clean_mcp_plus_list_has_no_findings() -> None:
    assert lint([tool_plus_from_mapping(clean_plus())]) == []


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
    tool = tool_plus_from_mapping(clean_plus(**changes))
    assert expected in [(f.principle, f.field) for f in lint([tool])]


def _pair(consumer: dict[str, Any], producer: dict[str, Any]) -> list[ToolPlus]:
    return [tool_plus_from_mapping(producer), tool_plus_from_mapping(consumer)]


FIND_USER = clean_plus(
    name="find_user",
    description="Finds the user account registered under an email address",
    input_schema={
        "type": "object",
        "required": ["email"],
        "properties": {"email": {"type": "string", "description": "Email address of the user"}},
    },
    side_effects="read",
    requires_approval=False,
    output_schema={"type": "object", "properties": {"user_id": {"type": "string"}}},
)


def _consumer(user_id_description: str, **changes: Any) -> dict[str, Any]:
    schema = {
        "type": "object",
        "required": ["user_id"],
        "properties": {"user_id": {"type": "string", "description": user_id_description}},
    }
    return clean_plus(input_schema=schema, **changes)


def test_p4_an_id_only_one_tool_outputs_is_data_flow_a_shared_plain_name_is_not() -> None:
    """find_user alone outputs the identifier ``user_id`` that delete_user requires: data
    flow (issue 32); a shared name that is no identifier (``email``) is no evidence."""
    (f,) = lint(_pair(_consumer("Account identifier of the user"), FIND_USER))
    assert (f.tool, f.principle, f.requires) == ("delete_user", "P4", "find_user")
    assert "input user_id refers to find_user's output 'user_id'" in f.message
    email = {**FIND_USER, "output_schema": {"type": "object", "properties": {"email": {}}}}
    assert lint(_pair(_consumer("Account identifier of the user"), email)) == []


@pytest.mark.parametrize(
    ("consumer", "producer", "kind"),
    [
        # schema and description: the input is find_user's output and names find_user
        (_consumer("Account identifier, see find_user"), FIND_USER, "schema"),
        # schema, the only producer, described as coming from an earlier call
        (_consumer("Account identifier returned by the lookup"), FIND_USER, "schema"),
        # stated in the consumer's description, no output schema needed
        (
            _consumer(
                "Account identifier of the user",
                description="Permanently deletes a user account; call find_user first",
            ),
            {**FIND_USER, "output_schema": None},
            "stated",
        ),
        (
            _consumer("Account identifier obtained from `find_user`"),
            {**FIND_USER, "output_schema": None},
            "stated",
        ),
        # stated by the producer: its output feeds the consumer
        (
            _consumer("Account identifier of the user"),
            {
                **FIND_USER,
                "output_schema": None,
                "description": "Finds a user account by email; pass its id to delete_user",
            },
            "stated",
        ),
    ],
)
def test_p4_reports_an_evidenced_dependency_with_the_evidence_quoted(
    consumer: dict[str, Any], producer: dict[str, Any], kind: str
) -> None:
    from sim.calculus.evidence import dependency_evidence

    tools = _pair(consumer, producer)
    (ev,) = dependency_evidence(tools)
    assert (ev.consumer, ev.producer, ev.kind) == ("delete_user", "find_user", kind)
    (f,) = lint(tools)
    assert (f.tool, f.principle, f.field) == ("delete_user", "P4", "dependencies")
    assert f'says "{ev.quote}"' in f.message and ev.quote
    assert f.clear == (
        "dependencies: (find_user, Requires) on delete_user or (delete_user, ProducesInputFor) "
        "on find_user"
    )
    # either declaration clears it
    requires = [{"tool": "find_user", "relation": "Requires"}]
    assert lint(_pair({**consumer, "dependencies": requires}, producer)) == []
    feeds = [{"tool": "delete_user", "relation": "ProducesInputFor"}]
    assert lint(_pair(consumer, {**producer, "dependencies": feeds})) == []


@pytest.mark.parametrize(
    "text",
    [
        "Permanently deletes a user account; use find_user instead",
        "Permanently deletes a user account. Prefer this tool over find_user",
        "Permanently deletes a user account (deprecated: find_user does it)",
        "Permanently deletes a user account, unlike find_user",  # a mention without a cue
        "Permanently deletes a user account; delete_user_from_find_user is gone",  # no word
    ],
)
def test_p4_alternatives_and_bare_mentions_are_no_evidence(text: str) -> None:
    producer = {**FIND_USER, "output_schema": None}
    assert lint(_pair(_consumer("Account identifier", description=text), producer)) == []


def test_p4_schema_evidence_of_a_non_unique_producer_needs_the_name() -> None:
    """Two tools output ``user_id``: "returned by the lookup" does not say which one."""
    other = {**FIND_USER, "name": "find_admin"}
    tools = [tool_plus_from_mapping(e) for e in (FIND_USER, other)]
    consumer = tool_plus_from_mapping(_consumer("Account identifier returned by the lookup"))
    assert [f for f in lint([*tools, consumer]) if f.principle == "P4"] == []
    named = tool_plus_from_mapping(_consumer("Account identifier returned by find_admin"))
    assert [(f.tool, f.message.split(",")[0]) for f in lint([*tools, named])] == [
        ("delete_user", "depends on find_admin")
    ]


def test_p4_on_plain_mcp_tools_says_the_dependency_goes_under_the_mcp_plus_key() -> None:
    producer = Tool("find_user", "Finds the user account of an email address", {"type": "object"})
    consumer = Tool(
        "delete_user",
        "Permanently deletes a user account found by find_user",
        {"type": "object"},
    )
    (f,) = [f for f in lint([producer, consumer]) if f.principle == "P4"]
    assert f.tool == "delete_user"
    assert f.clear.endswith(f'under _meta["{MCP_PLUS_META}"] (MCP⁺; plain MCP cannot declare it)')


def test_p3_one_line_for_plain_mcp_tools_one_per_mcp_plus_tool_without_failure_modes() -> None:
    plain = [Tool(f"read_{i}", "Reads the stored weather report of a city", {}) for i in range(3)]
    silent = tool_plus_from_mapping(clean_plus(failure_modes=None))
    none = tool_plus_from_mapping(clean_plus(name="purge_user", failure_modes=[]))
    p3 = [f for f in lint([*plain, silent, none]) if f.principle == "P3"]
    assert [(f.tool, f.field) for f in p3] == [
        ("delete_user", "failure_modes"),  # MCP⁺, declares none: its own finding
        (None, "failure_modes"),  # plain MCP cannot say: one line for the list
    ]
    assert p3[0].message.startswith("not declared by this MCP⁺ tool")
    assert p3[1].message.startswith("plain MCP cannot carry failure modes")
    assert "3 of 5 tools are plain MCP" in p3[1].message
    assert "read_0, read_1, read_2" in p3[1].message
    assert str(p3[1]).startswith("tools/list: P3 FailureModes (note): field failure_modes: ")
    assert [f for f in lint([none]) if f.principle == "P3"] == []  # [] declares "none known"


def test_p2_on_plain_mcp_tools_reads_the_annotations() -> None:
    from sim.calculus.mcp import Annotations

    def p2(ann: Annotations | None) -> list[str]:
        tool = Tool("t", "Reads the current weather for a city", {"type": "object"}, ann)
        return [f.field for f in lint([tool]) if f.principle == "P2"]

    # "Reads the current weather": no write verb, so every unsettled case is a note
    assert p2(None) == ["annotations.readOnlyHint"]
    assert p2(Annotations(read_only=True)) == []
    assert p2(Annotations(read_only=False, destructive=False)) == ["annotations.readOnlyHint"]
    assert p2(Annotations(destructive=True)) == ["requires_approval"]  # declared destructive
    assert p2(Annotations(destructive=False)) == ["annotations.readOnlyHint"]


def test_phi_plus_of_the_train_schema_lints_clean_but_for_one_short_description(
    services: tuple[Service, ...],
) -> None:
    plain = lint(phi_services(services))
    assert sorted({f.principle for f in plain}) == ["P1", "P2", "P3", "P4"]
    assert [f.tool for f in plain if f.principle == "P3"] == [None]
    plus = lint(phi_services(services, plus=True))
    assert [(f.tool, f.principle, f.field) for f in plus] == [
        ("Music_1__LookupSong", "P1", "description")  # "Search for a song": 2 entities
    ]


def test_finding_renders_tool_principle_field() -> None:
    f = Finding("t", "P2", "requires_approval", "missing", "requires_approval: true")
    assert str(f) == (
        "t: P2 WriteApproval: field requires_approval: missing; to clear: requires_approval: true"
    )


REAL_LINT = {
    # file: (tools, findings and notes, {principle: count})  -- reported in docs/calculus.md
    "brave-search.json": (2, 3, {"P2": 2, "P3": 1}),
    "everything.json": (13, 6, {"P1": 1, "P2": 4, "P3": 1}),
    "fetch.json": (1, 1, {"P3": 1}),
    "filesystem.json": (14, 23, {"P1": 18, "P2": 4, "P3": 1}),
    "git.json": (12, 29, {"P1": 23, "P2": 5, "P3": 1}),
    "github-official.json": (117, 96, {"P1": 1, "P2": 59, "P3": 1, "P4": 35}),
    "github.json": (26, 84, {"P1": 53, "P2": 26, "P3": 1, "P4": 4}),
    "google-maps.json": (7, 13, {"P1": 4, "P2": 7, "P3": 1, "P4": 1}),
    "memory.json": (9, 17, {"P1": 4, "P2": 6, "P3": 1, "P4": 6}),
    "pdf.json": (9, 22, {"P1": 10, "P2": 9, "P3": 1, "P4": 2}),
    "postgres.json": (1, 3, {"P1": 1, "P2": 1, "P3": 1}),
    "puppeteer.json": (7, 9, {"P1": 1, "P2": 7, "P3": 1}),
    "sequential-thinking.json": (1, 1, {"P3": 1}),
    "slack.json": (8, 18, {"P2": 8, "P3": 1, "P4": 9}),
    "sqlite.json": (6, 8, {"P2": 6, "P3": 1, "P4": 1}),
    "time.json": (2, 1, {"P3": 1}),
}


@pytest.mark.parametrize("name", sorted(REAL_LINT))
def test_lint_counts_on_each_real_tool_list(shared_data: Path, name: str) -> None:
    from collections import Counter

    tools = load_tools(shared_data / "mcp_tools" / name)
    findings = lint(tools)
    counts = dict(sorted(Counter(f.principle for f in findings).items()))
    assert (len(tools), len(findings), counts) == REAL_LINT[name]
