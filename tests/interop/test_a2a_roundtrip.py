"""``export a2a`` then ``import a2a`` (sim/interop/a2a_fragment.py): a hosted tool's skill
carries its side effect and approval in its tags (``tool``, the side effect,
``requires-approval``); import read them back as guesses (``delete``, no approval), so a
write needing approval came back a delete without it. Cards without those tags import as
before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.scenario import load_scenario

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios" / "train_booking.yaml"
CARRIED = ("name", "description", "side_effects", "requires_approval")
"""The fields of a tool a built card carries (a skill's id, description and tags)."""


def _round_trip(scenario: Path, agent: str, tmp_path: Path) -> tuple[dict[str, Any], Any]:
    """The card ``export a2a`` writes for ``agent`` and the fragment ``import a2a`` makes."""
    card = tmp_path / "card.json"
    assert main(["export", "a2a", str(scenario), "--agent", agent, "--out", str(card)]) == 0
    fragment = tmp_path / "fragment.yaml"
    assert main(["import", "a2a", str(card), "--out", str(fragment)]) == 0
    return json.loads(card.read_text(encoding="utf-8")), load_scenario(fragment)


def _fields(tool: Any) -> dict[str, Any]:
    return {k: v for k, v in tool.model_dump(mode="json").items() if k in CARRIED}


def test_a_shipped_scenario_s_tools_come_back_with_their_side_effects(tmp_path: Path) -> None:
    card, fragment = _round_trip(SHIPPED, "tickets", tmp_path)
    tools = {t.name: t for t in load_scenario(SHIPPED).tools}
    skills = [s["id"] for s in card["skills"] if s["tags"][0] == "tool"]
    assert skills == ["book_train", "send_ticket", "print_ticket", "use_cached_data"]
    back = {t.name: t for t in fragment.tools}
    assert [_fields(back[s]) for s in skills] == [_fields(tools[s]) for s in skills]


def test_what_a_card_carries_is_no_longer_a_guess(tmp_path: Path) -> None:
    _, _ = _round_trip(SHIPPED, "tickets", tmp_path)
    data = yaml.safe_load((tmp_path / "fragment.yaml").read_text(encoding="utf-8"))
    guessed = data["x-mcp"]["tools"]
    assert guessed["book_train"]["guessed"] == {"failure_modes": [], "dependencies": []}
    assert "side_effects" in guessed["train_booking"]["guessed"]  # a capability: no tool tags


@pytest.mark.parametrize(
    "tags",
    [["booking", "write"], ["tool"], ["tool", "write", "approval"], ["write", "tool"]],
    ids=["other-words", "tool-alone", "other-third", "other-order"],
)
def test_a_card_without_protomesh_s_tags_imports_as_before(tags: list[str], tmp_path: Path) -> None:
    card = {
        "name": "desk",
        "description": "a desk",
        "supportedInterfaces": [
            {"url": "http://d.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "version": "1",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "book", "name": "Book", "description": "Books", "tags": tags}],
    }
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    fragment = tmp_path / "fragment.yaml"
    assert main(["import", "a2a", str(path), "--out", str(fragment)]) == 0
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    tool = data["tools"][0]
    assert (tool["side_effects"], tool["requires_approval"]) == ("delete", False)
    assert data["x-mcp"]["tools"]["book"]["guessed"] == {
        "side_effects": "delete",
        "requires_approval": False,
        "failure_modes": [],
        "dependencies": [],
    }
    assert data["x-a2a"]["agents"]["desk"]["skills"][0]["tags"] == tags


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_TOOLS = st.dictionaries(
    _NAMES,
    st.tuples(
        st.text(max_size=30),
        st.sampled_from(["none", "read", "write", "delete"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=30)
@given(_TOOLS, st.lists(_NAMES, max_size=3, unique=True))
def test_every_tool_skill_comes_back_with_the_fields_its_card_carries(
    drawn: dict[str, tuple[str, str, bool]], capabilities: list[str]
) -> None:
    """Any tools, any capabilities (a capability may name a tool: its skill is not a tool's)."""
    from sim.interop.a2a_card import card_dict, card_from_json
    from sim.interop.a2a_fragment import fragment_from_card, scenario_cards
    from sim.scenario import parse_scenario

    tools = [
        {"name": n, "description": d, "side_effects": e, "requires_approval": a}
        for n, (d, e, a) in drawn.items()
    ]
    server = {"id": "srv", "type": "TOOL_SERVER", "protocols": {"A2A": 1.0}}
    server |= {"capabilities": capabilities, "tools": list(drawn)}
    text = yaml.safe_dump({"name": "h", "protocols": ["A2A"], "agents": [server], "tools": tools})
    scenario, _ = parse_scenario(text, "h.yaml")
    ((_, card),) = scenario_cards(scenario, {}, ["srv"], None, "h.yaml")
    card = card_from_json(json.loads(json.dumps(card_dict(card))), "card")
    fragment, _ = parse_scenario(fragment_from_card(card, source="test").text, "f.yaml")
    skills = [s.id for s in card.skills if s.tags[0] == "tool"]
    assert skills == [n for n in drawn if n not in capabilities]
    back = {t.name: _fields(t) for t in fragment.tools}
    for t in scenario.tools:
        if t.name in skills:
            expected = _fields(t) | {"description": t.description or t.name}  # A2A needs one
            assert back[t.name] == expected


def test_an_edited_tool_s_fields_are_its_skill_s_tags_on_export(tmp_path: Path) -> None:
    card, _ = _round_trip(SHIPPED, "tickets", tmp_path)
    fragment = tmp_path / "fragment.yaml"
    again = tmp_path / "again.json"
    assert main(["export", "a2a", str(fragment), "--out", str(again)]) == 0
    assert json.loads(again.read_text(encoding="utf-8"))["skills"] == card["skills"]
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    book = next(t for t in data["tools"] if t["name"] == "book_train")
    book |= {"side_effects": "delete", "requires_approval": False}
    fragment.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert main(["export", "a2a", str(fragment), "--out", str(again)]) == 0
    skills = {s["id"]: s for s in json.loads(again.read_text(encoding="utf-8"))["skills"]}
    assert skills["book_train"]["tags"] == ["tool", "delete"]
    assert skills["send_ticket"]["tags"] == ["tool", "write", "requires-approval"]
