"""MCP sessions you can trust (issue 32, items 1 and 2), with real SDK clients against
``serve mcp --http`` on 127.0.0.1: an approval's ``requestState`` is consumed once (a
replay is refused, nothing executes, the trace passes ``check``); every ``deny`` says why
(declined, cancelled, no_elicitation, policy, replayed, timeout) and a property reads it."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from sim.cli import main
from sim.conformance.checks.stream import check_trace
from sim.scenario import load_scenario
from sim.vocabulary import DENIALS, line_problems
from tests.harness.mcp_http import REPO, http_server
from tests.harness.warm_sim import warm_sim

TRAIN = REPO / "scenarios" / "train_booking.yaml"
USER = {"user_id": "u1"}
TRIP = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}
TIMEOUT = "0.5"  # seconds the server waits for a 2025-11-25 approval answer


@dataclass
class Session:
    """What one served session did: the answers the clients got and the server's trace."""

    answers: dict[str, Any]
    trace: Path
    lines: list[dict[str, Any]]


def answer(action: str) -> dict[str, mt.ElicitResult]:
    return {"approval": mt.ElicitResult(action=action)}  # type: ignore[arg-type]


async def refusal(call: Any) -> str:
    """The JSON-RPC error a call raises, as ``CODE: message``."""
    try:
        await call
    except MCPError as exc:
        return f"{exc.error.code}: {exc.error.message}"
    raise AssertionError("the call was not refused")


async def modern_calls(url: str) -> dict[str, Any]:
    """A 2026-07-28 client: accept, replay the accepted state, decline, replay the declined
    state, cancel; then a client without the elicitation capability."""
    got: dict[str, Any] = {}

    async def unused(ctx: Any, params: Any) -> mt.ElicitResult:  # declares the capability
        raise AssertionError("the answers are sent by hand")

    transport = streamable_http_client(url)
    async with Client(transport, mode="2026-07-28", elicitation_callback=unused) as c:
        for name in ("fetch_user", "check_balance"):
            assert (await c.call_tool(name, USER)).is_error is False
        session = c.session

        async def asked() -> str:
            first = await session.call_tool("book_train", TRIP, allow_input_required=True)
            assert isinstance(first, mt.InputRequiredResult)
            assert first.request_state is not None
            return first.request_state

        accepted = await asked()
        got["accept"] = await session.call_tool(
            "book_train", TRIP, input_responses=answer("accept"), request_state=accepted
        )
        got["replay"] = await refusal(
            session.call_tool(
                "book_train", TRIP, input_responses=answer("accept"), request_state=accepted
            )
        )
        declined = await asked()
        got["decline"] = await session.call_tool(
            "book_train", TRIP, input_responses=answer("decline"), request_state=declined
        )
        got["replay_declined"] = await refusal(
            session.call_tool(
                "book_train", TRIP, input_responses=answer("accept"), request_state=declined
            )
        )
        cancelled = await asked()
        got["cancel"] = await session.call_tool(
            "book_train", TRIP, input_responses=answer("cancel"), request_state=cancelled
        )
    async with Client(streamable_http_client(url), mode="2026-07-28") as c:
        got["incapable"] = await refusal(c.call_tool("book_train", TRIP))
    return got


async def slow_legacy_call(url: str) -> Any:
    """A 2025-11-25 client whose user answers after the server stopped waiting."""

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        await anyio.sleep(3 * float(TIMEOUT))
        return mt.ElicitResult(action="accept")

    transport = streamable_http_client(url)
    async with Client(transport, mode="legacy", elicitation_callback=elicit) as c:
        return await c.call_tool("book_train", TRIP)


def read(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """One HTTP server, one trace: every way an approval ends, from real SDK clients."""
    trace = tmp_path_factory.mktemp("sessions") / "trace.jsonl"

    async def run(url: str) -> dict[str, Any]:
        with anyio.fail_after(60):
            got = await modern_calls(url)
            got["timeout"] = await slow_legacy_call(url)
            return got

    with http_server(TRAIN, "--trace", str(trace), "--elicitation-timeout", TIMEOUT) as url:
        answers = anyio.run(run, url)
    return Session(answers, trace, read(trace))


def test_an_accepted_request_state_is_refused_the_second_time(served: Session) -> None:
    assert served.answers["accept"].is_error is False
    assert json.loads(served.answers["accept"].content[0].text)["arguments"] == TRIP
    assert served.answers["replay"] == (
        "-32602: Invalid requestState: already used: one approval answers one call; "
        "nothing was executed"
    )
    assert served.answers["replay_declined"] == served.answers["replay"]
    booked = [x for x in served.lines if x["tool"] == "book_train"]
    assert [x["label"] for x in booked if x["label"] == "execute"] == ["execute"]  # ran once
    assert [x["label"] for x in booked[:8]] == [
        "call",
        "validate",
        "approve",
        "execute",
        "result",
        "call",  # the replay: a new invocation, refused at the gate
        "validate",
        "deny",
    ]
    assert booked[7]["detail"] == {
        "reason": "replayed",
        "asked": "requires_approval",
        "wall": booked[7]["detail"]["wall"],  # a live session: the UTC time of each line
    }
    assert booked[7]["inv"] != booked[0]["inv"]


def test_every_deny_says_why_and_the_trace_passes_check(served: Session) -> None:
    denials = [x["detail"]["reason"] for x in served.lines if x["label"] == "deny"]
    assert denials == [
        "replayed",
        "declined",
        "replayed",
        "cancelled",
        "no_elicitation",
        "timeout",
    ]
    assert all(line_problems(x, source="live") == [] for x in served.lines)  # wall: live
    report = check_trace(served.trace, load_scenario(TRAIN))
    assert report.ok, [(v.name, v.message) for v in report.verdicts if not v.ok]
    assert served.answers["incapable"].startswith("-32021: book_train requires approval")
    assert served.answers["timeout"].is_error is True
    assert served.answers["timeout"].content[0].text == (
        f"ApprovalDenied: book_train was not executed: nobody answered the approval within "
        f"{TIMEOUT} s"
    )


def test_a_property_reads_the_deny_reason(
    served: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    props = tmp_path / "props.yaml"
    entries = [
        {"name": "never-declined", "scope": "run", "formula": "G !deny(detail.reason=declined)"},
        {"name": "never-policy", "scope": "run", "formula": "G !deny(detail.reason=policy)"},
    ]
    props.write_text(yaml.safe_dump(entries), encoding="utf-8")
    argv = ["check", str(served.trace), "--scenario", str(TRAIN), "--properties", str(props)]
    code = main([*argv, "--json"])
    verdicts = {p["name"]: p for p in json.loads(capsys.readouterr().out)["properties"]}
    assert code == 1
    assert verdicts["never-declined"]["ok"] is False
    assert verdicts["never-policy"]["ok"] is True


def test_a_policy_that_grants_nothing_asks_nobody(tmp_path: Path) -> None:
    data = yaml.safe_load(TRAIN.read_text(encoding="utf-8"))
    data.setdefault("approval", {})["grant_probability"] = 0.0
    scenario = tmp_path / "never.yaml"
    scenario.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    command, *serve = [*warm_sim(), "serve", "mcp", str(scenario), "--trace", str(trace)]
    params = StdioServerParameters(command=command, args=serve, cwd=str(REPO))
    asked: list[str] = []

    async def elicit(ctx: Any, p: Any) -> mt.ElicitResult:
        asked.append(p.message)
        return mt.ElicitResult(action="accept")

    async def session() -> Any:
        with anyio.fail_after(30):
            async with Client(params, mode="legacy", elicitation_callback=elicit) as c:
                return await c.call_tool("book_train", TRIP)

    refused = anyio.run(session)
    assert asked == []
    assert refused.is_error is True
    assert "the scenario's approval policy grants none" in refused.content[0].text
    deny = [x for x in read(trace) if x["label"] == "deny"]
    assert [x["detail"]["reason"] for x in deny] == ["policy"]
    assert not any(x["label"] == "execute" for x in read(trace))


def test_the_vocabulary_refuses_a_deny_reason_it_does_not_know() -> None:
    line = {
        "t": 0.0,
        "seq": 0,
        "rep": 0,
        "label": "deny",
        "agent": "client",
        "wf": "serve",
        "inst": 0,
        "task": "book_train",
        "inv": 0,
        "tool": "book_train",
        "proto": "MCP",
        "detail": {"reason": "requires_approval"},
    }
    assert line_problems(line) == [
        f"detail.reason: 'requires_approval' is not one of {list(DENIALS)}"
    ]
    line["detail"] = {"reason": "declined", "asked": "requires_approval"}
    assert line_problems(line) == []


def test_a_stop_while_an_approval_is_pending_ends_the_server() -> None:
    """SIGTERM while a 2025-11-25 approval question waits: the server stops (exit 0, see
    ``http_server``) without waiting for the answer; the client's call ends with it."""
    asked = threading.Event()
    ended: list[BaseException | Any] = []

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("never answered")

    async def call(url: str) -> Any:
        with anyio.fail_after(60):
            transport = streamable_http_client(url)
            async with Client(transport, mode="legacy", elicitation_callback=elicit) as c:
                return await c.call_tool("book_train", TRIP)

    def client(url: str) -> None:
        try:
            ended.append(anyio.run(call, url))
        except BaseException as exc:  # the server went away under the call
            ended.append(exc)

    with http_server(TRAIN) as url:
        thread = threading.Thread(target=client, args=(url,), daemon=True)
        thread.start()
        assert asked.wait(30), "the approval was never asked"
    thread.join(30)
    assert not thread.is_alive()
    assert len(ended) == 1 and not isinstance(ended[0], TimeoutError)
