"""Approval as elicitation in ``serve mcp`` (issue 14, item 3), with a real SDK client over
stdio and over Streamable HTTP on 127.0.0.1, in both revisions: ``book_train`` asks, accept
executes, decline does not; the ``--trace`` of the session passes ``check`` and fails
``write_approval`` once its approval is removed; every frame the server sends validates
against the negotiated revision's schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from sim.conformance.checks.stream import check_trace
from sim.scenario import load_scenario
from sim.vocabulary import line_problems
from tests.harness.mcp_http import REPO, http_server
from tests.harness.warm_sim import warm_sim
from tests.harness.wire_tap import frame_errors, http_tap, read_log

TRAIN = REPO / "scenarios" / "train_booking.yaml"
USER = {"user_id": "u1"}
TRIP = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}
MODES = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


def spec(shared_data: Path, revision: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (shared_data / "mcp_spec" / f"schema-{revision}.json").read_text(encoding="utf-8")
    )
    return data


async def booking_session(client: Client, answers: list[str], asked: list[str]) -> list[Any]:
    """fetch_user, check_balance, then book_train once per answer."""
    out = []
    for name in ("fetch_user", "check_balance"):
        done = await client.call_tool(name, USER)
        assert done.is_error is False, done
    for _ in answers:
        out.append(await client.call_tool("book_train", TRIP))
    assert len(asked) == len(answers)
    return out


def answering(answers: list[str], asked: list[str]) -> Any:
    queue = list(answers)

    async def elicit(ctx: Any, params: Any) -> mt.ElicitResult:
        asked.append(params.message)
        assert params.requested_schema == {"type": "object", "properties": {}}
        return mt.ElicitResult(action=queue.pop(0))

    return elicit


def assert_accept_then_decline(results: list[Any], asked: list[str]) -> None:
    accepted, declined, *cancelled = results
    assert accepted.is_error is False
    assert json.loads(accepted.content[0].text)["arguments"] == TRIP
    assert declined.is_error is True
    assert declined.content[0].text == (
        "ApprovalDenied: book_train was not executed: the user declined the approval"
    )
    for result in cancelled:
        assert result.is_error is True
        assert result.content[0].text == (
            "ApprovalDenied: book_train was not executed: the user cancelled the approval"
        )
    assert asked[0].startswith('Approve book_train with {"date": "2026-12-01"')


def assert_trace_checks(trace: Path, tmp_path: Path, refusals: int = 1) -> None:
    lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    assert all(line_problems(x, source="live") == [] for x in lines)  # wall: a live session
    assert all(x["detail"]["wall"].endswith("Z") for x in lines)
    labels = [x["label"] for x in lines if x["tool"] == "book_train"]
    assert labels == ["call", "validate", "approve", "execute", "result"] + refusals * [
        "call",
        "validate",
        "deny",
    ]
    scenario = load_scenario(TRAIN)
    report = check_trace(trace, scenario)
    assert report.ok, [(v.name, v.message) for v in report.verdicts if not v.ok]
    cut = tmp_path / "no-approval.jsonl"
    kept = [x for x in lines if x["label"] != "approve"]
    for i, x in enumerate(kept):
        x["seq"] = i
    cut.write_text("".join(json.dumps(x) + "\n" for x in kept), encoding="utf-8")
    verdicts = {v.name: v for v in check_trace(cut, scenario).verdicts}
    assert verdicts["write_approval"].violations == 1
    assert "a write tool, with no approve" in verdicts["write_approval"].message


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_stdio_client_accepts_once_and_declines_once(
    revision: str, tmp_path: Path, shared_data: Path
) -> None:
    trace, wire = tmp_path / "trace.jsonl", tmp_path / "wire.jsonl"
    serve = [*warm_sim(), "serve", "mcp", str(TRAIN), "--trace", str(trace)]
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "tests" / "harness" / "wire_tap.py"), str(wire), "--", *serve],
        cwd=str(REPO),
    )
    asked: list[str] = []
    answers = ["accept", "decline", "cancel"]

    async def session() -> list[Any]:
        with anyio.fail_after(30):
            async with Client(
                params, mode=MODES[revision], elicitation_callback=answering(answers, asked)
            ) as client:
                assert client.session.protocol_version == revision
                assert len((await client.list_tools()).tools) == 6
                return await booking_session(client, answers, asked)

    assert_accept_then_decline(anyio.run(session), asked)
    assert_trace_checks(trace, tmp_path, refusals=2)
    errors, seen = frame_errors(read_log(wire), spec(shared_data, revision))
    assert errors == []
    asking = "ElicitRequest" if revision == "2025-11-25" else "InputRequiredResult"
    assert {"ListToolsResult", "CallToolResult", asking} <= seen


@pytest.mark.parametrize(
    "revision",
    [
        "2025-11-25",
        # the 2026-07-28 elicitation (InputRequiredResult) and its caller key (clientInfo)
        # run in the default suite over stdio (test_stdio_client_accepts_once_and_declines_
        # once[2026-07-28]), the HTTP transport here in 2025-11-25, a 2026-07-28 call over
        # HTTP in test_interop_http, its tools/list cache fields in test_interop_fidelity
        pytest.param("2026-07-28", marks=pytest.mark.slow),
    ],
)
def test_http_client_lists_calls_and_is_asked(
    revision: str, tmp_path: Path, shared_data: Path
) -> None:
    """The issue's must-hold: a real SDK client over Streamable HTTP on 127.0.0.1 lists and
    calls the tools of train_booking; book_train asks; accept executes, decline does not;
    the trace passes check; every frame validates against the revision's schema."""
    trace = tmp_path / "trace.jsonl"
    frames: list[tuple[str, Any]] = []
    asked: list[str] = []
    answers = ["accept", "decline"]

    async def session(url: str) -> list[Any]:
        with anyio.fail_after(30):
            async with http_tap(frames) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(
                    transport, mode=MODES[revision], elicitation_callback=answering(answers, asked)
                ) as client:
                    assert client.session.protocol_version == revision
                    listed = await client.list_tools()
                    assert [t.name for t in listed.tools][:4] == [
                        "fetch_user",
                        "use_cached_data",
                        "check_balance",
                        "book_train",
                    ]
                    return await booking_session(client, answers, asked)

    with http_server(TRAIN, "--trace", str(trace)) as url:
        results = anyio.run(session, url)
    assert_accept_then_decline(results, asked)
    assert_trace_checks(trace, tmp_path)
    errors, seen = frame_errors(frames, spec(shared_data, revision))
    assert errors == []
    asking = "ElicitRequest" if revision == "2025-11-25" else "InputRequiredResult"
    assert {"ListToolsResult", "CallToolResult", asking} <= seen
    if revision == "2026-07-28":
        listing = next(
            m["result"] for d, m in frames if d == "out" and "tools" in m.get("result", {})
        )
        assert listing["ttlMs"] == 60000 and listing["cacheScope"] == "public"


def test_a_client_without_elicitation_is_refused_as_each_revision_prescribes(
    tmp_path: Path, shared_data: Path
) -> None:
    """2026-07-28: MissingRequiredClientCapabilityError -32021 naming the capability;
    2025-11-25: an isError refusal. Nothing executes; the trace records a deny; the frames
    validate (the error against its own definition)."""
    trace = tmp_path / "trace.jsonl"
    serve = [*warm_sim(), "serve", "mcp", str(TRAIN), "--trace", str(trace)]

    def tapped(log: Path) -> StdioServerParameters:
        tap = [str(REPO / "tests" / "harness" / "wire_tap.py"), str(log), "--"]
        return StdioServerParameters(command=sys.executable, args=[*tap, *serve], cwd=str(REPO))

    async def session() -> tuple[Any, Any]:
        with anyio.fail_after(30):
            async with Client(tapped(tmp_path / "modern.jsonl"), mode="2026-07-28") as modern:
                with pytest.raises(MCPError) as missing:
                    await modern.call_tool("book_train", TRIP)
            async with Client(tapped(tmp_path / "legacy.jsonl"), mode="legacy") as legacy:
                refused = await legacy.call_tool("book_train", TRIP)
            return missing.value, refused

    error, refused = anyio.run(session)
    assert error.error.code == -32021
    assert error.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert "did not declare the elicitation capability" in error.error.message
    assert refused.is_error is True
    assert "did not declare the elicitation capability" in refused.content[0].text
    labels = [json.loads(x)["label"] for x in trace.read_text(encoding="utf-8").splitlines()]
    assert labels == ["call", "validate", "deny"]  # the second server rewrote the file
    for name, revision in (("modern", "2026-07-28"), ("legacy", "2025-11-25")):
        errors, _ = frame_errors(read_log(tmp_path / f"{name}.jsonl"), spec(shared_data, revision))
        assert errors == []
    assert (
        "MissingRequiredClientCapabilityError"
        in frame_errors(read_log(tmp_path / "modern.jsonl"), spec(shared_data, "2026-07-28"))[1]
    )


def test_a_forged_request_state_is_rejected(tmp_path: Path) -> None:
    command, *serve = [*warm_sim(), "serve", "mcp", str(TRAIN)]
    params = StdioServerParameters(command=command, args=serve, cwd=str(REPO))

    async def elicit(ctx: Any, p: Any) -> mt.ElicitResult:
        return mt.ElicitResult(action="accept")

    async def session() -> str:
        with anyio.fail_after(30):
            async with Client(params, mode="2026-07-28", elicitation_callback=elicit) as c:
                first = await c.session.call_tool("book_train", TRIP, allow_input_required=True)
                assert isinstance(first, mt.InputRequiredResult)
                assert first.request_state is not None
                answer = {"approval": mt.ElicitResult(action="accept")}
                other = {**TRIP, "date": "2027-01-01"}  # the state was sealed for TRIP
                try:
                    await c.session.call_tool(
                        "book_train",
                        other,
                        input_responses=answer,
                        request_state=first.request_state,
                    )
                except MCPError as exc:
                    return f"{exc.error.code}: {exc.error.message}"
                return "accepted"

    assert anyio.run(session).startswith("-32602: Invalid requestState")


def test_frame_validation_names_what_a_bad_frame_lacks(shared_data: Path) -> None:
    """The frame check can fail: a 2026-07-28 tools/list result without its cache fields,
    an elicitation request without a message."""
    frames: list[tuple[str, Any]] = [
        ("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        ("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}}),
    ]
    errors, seen = frame_errors(frames, spec(shared_data, "2026-07-28"))
    assert "ListToolsResult" in seen
    assert any("'ttlMs' is a required property" in e for e in errors)
    ask = {"mode": "form", "requestedSchema": {"type": "object", "properties": {}}}
    bad = [("out", {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": ask})]
    errors, _ = frame_errors(bad, spec(shared_data, "2025-11-25"))
    assert any(e.startswith("ElicitRequest: params: ") and "not valid" in e for e in errors)
