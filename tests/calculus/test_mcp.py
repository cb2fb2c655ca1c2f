"""The MCP/MCP⁺ calculus: descriptors, tools/list I/O, caller views and tool LTSs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sim.calculus.lts import TAU, accepts, read_aut, traces, write_aut
from sim.calculus.mcp import (
    PROTOCOL_FIELDS,
    Abort,
    Dependency,
    FailureMode,
    Fallback,
    Relation,
    Retry,
    SideEffect,
    Tool,
    ToolPlus,
    ToolsListError,
    UserPrompt,
    caller_view,
    excluders,
    knowledge,
    load_tools,
    tool_lts,
    tool_plus_from_mapping,
    tools_from_list,
    tools_to_list,
)

BOOK_TRAIN: dict[str, Any] = {
    "name": "book_train",
    "description": "Books a train ticket from an origin to a destination at a date and class.",
    "input_schema": {
        "type": "object",
        "required": ["from", "to", "date"],
        "properties": {
            "from": {"type": "string"},
            "to": {"type": "string"},
            "date": {"type": "string"},
            "class": {"type": "string", "enum": ["economy", "business"]},
        },
    },
    "side_effects": "write",
    "requires_approval": True,
    "annotations": {"readOnlyHint": False, "destructiveHint": False},
    "failure_modes": [
        {"error": "ServiceDown", "recovery": {"retry": 3}},
        {"error": "NotFound", "recovery": {"prompt": "Station unknown. Choose another?"}},
        {"error": "AuthError", "recovery": {"fallback": "use_cached_data"}},
    ],
    "dependencies": [{"tool": "check_balance", "relation": "Requires"}],
    "service_time": {"dist": "exponential", "mean": 0.2},
    "errors": {"ServiceDown": 0.02},
}


@pytest.fixture(scope="module")
def list_validator(shared_data: Path) -> Any:
    """A validator of a 2025-11-25 ``ListToolsResult`` (the schema checked once: as
    ``jsonschema.validate`` does on every call)."""
    spec = json.loads((shared_data / "mcp_spec" / "schema-2025-11-25.json").read_text())
    schema = {"$ref": "#/$defs/ListToolsResult", "$defs": spec["$defs"]}
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def _validate_tools_list(result: Any, validator: Any) -> None:
    validator.validate(result)


def test_from_mapping_reads_the_scenario_tool_shape() -> None:
    tool = tool_plus_from_mapping(BOOK_TRAIN)
    assert tool.side_effects is SideEffect.WRITE and tool.requires_approval is True
    assert tool.failure_modes == (
        FailureMode("ServiceDown", Retry(3)),
        FailureMode("NotFound", UserPrompt("Station unknown. Choose another?")),
        FailureMode("AuthError", Fallback("use_cached_data")),
    )
    assert tool.dependencies == (Dependency("check_balance", Relation.REQUIRES),)
    assert tool.annotations is not None and tool.annotations.effective("openWorldHint")
    assert tool_plus_from_mapping(tool.to_mapping()) == tool


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("side_effects", "maybe", "$.side_effects"),
        ("requires_approval", "yes", "$.requires_approval"),
        ("failure_modes", [{"error": "X", "recovery": {"retry": -1}}], "failure_modes[0].recovery"),
        ("failure_modes", [{"error": "X", "recovery": {"a": 1, "b": 2}}], "failure_modes[0]"),
        ("dependencies", [{"tool": "x", "relation": "Likes"}], "dependencies[0].relation"),
        ("annotations", {"readOnlyHint": "no"}, "annotations.readOnlyHint"),
        ("input_schema", {"type": "array"}, "input_schema.type"),
        ("name", "", "$.name"),
    ],
)
def test_from_mapping_errors_name_the_field(key: str, value: Any, path: str) -> None:
    bad = {**BOOK_TRAIN, key: value}
    with pytest.raises(ToolsListError) as info:
        tool_plus_from_mapping(bad)
    assert path in str(info.value)


def test_tools_list_round_trip_is_spec_valid(list_validator: Any) -> None:
    plus = tool_plus_from_mapping(BOOK_TRAIN)
    plain = Tool("echo", "Echoes back the input string", {"type": "object"})
    result = tools_to_list([plus, plain])
    _validate_tools_list(result, list_validator)
    assert result["tools"][0]["_meta"]["protomesh/mcp-plus"]["requires_approval"] is True
    back = tools_from_list(json.loads(json.dumps(result)))
    assert back[1] == plain
    assert isinstance(back[0], ToolPlus) and back[0].failure_modes == plus.failure_modes


def test_real_tool_lists_load(shared_data: Path, list_validator: Any) -> None:
    total = 0
    for path in sorted((shared_data / "mcp_tools").glob("*.json")):
        if path.name == "MANIFEST.json":
            continue
        tools = load_tools(path)
        assert all(isinstance(t, Tool) for t in tools)
        _validate_tools_list(tools_to_list(tools), list_validator)
        total += len(tools)
    assert total == 235  # 194 of 8 servers, then 41 of 8 more (issue 32)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ([], "$"),
        ({"tools": [3]}, "$.tools[0]"),
        ({"tools": [{"name": "x"}]}, "$.tools[0].inputSchema"),
        (
            {"tools": [{"name": "x", "inputSchema": {"type": "object"}, "_meta": 1}]},
            "$.tools[0]._meta",
        ),
    ],
)
def test_tools_from_list_rejects_bad_shapes(data: Any, path: str) -> None:
    with pytest.raises(ToolsListError) as info:
        tools_from_list(data)
    assert str(info.value).startswith(path)


def test_caller_view_follows_spec_section_2() -> None:
    truth = tool_plus_from_mapping(BOOK_TRAIN)
    assert caller_view(truth, PROTOCOL_FIELDS["MCP+"]).approval_reason == "requires_approval"
    sgd = caller_view(truth, PROTOCOL_FIELDS["SGD"])
    assert sgd.approval and sgd.descriptor.annotations is None
    mcp = caller_view(truth, PROTOCOL_FIELDS["MCP"], "hints")
    assert mcp.approval and mcp.descriptor.failure_modes is None
    assert mcp.approval_reason == "mcp_policy=hints, readOnlyHint=False"
    assert not caller_view(truth, PROTOCOL_FIELDS["MCP"], "never").approval
    a2a = caller_view(truth, PROTOCOL_FIELDS["A2A"], "hints")
    assert a2a.approval and a2a.descriptor.input_schema is None  # no hints: default false
    no_rq = tool_plus_from_mapping({**BOOK_TRAIN, "requires_approval": None})
    assert caller_view(no_rq).approval_reason == "side_effects=write"
    read_only = {**BOOK_TRAIN, "annotations": {"readOnlyHint": True}}
    assert not caller_view(tool_plus_from_mapping(read_only), PROTOCOL_FIELDS["MCP"]).approval
    with pytest.raises(ValueError):
        caller_view(truth, {"colour"})
    with pytest.raises(ValueError):
        caller_view(truth, PROTOCOL_FIELDS["MCP"], "sometimes")


def test_tool_lts_of_an_mcp_plus_tool_has_the_gate_and_recoveries() -> None:
    lts = tool_lts(tool_plus_from_mapping(BOOK_TRAIN), error_types=())
    call, ok = "call(book_train)", ["execute(book_train)", "result(book_train)"]
    assert accepts(lts, [call, "approve(book_train)", *ok])
    assert not accepts(lts, [call, *ok])
    assert accepts(lts, [call, "deny(book_train)"])
    validating = lts.step(0, call)
    assert validating is not None and lts.step(validating, TAU) is not None
    fail = [call, "approve(book_train)", "execute(book_train)", "error(book_train,ServiceDown)"]
    retry = [*fail[1:], "retry(book_train)"]
    assert accepts(lts, [fail[0], *retry * 3, *fail[1:], "abort(book_train)"])
    assert not accepts(lts, [fail[0], *retry * 4])
    assert accepts(
        lts, [*fail[:3], "error(book_train,AuthError)", "fallback(book_train,use_cached_data)"]
    )
    assert accepts(lts, [*fail[:3], "error(book_train,NotFound)", "prompt(book_train)"])


TWO_SLOTS: dict[str, Any] = {
    "name": "book",
    "input_schema": {
        "type": "object",
        "required": ["city", "date"],
        "properties": {"city": {}, "date": {}, "note": {}},
    },
    "side_effects": "write",
    "requires_approval": True,
    "failure_modes": [{"error": "ServiceDown", "recovery": {"retry": 1}}],
}


def test_sgd_dialect_collects_any_in_order_subset_of_the_required_inputs() -> None:
    lts = tool_lts(tool_plus_from_mapping(TWO_SLOTS), error_types=(), dialect="sgd")
    ok = ["approve(book)", "execute(book)", "result(book)"]
    collects = ["collect(city)", "collect(date)"]
    for subset in ([], ["collect(city)"], ["collect(date)"], collects):
        assert accepts(lts, ["invoke(book)", *subset, *ok], weak=False), subset
    assert not accepts(lts, ["invoke(book)", "collect(date)", "collect(city)", *ok])
    assert not accepts(lts, ["invoke(book)", "collect(city)", "collect(city)", *ok])
    # optional inputs: collected anywhere in the collecting phase (SGD dialogues do; the
    # engine's callers never do), never after the gate
    assert accepts(lts, ["invoke(book)", "collect(note)", "collect(city)", "collect(note)", *ok])
    assert accepts(lts, ["invoke(book)", *collects, "collect(note)", *ok])
    assert not accepts(lts, ["invoke(book)", "approve(book)", "collect(note)"])
    assert not accepts(lts, ["invoke(book)", "collect(nope)", *ok])
    assert not accepts(lts, ["call(book)", *ok])
    assert TAU not in lts.labels  # no validation, no silent skips
    assert not any("ValidationError" in t.label for t in lts.transitions)
    # the approval gate: the trace vocabulary's approve/deny (SGD confirm), after collecting
    assert accepts(lts, ["invoke(book)", "collect(city)", "deny(book)"])
    assert not accepts(lts, ["invoke(book)", *collects, "execute(book)"])
    assert not accepts(lts, ["invoke(book)", "approve(book)", "collect(city)"])
    # all maximal successful traces: invoke, an in-order subset of collects, the gate, ...
    full = {t for t in traces(lts, 6) if t and t[-1] == "result(book)" and "collect(note)" not in t}
    assert full == {
        ("invoke(book)", *sub, *ok) for sub in ((), ("collect(city)",), ("collect(date)",))
    } | {("invoke(book)", *collects, *ok)}


def test_sgd_dialect_recovers_like_the_mcp_dialect() -> None:
    lts = tool_lts(tool_plus_from_mapping(TWO_SLOTS), error_types=(), dialect="sgd")
    run = ["approve(book)", "execute(book)", "error(book,ServiceDown)"]
    start = ["invoke(book)", "collect(date)"]
    # retry goes back to the approval gate (not to collecting): ask again, once
    assert accepts(lts, [*start, *run, "retry(book)", *run[:2], "result(book)"])
    assert not accepts(lts, [*start, *run, "retry(book)", "collect(city)"])
    assert not accepts(lts, [*start, *run, "retry(book)", *run, "retry(book)"])
    assert accepts(lts, [*start, *run, "retry(book)", *run, "abort(book)"])
    ungated = tool_lts(tool_plus_from_mapping(TWO_SLOTS), approval=False, dialect="sgd")
    assert accepts(ungated, ["invoke(book)", "execute(book)", "result(book)"])
    assert accepts(ungated, ["invoke(book)", "collect(city)", "execute(book)", "result(book)"])
    with pytest.raises(ValueError, match="not 'smoke-signal'"):
        tool_lts(tool_plus_from_mapping(TWO_SLOTS), dialect="smoke-signal")


def test_sgd_dialect_exports_to_aut_and_the_mcp_dialect_is_the_default() -> None:
    tool = tool_plus_from_mapping(TWO_SLOTS)
    lts = tool_lts(tool, dialect="sgd")
    assert read_aut(write_aut(lts)) == lts
    assert "invoke(book)" in write_aut(lts) and "collect(date)" in write_aut(lts)
    assert tool_lts(tool) == tool_lts(tool, dialect="mcp")
    no_slots = tool_lts(Tool("now", "Current time", {"type": "object"}), dialect="sgd")
    assert accepts(no_slots, ["invoke(now)", "execute(now)", "result(now)"])


def test_tool_lts_of_a_plain_tool_and_of_an_mcp_view() -> None:
    plain = tool_lts(tool_plus_from_mapping(BOOK_TRAIN).tool)
    n = "book_train"
    assert accepts(
        plain, [f"call({n})", f"execute({n})", f"error({n},ExecutionError)", f"abort({n})"]
    )
    view = caller_view(tool_plus_from_mapping(BOOK_TRAIN), PROTOCOL_FIELDS["MCP"], "hints")
    seen = tool_lts(view, error_types=("ServiceDown",))
    assert accepts(
        seen,
        [f"call({n})", f"approve({n})", f"execute({n})", f"error({n},ServiceDown)", f"abort({n})"],
    )
    assert not any(t.label.startswith("retry") for t in seen.transitions)
    no_required = Tool("now", "Current time", {"type": "object"})
    assert not any("ValidationError" in t.label for t in tool_lts(no_required).transitions)
    assert tool_lts(no_required, approval=True).step(2, "approve(now)") is not None
    assert FailureMode("X", Abort()).recovery == Abort()


def _declaring(name: str, *pairs: str) -> ToolPlus:
    deps = [{"tool": p, "relation": "ExclusiveWith"} for p in pairs]
    return tool_plus_from_mapping({"name": name, "description": f"{name}.", "dependencies": deps})


def test_excluders_name_the_tools_that_declare_each_tool_exclusive() -> None:
    tools = [_declaring("a", "b", "ghost"), _declaring("b"), _declaring("c", "b"), _declaring("d")]
    # ghost is no tool of the list: left out; d is in no pair
    assert excluders(tools) == {"b": frozenset({"a", "c"})}


def test_a_view_with_dependencies_knows_the_pairs_declared_on_the_other_side() -> None:
    b = _declaring("b", "z")
    plus = knowledge(caller_view(b, PROTOCOL_FIELDS["MCP+"]), {"c", "a", "z"})
    assert plus.exclusive == ("z", "a", "c")  # its own first, then the others by name
    mcp = knowledge(caller_view(b, PROTOCOL_FIELDS["MCP"]), {"c", "a"})
    assert mcp.exclusive == ()  # plain MCP keeps no dependencies: no pair is known
