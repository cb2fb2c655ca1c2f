"""``serve a2a`` (sim.interop.a2a_server): the command run once for the module on
127.0.0.1, talked to by the official a2a-sdk client over real HTTP (non-streaming and
streaming): tasks, ``input-required`` for approval, accept runs, decline does not, cancel,
refusals before any task; the recorded trace passes ``check`` and fails it without its
approval; a traceparent sent in the metadata is recorded and exported as the request's
trace."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from sim.cli import main
from tests.harness.mcp_http import A2A_URL, http_server

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "scenarios" / "train_booking.yaml"
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
BOOK = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}


class Served:
    """The running ``serve a2a``: its base URL and trace file."""

    def __init__(self, base: str, trace: Path, scenario: Path) -> None:
        self.base = base
        self.trace = trace
        self.scenario = scenario

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.trace.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``serve a2a`` of the paper scenario's ``tickets``, its tools' simulated errors
    removed (so that what a test sees does not depend on the order tests draw in)."""
    import yaml

    folder = tmp_path_factory.mktemp("serve")
    data = yaml.safe_load(TRAIN.read_text(encoding="utf-8"))
    for tool in data["tools"]:
        tool.pop("errors", None)
    scenario = folder / "train_booking.yaml"
    scenario.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    trace = folder / "trace.jsonl"
    extra = ("--agent", "tickets", "--trace", str(trace))
    with http_server(scenario, *extra, kind="a2a", url=A2A_URL, warm=False) as base:
        yield Served(base, trace, scenario)


def message(data: dict[str, Any], task_id: str = "", **metadata: Any) -> Any:
    from a2a.helpers import new_data_part
    from a2a.types import Message, Role

    out = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, task_id=task_id)
    out.parts.append(new_data_part(data))
    if metadata:
        out.metadata.update(metadata)
    return out


async def _talk(base: str, streaming: bool, messages: list[Any]) -> list[list[Any]]:
    """Send each message (a callable of the previous task id, or a Message) with the SDK's
    client; the events each one got."""
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import SendMessageRequest

    out: list[list[Any]] = []
    task_id = ""
    async with httpx.AsyncClient(timeout=20) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        for m in messages:
            sent = m(task_id) if callable(m) else m
            got = [ev async for ev in client.send_message(SendMessageRequest(message=sent))]
            out.append(got)
            last = got[-1]
            task_id = last.task.id if last.HasField("task") else last.status_update.task_id
    return out


def talk(base: str, streaming: bool, *messages: Any) -> list[list[Any]]:
    return anyio.run(_talk, base, streaming, list(messages))


def final_state(events: list[Any]) -> str:
    from a2a.types import TaskState

    last = events[-1]
    state = last.task.status.state if last.HasField("task") else last.status_update.status.state
    return str(TaskState.Name(state))


def task_of(events: list[Any]) -> str:
    last = events[-1]
    return str(last.task.id if last.HasField("task") else last.status_update.task_id)


def test_the_card_is_served_and_valid(served: Served) -> None:
    import httpx
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.proto_utils import validate_proto_required_fields

    card = parse_agent_card(httpx.get(served.base + "/.well-known/agent-card.json").json())
    validate_proto_required_fields(card)
    assert card.name == "tickets" and card.capabilities.streaming
    assert card.supported_interfaces[0].url == served.base + "/a2a"
    assert [s.id for s in card.skills] == [
        "train_booking", "ticket_delivery", "book_train", "send_ticket", "print_ticket",
        "use_cached_data",
    ]  # fmt: skip


def test_approve_executes_decline_does_not_and_the_trace_checks(
    served: Served, tmp_path: Path
) -> None:
    from sim.conformance.checks.stream import check_trace
    from sim.scenario import load_scenario

    ask = message({"skill": "book_train", "arguments": BOOK}, traceparent=PARENT)
    asked, done = talk(served.base, False, ask, lambda t: message({"approval": "accept"}, t))
    assert final_state(asked) == "TASK_STATE_INPUT_REQUIRED"
    question = asked[-1].task.status.message
    data = [p for p in question.parts if p.HasField("data")]
    assert "Approve book_train with" in question.parts[0].text and len(data) == 1
    assert final_state(done) == "TASK_STATE_COMPLETED"
    [artifact] = done[-1].task.artifacts
    assert artifact.name == "result"
    asked, refused = talk(
        served.base, True, message({"skill": "print_ticket"}),
        lambda t: message({"approval": "decline"}, t),
    )  # fmt: skip
    assert final_state(asked) == "TASK_STATE_INPUT_REQUIRED"
    assert final_state(refused) == "TASK_STATE_REJECTED"
    every = served.lines()
    call = next(
        x for x in every
        if x["label"] == "call" and x["tool"] == "book_train"
        and x["detail"].get("traceparent") == PARENT
    )  # fmt: skip
    printed = next(x for x in every if x["label"] == "call" and x["tool"] == "print_ticket")
    lines = [x for x in every if x["inv"] in (call["inv"], printed["inv"])]
    labels = {
        inv: [x["label"] for x in lines if x["inv"] == inv] for inv in (call["inv"], printed["inv"])
    }
    assert labels[call["inv"]] == ["call", "validate", "approve", "execute", "result"]
    assert labels[printed["inv"]] == ["call", "validate", "deny"]  # declined: nothing ran
    assert call["proto"] == "A2A"
    assert all(isinstance(x["detail"]["wall"], str) for x in lines)
    scenario = load_scenario(served.scenario)
    kept = tmp_path / "kept.jsonl"
    kept.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    report = check_trace(kept, scenario)
    assert report.ok, [(v.name, v.message) for v in report.verdicts if not v.ok]
    cut = [x for x in lines if x["label"] != "approve"]
    for i, x in enumerate(cut):
        x["seq"] = i
    bad = tmp_path / "no-approval.jsonl"
    bad.write_text("".join(json.dumps(x) + "\n" for x in cut), encoding="utf-8")
    verdicts = {v.name: v for v in check_trace(bad, scenario).verdicts}
    assert verdicts["write_approval"].violations >= 1
    assert "a write tool, with no approve" in verdicts["write_approval"].message


def test_the_traceparent_is_the_requests_trace(served: Served, tmp_path: Path) -> None:
    talk(served.base, False, message({"skill": "use_cached_data"}, traceparent=PARENT))
    out = tmp_path / "spans.json"
    argv = ["export", "otel", str(served.trace), "--scenario", str(served.scenario)]
    argv += ["--out", str(out)]
    assert main(argv) == 0  # times from detail.wall: no --epoch
    spans = [
        s
        for rs in json.loads(out.read_text())["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    traced = [s for s in spans if s["traceId"] == PARENT.split("-")[1]]
    assert {s["name"] for s in traced} >= {"tools/call use_cached_data"}
    assert {s.get("parentSpanId") for s in traced} == {PARENT.split("-")[2]}


def test_a_read_tool_runs_at_once_and_bad_arguments_fail_the_task(served: Served) -> None:
    [ran] = talk(
        served.base, False, message({"skill": "use_cached_data", "arguments": {"user_id": "u"}})
    )
    assert final_state(ran) == "TASK_STATE_COMPLETED"
    [failed] = talk(served.base, False, message({"skill": "book_train", "arguments": {"to": "x"}}))
    assert final_state(failed) == "TASK_STATE_FAILED"
    text = failed[-1].task.status.message.parts[0].text
    assert text.startswith("Invalid arguments for skill book_train: 'from' is a required property")
    errors = [x for x in served.lines() if x["label"] == "error"]
    assert errors and errors[-1]["detail"]["error"] == "ValidationError"


def test_a_waiting_task_is_canceled_and_an_answer_is_used_once(served: Served) -> None:
    async def go() -> tuple[str, str, str]:
        import httpx
        from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
        from a2a.types import CancelTaskRequest, SendMessageRequest
        from a2a.utils.errors import A2AError

        async with httpx.AsyncClient(timeout=20) as http:
            card = await A2ACardResolver(http, served.base).get_agent_card()
            client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
            ask = SendMessageRequest(message=message({"skill": "send_ticket"}))
            got = [ev async for ev in client.send_message(ask)]
            task_id = task_of(got)
            maybe = SendMessageRequest(message=message({"approval": "maybe"}, task_id))
            try:
                [ev async for ev in client.send_message(maybe)]
                refused = "no error"
            except A2AError as exc:
                refused = str(exc)
            canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
            again = SendMessageRequest(message=message({"approval": "accept"}, task_id))
            try:
                [ev async for ev in client.send_message(again)]
                late = "no error"
            except A2AError as exc:
                late = str(exc)
            from a2a.types import TaskState

            return refused, str(TaskState.Name(canceled.status.state)), late

    refused, state, late = anyio.run(go)
    assert 'answer with a DataPart {"approval": "accept"} or {"approval": "decline"}' in refused
    assert state == "TASK_STATE_CANCELED"
    assert "not waiting" in late or "terminal" in late.lower(), late


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"tool": "book_train"}, 'expected a DataPart {"skill": NAME, "arguments": {...}}'),
        ({"skill": "fly"}, "Unknown skill: fly (skills: book_train, send_ticket"),
        ({"skill": "book_train", "arguments": [1]}, "arguments of book_train: an object"),
    ],
)
def test_a_bad_request_is_refused_before_any_task(
    served: Served, data: dict[str, Any], error: str
) -> None:
    from a2a.utils.errors import InvalidParamsError

    before = len(served.lines())
    with pytest.raises(InvalidParamsError, match=re.escape(error)):
        talk(served.base, False, message(data))
    assert len(served.lines()) == before  # nothing recorded: no task


def test_bad_command_lines_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, text in [
        (["--agent", "nobody"], "--agent 'nobody': no such agent"),
        (["--agent", "gw1"], "--agent 'gw1': serves no tool"),
        (["--agent", "tickets", "--http", "127.0.0.1"], "expected HOST:PORT"),
        (["--agent", "tickets", "--speed", "fast"], "--speed must be instant, realtime or"),
    ]:
        assert main(["serve", "a2a", str(TRAIN), *argv]) == 2
        err = capsys.readouterr().err
        assert text in err and len(err.strip().splitlines()) == 1, err
