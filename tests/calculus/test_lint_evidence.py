"""The evidence-first rules of lint (issue 32): P2 finding vs note, P4 from data flow, P1 in
nested schemas, P3 once per list, ``--json``; each fires on a bad descriptor and stays silent
on a good one, and invariants over any schema-shaped input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.calculus.mcp import Annotations, Tool, ToolPlus, load_tools, tools_to_list
from sim.calculus.principles import FINDING, NOTE, Finding, lint
from sim.calculus.schemas import properties
from sim.cli import main

SCHEMA: dict[str, Any] = {"type": "object"}


def channel_list() -> Tool:
    return Tool("chat_list_channels", "List the public channels of the workspace", SCHEMA)


def post_message(channel_description: str = "The ID of the channel to post to") -> Tool:
    schema = {
        "type": "object",
        "properties": {
            "channel_id": {"type": "string", "description": channel_description},
            "text": {"type": "string", "description": "The message text to post"},
        },
    }
    return Tool("chat_post_message", "Post a new message to a chat channel", schema)


def p2(tools: list[Tool]) -> list[tuple[str | None, str, str, str]]:
    return [(f.tool, f.severity, f.field, f.message) for f in lint(tools) if f.principle == "P2"]


def test_p2_a_write_looking_undeclared_tool_is_a_finding_with_its_evidence() -> None:
    assert p2([post_message()]) == [
        (
            "chat_post_message",
            FINDING,
            "annotations",
            "looks like a write and is not marked (no annotations): verb 'post' in the name; "
            "argument text carries what it would store",
        )
    ]


def test_p2_an_undeclared_reader_is_a_note_naming_the_settling_annotation() -> None:
    (f,) = [f for f in lint([channel_list()]) if f.principle == "P2"]
    assert (f.severity, f.field) == (NOTE, "annotations.readOnlyHint")
    assert f.message.startswith("declares nothing (no annotations;")
    assert f.clear.startswith("annotations.readOnlyHint: true if the tool only reads")
    said = Tool("query", "Run a read-only SQL query", SCHEMA)
    assert p2([said])[0][1:3] == (NOTE, "annotations.readOnlyHint")
    assert "'read-only'" in p2([said])[0][3]


def test_p2_a_declared_write_needs_evidence_to_be_a_finding() -> None:
    toggle = Tool(
        "toggle-logging",
        "Toggles simulated logging on or off",
        SCHEMA,
        Annotations(read_only=False, destructive=False),
    )
    assert p2([toggle])[0][1:3] == (NOTE, "annotations.readOnlyHint")
    add = Tool("git_add", "Adds file contents to the staging area", SCHEMA, toggle.annotations)
    assert p2([add]) == [
        (
            "git_add",
            FINDING,
            "requires_approval",
            "declares a write (annotations.readOnlyHint: false; verb 'add' in the name) and MCP "
            "cannot say whether it needs approval",
        )
    ]
    reset = Tool("git_reset", "Unstages all staged changes", SCHEMA, Annotations(destructive=True))
    assert p2([reset])[0][1:3] == (FINDING, "requires_approval")
    reader = Tool("git_status", "Shows the working tree status", SCHEMA, Annotations(True))
    assert p2([reader]) == []


def test_p2_mcp_plus_without_side_effects_a_finding_only_if_it_looks_like_a_write() -> None:
    def plus(name: str, description: str) -> ToolPlus:
        return ToolPlus(name, description, SCHEMA, requires_approval=False, failure_modes=())

    (f,) = [f for f in lint([plus("delete_user", "Deletes a user account")]) if f.principle == "P2"]
    assert (f.severity, f.field) == (FINDING, "side_effects")
    assert f.message == "not declared, and it looks like a write: verb 'delete' in the name"
    (n,) = [f for f in lint([plus("find_user", "Finds a user account")]) if f.principle == "P2"]
    assert (n.severity, n.field, n.clear) == (
        NOTE,
        "side_effects",
        "side_effects: none|read|write|delete",
    )


def test_p2_an_argument_that_is_code_it_runs_is_evidence_of_a_write() -> None:
    script = {"type": "object", "properties": {"script": {"type": "string"}}}
    run = Tool("browser_evaluate", "Evaluate JavaScript in the browser console", script)
    assert p2([run]) == [
        (
            "browser_evaluate",
            FINDING,
            "annotations",
            "looks like a write and is not marked (no annotations): argument 'script' (code it "
            "runs can write anything)",
        )
    ]
    query = {"type": "object", "properties": {"query": {"type": "string"}}}
    assert p2([Tool("read_query", "Execute a SELECT query", query)])[0][1] == NOTE


def test_p2_a_read_verb_in_the_name_wins_over_an_object_that_looks_like_a_verb() -> None:
    for name in ("get_commit", "pull_request_read", "projects_list"):
        assert p2([Tool(name, "Details of one item of the hosting service", SCHEMA)])[0][1] == NOTE
    assert p2([Tool("write_query", "Run an INSERT query on the database", SCHEMA)])[0][1] == (
        FINDING
    )


def test_p4_an_id_only_another_tool_lists_is_a_dependency_with_requires() -> None:
    (f,) = [f for f in lint([channel_list(), post_message()]) if f.principle == "P4"]
    assert (f.tool, f.severity, f.requires, f.field) == (
        "chat_post_message",
        FINDING,
        "chat_list_channels",
        "dependencies",
    )
    assert f.message == (
        "depends on chat_list_channels, undeclared: input channel_id refers to a channel, which "
        "only chat_list_channels reports or creates (its name 'chat_list_channels'); "
        "chat_post_message's inputSchema.properties.channel_id.description says \"The ID of "
        'the channel to post to"'
    )
    assert f.to_json()["requires"] == "chat_list_channels"


def test_p4_no_dependency_without_a_sole_producer_or_for_an_optional_input() -> None:
    assert [f for f in lint([post_message()]) if f.principle == "P4"] == []
    twin = Tool("chat_search_channels", "Search the channels of the workspace", SCHEMA)
    assert [f for f in lint([channel_list(), twin, post_message()]) if f.principle == "P4"] == []
    optional = post_message("Optional ID of the channel to post to")
    assert [f for f in lint([channel_list(), optional]) if f.principle == "P4"] == []


def test_p4_a_stated_precondition_depends_on_the_creator() -> None:
    create = Tool("create_review", "Create a pending review of a change", SCHEMA)
    add = Tool(
        "add_review_comment",
        "Add a comment to the pending review. A pending review needs to already exist.",
        SCHEMA,
    )
    (f,) = [f for f in lint([create, add]) if f.principle == "P4"]
    assert (f.tool, f.requires) == ("add_review_comment", "create_review")
    assert "a pending review needs to already exist" in f.message.lower()


def test_p4_a_pending_thing_in_the_first_sentence_needs_its_creator() -> None:
    create = Tool("create_order", "Create an order; it stays pending until submitted", SCHEMA)
    submit = Tool("submit_pending_order", "Submit a pending order.", SCHEMA)
    (f,) = [f for f in lint([create, submit]) if f.principle == "P4"]
    assert (f.tool, f.requires) == ("submit_pending_order", "create_order")
    later = Tool("submit_order", "Submit an order. Orders start pending.", SCHEMA)
    assert [f for f in lint([create, later]) if f.principle == "P4"] == []


def test_p4_a_type_input_needs_the_tool_that_lists_those_types_and_a_created_name_none() -> None:
    types = Tool("list_issue_types", "List the supported issue types of the tracker", SCHEMA)

    def setter(slot: str) -> Tool:
        schema = {"type": "object", "properties": {slot: {"type": "string"}}}
        return Tool("set_field", "Sets a field of a tracked issue", schema)

    assert [f.requires for f in lint([types, setter("issue_type")]) if f.principle == "P4"] == [
        "list_issue_types"
    ]
    assert [f for f in lint([types, setter("owner_type")]) if f.principle == "P4"] == []
    named = {"type": "object", "properties": {"name": {"description": "The name of the table"}}}
    tables = Tool("list_tables", "List all tables of the database", SCHEMA)
    create = Tool("create_table", "Create a new table in the database", named)
    assert [f for f in lint([tables, create]) if f.principle == "P4"] == []
    describe = Tool("describe_table", "Shows the columns of one table", named)
    assert [f.requires for f in lint([tables, describe]) if f.principle == "P4"] == ["list_tables"]


NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "filter": {
            "type": "object",
            "description": "Which commits of the repository to show",
            "properties": {"since": {"type": "string"}},
        },
        "edits": {
            "type": "array",
            "description": "Line edits applied to the file in order",
            "items": {"type": "object", "properties": {"old": {"type": "string"}}},
        },
        "target": {
            "description": "Branch name or commit hash to compare with",
            "anyOf": [{"type": "object", "properties": {"ref": {"type": "string"}}}],
        },
    },
    "$defs": {"Edit": {"type": "object", "properties": {"new": {"type": "string"}}}},
}


def test_p1_descends_into_nested_objects_array_items_branches_and_defs() -> None:
    tool = Tool("git_log", "Shows the commit logs of a local git repository", NESTED)
    fields = [f.field for f in lint([tool]) if f.principle == "P1"]
    assert fields == [
        "inputSchema.properties.filter.properties.since.description",
        "inputSchema.properties.edits.items.properties.old.description",
        "inputSchema.properties.target.anyOf[0].properties.ref.description",
        "inputSchema.$defs.Edit.properties.new.description",
    ]
    described = json.loads(
        json.dumps(NESTED).replace(
            '"type": "string"}',
            '"type": "string", "description": "Commit hash or date of the repository history"}',
        )
    )
    assert [
        f for f in lint([Tool("git_log", tool.description, described)]) if f.principle == "P1"
    ] == []


def test_p3_one_note_for_the_plain_mcp_list() -> None:
    (f,) = [f for f in lint([channel_list(), post_message()]) if f.principle == "P3"]
    assert (f.tool, f.severity, f.field) == (None, NOTE, "failure_modes")
    assert f.message.startswith("plain MCP cannot carry failure modes")
    assert "2 of 2 tools are plain MCP: chat_list_channels, chat_post_message" in f.message


def test_lint_json_prints_one_object_per_item_and_exits_by_findings(
    tmp_path: Path, capsys: Any
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools_to_list([channel_list()])), encoding="utf-8")
    assert main(["lint", "--json", str(path)]) == 0  # notes alone
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [set(r) for r in rows] == [
        {"tool", "principle", "severity", "field", "evidence", "clear"}
    ] * 2
    assert [r["severity"] for r in rows] == [NOTE, NOTE]
    assert err.strip() == "clean: 1 tools, no findings, 2 notes"
    path.write_text(json.dumps(tools_to_list([channel_list(), post_message()])), encoding="utf-8")
    assert main(["lint", "--json", str(path)]) == 1
    rows = [json.loads(line) for line in capsys.readouterr()[0].splitlines()]
    (p4,) = [r for r in rows if r["principle"] == "P4"]
    assert p4["requires"] == "chat_list_channels" and p4["severity"] == FINDING


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "properties", "items", "anyOf", "$defs", "description", "x"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
_words = st.sampled_from(
    ["get", "list", "create", "post", "channel", "channels", "ID", "of", "the", "id", "_"]
)
_text = st.lists(_words, max_size=8).map(" ".join)


@st.composite
def _tools(draw: st.DrawFn) -> list[Tool]:
    n = draw(st.integers(0, 4))
    out = []
    for i in range(n):
        schema = {"type": "object", "properties": draw(st.dictionaries(_text, _json, max_size=3))}
        out.append(Tool(f"t{i}_{draw(_text).replace(' ', '_')}", draw(_text), schema))
    return out


@settings(max_examples=30, deadline=None)
@given(_tools())
def test_lint_never_raises_and_is_deterministic(tools: list[Tool]) -> None:
    first = lint(tools)
    assert all(isinstance(f, Finding) and f.severity in (FINDING, NOTE) for f in first)
    assert lint(tools) == first
    for t in tools:
        list(properties(t.input_schema, "inputSchema"))


def _copy(tools: list[Tool], prefix: str) -> list[Tool]:
    """``tools`` renamed ``prefix + name``, every mention of a name in a text renamed too."""
    names = sorted((t.name for t in tools), key=len, reverse=True)
    if not names:
        return []
    mention = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    out = []
    for t in tools:
        entry = json.loads(mention.sub(lambda m: prefix + m.group(1), json.dumps(t.to_json())))
        out.append(
            Tool(
                entry["name"],
                entry.get("description", ""),
                entry["inputSchema"],
                t.annotations,
                entry.get("outputSchema"),
            )
        )
    return out


def _swap(name: str | None) -> str | None:
    if name is None:
        return None
    return ("b_" if name.startswith("a_") else "a_") + name[2:]


@settings(max_examples=20, deadline=None)
@given(_tools())
def test_a_list_with_a_renamed_copy_has_exactly_twice_the_items(tools: list[Tool]) -> None:
    """Renamed copies (``a_``/``b_``, two namespaces) never depend on each other: every item
    of the tools doubles exactly, each with its mirror; the list keeps one P3 note."""
    if len({t.name for t in tools}) < len(tools):
        return
    _assert_doubles(tools)


def _assert_doubles(tools: list[Tool]) -> None:
    once = [f for f in lint(_copy(tools, "a_")) if f.tool is not None]
    both = lint(_copy(tools, "a_") + _copy(tools, "b_"))
    per_tool = [f for f in both if f.tool is not None]
    assert len(per_tool) == 2 * len(once)
    mirrored = {(_swap(f.tool), f.principle, f.field, _swap(f.requires)) for f in per_tool}
    assert mirrored == {(f.tool, f.principle, f.field, f.requires) for f in per_tool}
    assert sum(f.tool is None for f in both) == (1 if tools else 0)


def test_real_lists_with_a_renamed_copy_have_exactly_twice_the_items(shared_data: Path) -> None:
    for path in sorted((shared_data / "mcp_tools").glob("*.json")):
        if path.stem != "MANIFEST":
            tools = load_tools(path)
            assert all(isinstance(t, Tool) for t in tools)
            _assert_doubles([t for t in tools if isinstance(t, Tool)])
