"""``python -m sim route`` (SPEC §7): output, JSON keys and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = str(ROOT / "scenarios" / "train_booking.yaml")
KEYS = ["router", "from", "to", "path", "protocols", "translations", "cost", "hops"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["route", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_route_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == KEYS
    assert data == {
        "router": "dijkstra",  # the scenario's first router
        "from": "planner",
        "to": "tickets",
        "path": ["planner", "gw1", "tickets"],
        "protocols": ["MCP+", "MCP+"],
        "translations": [],
        "cost": pytest.approx(0.016),
        "hops": 2,
    }


def test_route_json_with_translations_and_down(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        SHIPPED,
        "--from",
        "planner",
        "--to",
        "tickets",
        "--router",
        "resilient",
        "--down",
        "gw1",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == KEYS
    assert data["path"] == ["planner", "gw2", "tickets"]
    assert data["protocols"] == ["A2A", "MCP"]
    assert data["translations"] == [{"at": "gw2", "from": "A2A", "to": "MCP"}]
    assert [list(t) for t in data["translations"]] == [["at", "from", "to"]]
    assert data["cost"] == pytest.approx(0.036)
    assert data["hops"] == 2


def test_route_around_a_down_link(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "resilient",
        "--down", "tickets~gw1", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["path"] == ["planner", "gw2", "tickets"]


def test_route_protocols_and_bfs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        SHIPPED,
        "--from",
        "planner",
        "--to",
        "tickets",
        "--protocol",
        "A2A",
        "--to-protocol",
        "MCP",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["translations"] == [{"at": "gw1", "from": "A2A", "to": "MCP"}]
    code, out, _ = run(
        capsys, SHIPPED, "--from", "planner", "--to", "accounts", "--router", "bfs", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["router"] == "bfs" and data["hops"] == 2 and data["translations"] == []


def test_route_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "resilient",
        "--down", "gw1",
    )  # fmt: skip
    assert code == 0
    assert "planner" in out and "gw2" in out and "A2A→MCP" in out
    assert "2 hop(s)" in out and "1 translation(s)" in out


def test_semantic_by_capability_and_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, SHIPPED, "--from", "planner", "--to", "book_train", "--router", "semantic",
        "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["to"] == "tickets"
    code, out, _ = run(
        capsys, SHIPPED, "--from", "planner", "--to", "account_balance", "--router",
        "semantic", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["to"] == "accounts"


def test_static_router_notes_that_it_ignores_down(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "dijkstra",
        "--down", "gw1", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["path"] == ["planner", "gw1", "tickets"]
    assert "ignores --down" in err


@pytest.mark.parametrize(
    ("extra", "sentence"),
    [
        (
            ["--to", "tickets", "--router", "resilient", "--down", "gw1,gw2"],
            "no route from 'planner' to 'tickets': no chain of links joins 'planner' to "
            "'tickets' around the down nodes and links (gw1, gw2)",
        ),
        (
            ["--to", "tickets", "--router", "resilient", "--down", "tickets"],
            "no route from 'planner' to 'tickets': the target 'tickets' is down",
        ),
        (
            ["--to", "tickets", "--router", "bfs", "--protocol", "A2A"],
            "no route from 'planner' to 'tickets': 'tickets' does not speak A2A "
            "(it speaks MCP, MCP+)",
        ),
        (
            ["--to", "book_train", "--router", "semantic", "--down", "tickets"],
            "no route from 'planner' to 'book_train': all candidates for 'book_train' are "
            "down (tickets)",
        ),
        (
            ["--to", "quantum", "--router", "semantic"],
            "no route from 'planner' to 'quantum': no agent's capabilities match 'quantum'",
        ),
    ],
)
def test_no_route_exits_1_with_a_sentence(
    capsys: pytest.CaptureFixture[str], extra: list[str], sentence: str
) -> None:
    """The sentence on stderr; with --json, on stdout the route's keys, each null, and
    the reason (as ``plan --json`` gives a task without a route): it printed nothing."""
    code, out, err = run(capsys, SHIPPED, "--from", "planner", *extra, "--json")
    assert code == 1
    assert err.strip() == sentence
    data = json.loads(out)
    assert list(data) == [*KEYS, "reason"]
    target = extra[extra.index("--to") + 1]
    router = extra[extra.index("--router") + 1]
    ends = {"router": router, "from": "planner", "to": target}
    assert data == {**ends, **dict.fromkeys(KEYS[3:]), "reason": sentence.split(": ", 1)[1]}


def test_no_protocol_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = tmp_path / "blocked.yaml"
    scenario.write_text(
        """name: blocked
duration: 10
protocols: [MCP, A2A]
translations: [{from: A2A, to: MCP, allowed: false}]
agents:
  - {id: a, type: LLM_AGENT, protocols: {A2A: 1.0}}
  - {id: g, type: GATEWAY, protocols: {A2A: 1.0, MCP: 1.0}}
  - {id: t, type: TOOL_SERVER, protocols: {MCP: 1.0}}
links:
  - {between: [a, g], latency: {A2A: 0.01}}
  - {between: [g, t], latency: {MCP: 0.01}}
"""
    )
    code, out, err = run(capsys, str(scenario), "--from", "a", "--to", "t")
    assert code == 1 and out == ""
    assert err.startswith("no route from 'a' to 't': ")
    assert err.strip().endswith("no protocol path")
    code, out, _ = run(capsys, str(scenario), "--from", "t", "--to", "a", "--json")
    assert code == 0
    assert json.loads(out)["translations"] == [{"at": "g", "from": "MCP", "to": "A2A"}]


def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.yaml")
    code, out, err = run(capsys, missing, "--from", "a", "--to", "b")
    assert code == 2 and out == "" and "missing.yaml" in err
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nduration: -1\nagents: [\n")
    code, out, err = run(capsys, str(broken), "--from", "a", "--to", "b")
    assert code == 2 and out == "" and "broken.yaml" in err
    code, out, err = run(capsys, SHIPPED, "--from", "planer", "--to", "tickets")
    assert code == 2 and out == ""
    assert "unknown agent 'planer' (did you mean 'planner'?)" in err
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--protocol", "SGD"
    )
    assert code == 2 and "unknown protocol 'SGD'" in err
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--to-protocol", "MCPP"
    )
    assert code == 2 and "unknown protocol 'MCPP'" in err
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "resilient",
        "--down", "gw3",
    )  # fmt: skip
    assert code == 2 and "unknown agent 'gw3'" in err
    code, out, err = run(
        capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "resilient",
        "--down", "gw1~gw9",
    )  # fmt: skip
    assert code == 2 and "unknown agent 'gw9'" in err
    code, _, _ = run(capsys, SHIPPED, "--from", "planner", "--to", "tickets", "--router", "astar")
    assert code == 2
    code, _, _ = run(capsys, SHIPPED, "--to", "tickets")
    assert code == 2
