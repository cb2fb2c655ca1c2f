"""``import a2a`` and ``export a2a`` (sim.interop.a2a_card, sim.interop.a2a_fragment): a real
SDK A2A server built here from a rich card, served by uvicorn on 127.0.0.1, imported through
the SDK's card resolver and exported back, field for field; bad cards, bad URLs and servers
that are not A2A agents exit 2 with one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from tests.harness.asgi_thread import asgi_thread

#: A card using what the protobuf model holds: provider, security, extensions, skills with
#: tags, examples, modes and their own security (protobuf JSON, A2A 1.0).
CARD: dict[str, Any] = {
    "name": "Ticket Desk",
    "description": "Books and delivers train tickets",
    "supportedInterfaces": [
        {"url": "http://desk.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "provider": {"url": "https://rail.example", "organization": "Rail Example"},
    "version": "2.4.1",
    "documentationUrl": "https://rail.example/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extensions": [
            {
                "uri": "https://rail.example/ext/fares",
                "description": "fare classes",
                "required": True,
                "params": {"currency": "EUR", "classes": ["economy", "business"]},
            }
        ],
    },
    "securitySchemes": {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}}
    },
    "securityRequirements": [{"schemes": {"bearer": {"list": ["tickets:write"]}}}],
    "defaultInputModes": ["application/json", "text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "book_train",
            "name": "Book a train",
            "description": "Books a ticket between two stations on a date",
            "tags": ["booking", "write"],
            "examples": ["Book Zurich to Geneva on 1 December"],
            "inputModes": ["text/plain"],
            "outputModes": ["application/json"],
            "securityRequirements": [{"schemes": {"bearer": {"list": ["tickets:write"]}}}],
        },
        {
            "id": "print_ticket",
            "name": "Print a ticket",
            "description": "Prints a booked ticket at a station",
            "tags": ["delivery"],
        },
    ],
    "iconUrl": "https://rail.example/icon.png",
}


def sdk_card(data: dict[str, Any] = CARD) -> Any:
    from a2a.types import AgentCard
    from google.protobuf.json_format import ParseDict

    return ParseDict(data, AgentCard())


def sdk_app(card: Any) -> Any:
    """A real A2A server of the SDK for ``card``: its card routes and JSON-RPC endpoint."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            await event_queue.enqueue_event(context.message)

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    handler = DefaultRequestHandler(
        agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_jsonrpc_routes(handler, "/a2a"), *create_agent_card_routes(card)]
    return Starlette(routes=routes)


@pytest.fixture(scope="module")
def desk() -> Iterator[str]:
    """The SDK server of :data:`CARD` (its base URL)."""
    with asgi_thread(sdk_app(sdk_card())) as base:
        yield base


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_live_card_comes_back_field_for_field(
    desk: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.interop.a2a_card import card_dict

    fragment = tmp_path / "desk.yaml"
    code, _, err = cli(capsys, "import", "a2a", desk, "--out", str(fragment))
    assert code == 0, err
    assert "scenario 'ticket-desk', 2 tools" in err
    assert cli(capsys, "validate", str(fragment))[0] == 0
    code, out, err = cli(capsys, "export", "a2a", str(fragment))
    assert code == 0, err
    assert json.loads(out) == card_dict(sdk_card()) == CARD
    assert "agent 'ticket-desk': card 'Ticket Desk', 2 skills" in err


def test_the_fragment_models_the_agent_and_its_skills(desk: str, tmp_path: Path) -> None:
    fragment = tmp_path / "desk.yaml"
    assert main(["import", "a2a", desk, "--type", "COORDINATOR", "--out", str(fragment)]) == 0
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    agent, host = data["agents"]
    assert agent == {
        "id": "ticket-desk",
        "type": "COORDINATOR",
        "capabilities": ["book_train", "print_ticket"],
        "protocols": {"A2A": 1.0},
    }
    assert host["id"] == "ticket-desk-skills" and host["type"] == "TOOL_SERVER"
    assert [t["description"] for t in data["tools"]] == [s["description"] for s in CARD["skills"]]
    kept = data["x-a2a"]["agents"]["ticket-desk"]
    assert kept["card"]["securitySchemes"] == CARD["securitySchemes"]
    assert kept["card"]["capabilities"]["extensions"] == CARD["capabilities"]["extensions"]
    assert kept["skills"] == CARD["skills"] and kept["host"] == "ticket-desk-skills"


def test_the_fragment_runs_once_a_caller_is_added(desk: str, tmp_path: Path) -> None:
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    fragment = tmp_path / "desk.yaml"
    assert main(["import", "a2a", desk, "--out", str(fragment)]) == 0
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    data["agents"].append({"id": "user", "type": "LLM_AGENT", "protocols": {"A2A": 1.0}})
    data["links"].append({"between": ["user", "ticket-desk"], "latency": {"A2A": 0.01}})
    data["duration"] = 60
    data["workflows"] = [
        {
            "name": "trip",
            "initiator": "user",
            "protocol": "A2A",
            "arrivals": {"process": "poisson", "rate": 0.2},
            "tasks": [
                {"id": "book", "tool": "book_train"},
                {"id": "print", "tool": "print_ticket"},
            ],
        }
    ]
    runnable = tmp_path / "runnable.yaml"
    runnable.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    metrics = run_replication(load_scenario(runnable), "dijkstra", 0, tmp_path / "run")
    assert metrics["workflows"]["started"] > 0
    lines = [json.loads(x) for x in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    executed = {x["tool"] for x in lines if x["label"] == "execute"}
    assert executed == {"book_train", "print_ticket"}
    assert {x["agent"] for x in lines if x["label"] == "execute"} == {"ticket-desk-skills"}


def test_a_saved_card_and_an_edited_fragment(tmp_path: Path) -> None:
    from sim.interop.a2a_card import card_dict

    saved = tmp_path / "card.json"
    saved.write_text(json.dumps(CARD), encoding="utf-8")
    fragment = tmp_path / "desk.yaml"
    assert main(["import", "a2a", str(saved), "--out", str(fragment)]) == 0
    data = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    data["agents"][0]["capabilities"] = ["print_ticket", "refunds"]  # one dropped, one new
    data["tools"][1]["description"] = "Prints a booked ticket at any station"
    fragment.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    exported = tmp_path / "card-out.json"
    assert main(["export", "a2a", str(fragment), "--out", str(exported)]) == 0
    card = json.loads(exported.read_text(encoding="utf-8"))
    assert [s["id"] for s in card["skills"]] == ["print_ticket", "refunds"]
    assert card["skills"][0]["description"] == "Prints a booked ticket at any station"
    assert card["skills"][1] == {
        "id": "refunds",
        "name": "refunds",
        "description": "capability refunds",
        "tags": ["capability"],
    }
    assert {k: v for k, v in card.items() if k != "skills"} == {
        k: v for k, v in card_dict(sdk_card()).items() if k != "skills"
    }


def test_a_scenario_exports_valid_cards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from a2a.utils.proto_utils import validate_proto_required_fields

    code, out, err = cli(capsys, "export", "a2a", "scenarios/train_booking.yaml")
    assert code == 0, err
    cards = json.loads(out)
    assert [c["name"] for c in cards] == ["planner", "gw1", "gw2"]  # the agents speaking A2A
    for card in cards:
        validate_proto_required_fields(sdk_card(card))
    assert [s["id"] for s in cards[0]["skills"]] == ["planning", "booking"]
    assert [s["id"] for s in cards[1]["skills"]] == ["relay"]
    code, out, _ = cli(
        capsys, "export", "a2a", "scenarios/train_booking.yaml", "--agent", "tickets",
        "--url", "http://127.0.0.1:9100",
    )  # fmt: skip
    card = json.loads(out)
    assert card["supportedInterfaces"][0]["url"] == "http://127.0.0.1:9100/a2a"
    ids = [s["id"] for s in card["skills"]]
    assert ids == ["train_booking", "ticket_delivery", "book_train", "send_ticket",
                   "print_ticket", "use_cached_data"]  # fmt: skip
    book = card["skills"][2]
    assert book["tags"] == ["tool", "write", "requires-approval"]
    assert book["description"].startswith("Books a train ticket from an origin")


def _bad(card: Any, tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(card if isinstance(card, str) else json.dumps(card), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("card", "message"),
    [
        ("[1, 2]", "an agent card is a JSON object, not list"),
        ('{"name": ', "invalid JSON at line 1 column 10"),
        ({"name": "x"}, "not a valid A2A agent card: description: Field is required"),
        ({**CARD, "skills": []}, "skills: Field must contain at least one element"),
        ({**CARD, "version": 3}, "not an A2A agent card: Failed to parse version field"),
        (
            {**CARD, "skills": [CARD["skills"][1], CARD["skills"][1]]},
            "skills[1].id: duplicate skill id 'print_ticket'",
        ),
    ],
    ids=["array", "syntax", "missing", "no-skills", "wrong-type", "duplicate"],
)
def test_a_bad_card_is_one_line(
    card: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _bad(card, tmp_path)
    code, out, err = cli(capsys, "import", "a2a", str(path))
    assert code == 2 and out == ""
    assert message in err and err.startswith(f"error: {path}"), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def _refused_port() -> int:
    import socket

    with socket.socket() as s:  # bound and closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bad_urls_and_servers_that_are_not_a2a(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    async def mcp_only(request: Any) -> Any:
        return PlainTextResponse("Method Not Allowed", status_code=405)

    async def not_a_card(request: Any) -> Any:
        return JSONResponse({"jsonrpc": "2.0", "result": {"tools": []}, "id": 1})

    app = Starlette(
        routes=[
            Route("/mcp/.well-known/agent-card.json", mcp_only),
            Route("/other/.well-known/agent-card.json", not_a_card),
        ]
    )
    port = _refused_port()
    with asgi_thread(app) as base:
        cases = [
            (f"{base}/nothing", "HTTP 404"),
            (f"{base}/mcp", "HTTP 405"),
            (f"{base}/other", "not a valid A2A agent card: name: Field is required"),
            (f"http://127.0.0.1:{port}", "ConnectError"),
            ("ftp://127.0.0.1/card.json", "only http:// and https:// URLs can be fetched"),
            ("http://[::1", "no A2A agent card"),
        ]
        for url, message in cases:
            code, out, err = cli(capsys, "import", "a2a", url, "--timeout", "5")
            assert code == 2 and out == "", (url, err)
            assert message in err and "Traceback" not in err, (url, err)
            assert len(err.strip().splitlines()) == 1, err
    code, _, err = cli(capsys, "import", "a2a", str(tmp_path / "card.json"), "--header", "A=b")
    assert code == 2 and "--header is for a live agent" in err


def test_export_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = "scenarios/train_booking.yaml"
    for argv, message in [
        (["--agent", "nobody"], "--agent 'nobody': no such agent"),
        (["--url", "desk.example"], "--url 'desk.example': expected an http:// or https://"),
    ]:
        code, _, err = cli(capsys, "export", "a2a", scenario, *argv)
        assert code == 2 and message in err, err
    text = Path(scenario).read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + "x-a2a:\n  agents:\n    planner: {card: 3}\n", encoding="utf-8")
    code, _, err = cli(capsys, "export", "a2a", str(bad))
    assert code == 2 and "x-a2a.agents.planner.card: expected the card's fields" in err
    mcp_only = tmp_path / "mcp.yaml"
    mcp_only.write_text(
        "name: m\nprotocols: [MCP]\nagents:\n"
        "  - {id: s, type: TOOL_SERVER, protocols: {MCP: 1.0}, tools: [t]}\n"
        "tools:\n  - {name: t, description: does t}\n",
        encoding="utf-8",
    )
    code, _, err = cli(capsys, "export", "a2a", str(mcp_only))
    assert code == 2 and "no agent speaks A2A (name one with --agent)" in err, err


def test_fields_the_model_does_not_hold_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.interop.a2a_card import unknown_fields

    vendor = {**CARD, "x-vendor": {"tier": 1}, "url": "http://old.example/a2a"}
    vendor["skills"] = [{**CARD["skills"][0], "cost": 3}, CARD["skills"][1]]
    assert unknown_fields(vendor) == ["x-vendor", "skills[0].cost"]  # url: a 0.3 field, read
    assert unknown_fields(CARD) == []
    saved = _bad(vendor, tmp_path)
    code, _, err = cli(capsys, "import", "a2a", str(saved), "--out", str(tmp_path / "f.yaml"))
    assert code == 0, err
    assert "fields the A2A model does not hold, not kept: x-vendor, skills[0].cost" in err


_IDS = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
)
_SKILL = st.fixed_dictionaries(
    {
        "id": _IDS,
        "name": _TEXT,
        "description": _TEXT,
        "tags": st.lists(_TEXT, min_size=1, max_size=3),
    },
    optional={
        "examples": st.lists(_TEXT, min_size=1, max_size=2),
        "inputModes": st.lists(st.sampled_from(["text/plain", "application/json"]), min_size=1),
        "outputModes": st.lists(st.sampled_from(["text/plain", "image/png"]), min_size=1),
    },
)


@settings(max_examples=12, deadline=None)
@given(
    skills=st.lists(_SKILL, min_size=1, max_size=4, unique_by=lambda s: s["id"]),
    name=_TEXT,
    streaming=st.booleans(),
)
def test_any_card_comes_back_field_for_field(
    skills: list[dict[str, Any]], name: str, streaming: bool, tmp_path_factory: Any
) -> None:
    from sim.interop.a2a_card import card_dict, card_from_json
    from sim.interop.a2a_fragment import fragment_from_card, read_a2a_extension, scenario_cards
    from sim.scenario import load_scenario

    data = {**CARD, "name": name, "skills": skills}
    data["capabilities"] = {**CARD["capabilities"], "streaming": streaming}
    card = card_from_json(data, "card")
    folder = tmp_path_factory.mktemp("card")
    path = folder / "fragment.yaml"
    path.write_text(fragment_from_card(card, source="a test", out=path).text, encoding="utf-8")
    [(_, back)] = scenario_cards(load_scenario(path), read_a2a_extension(path), [], None, "f")
    assert card_dict(back) == card_dict(card)


def test_a_header_reaches_the_card_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    async def guarded(request: Any) -> Any:
        if request.headers.get("authorization") != "Bearer s3cret":
            return PlainTextResponse("Unauthorized", status_code=401)
        return JSONResponse(CARD)

    app = Starlette(routes=[Route("/.well-known/agent-card.json", guarded)])
    with asgi_thread(app) as base:
        code, _, err = cli(capsys, "import", "a2a", base, "--out", str(tmp_path / "a.yaml"))
        assert code == 2 and "HTTP 401" in err, err
        argv = ["import", "a2a", "--header", "Authorization=Bearer s3cret", base]
        code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "b.yaml"))
        assert code == 0, err
        assert "s3cret" not in err  # a header's value is never printed
