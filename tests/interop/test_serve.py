"""``serve mcp FILE``: a real MCP server a real MCP client can use (issue 7, item 4). The SDK's
client lists and calls tools; the raw frames have the shapes of the real sessions in the
repository's ``data/mcp_wire/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams

from sim import __version__
from sim.calculus.mcp import MCP_PLUS_META
from sim.interop.tools_list import spec_errors
from tests.harness.raw_session import REPO, RawSession
from tests.harness.warm_sim import warm_sim

FAILING = """\
name: always-failing
protocols: [MCP+]
agents:
  - id: desk
    type: TOOL_SERVER
    protocols: {MCP+: 1.0}
    tools: [reserve, lookup]
    concurrency: 1
tools:
  - name: reserve
    description: Reserves a seat on a train for a passenger.
    input_schema:
      type: object
      required: [passenger]
      properties: {passenger: {type: string}, seats: {type: integer, minimum: 1}}
    side_effects: write
    requires_approval: false
    failure_modes: [{error: SoldOut, recovery: {abort: true}}]
    service_time: {dist: constant, value: 5.0}
    errors: {SoldOut: 1.0}
  - name: lookup
    description: Looks up a passenger record by name.
    side_effects: read
    service_time: {dist: constant, value: 5.0}
"""


def serve(path: Path, *extra: str) -> StdioServerParameters:
    command, *args = [*warm_sim(), "serve", "mcp", str(path), "--speed", "instant", *extra]
    return StdioServerParameters(command=command, args=args, cwd=str(REPO))


@pytest.fixture(scope="module")
def mcp_spec(shared_data: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (shared_data / "mcp_spec" / "schema-2025-11-25.json").read_text(encoding="utf-8")
    )
    return data


@pytest.fixture
def failing(tmp_path: Path) -> Path:
    path = tmp_path / "failing.yaml"
    path.write_text(FAILING, encoding="utf-8")
    return path


def test_sdk_client_against_the_train_booking_scenario(mcp_spec: dict[str, Any]) -> None:
    """A client without the elicitation capability: book_train (requires_approval) is
    refused, never executed; a bad argument is an isError result (2025-11-25)."""

    async def session() -> None:
        with anyio.fail_after(30):
            async with (
                stdio_client(serve(REPO / "scenarios" / "train_booking.yaml")) as (r, w),
                ClientSession(r, w) as s,
            ):
                init = await s.initialize()
                assert init.server_info.name == "train-booking"
                assert init.server_info.version == __version__
                listed = await s.list_tools()
                dumped = listed.model_dump(by_alias=True, mode="json", exclude_none=True)
                for key in ("resultType", "ttlMs", "cacheScope"):  # the SDK model's defaults
                    dumped.pop(key, None)
                assert spec_errors(dumped, mcp_spec) == []
                tools = {t.name: t for t in listed.tools}
                assert set(tools) >= {"fetch_user", "book_train", "send_ticket"}
                for t in tools.values():
                    assert t.meta is not None and MCP_PLUS_META in t.meta
                book = tools["book_train"]
                assert book.meta is not None
                meta = book.meta[MCP_PLUS_META]
                assert meta["side_effects"] == "write" and meta["requires_approval"] is True
                assert book.annotations is not None
                assert book.annotations.read_only_hint is False
                assert book.annotations.destructive_hint is False
                ok = await s.call_tool("fetch_user", {"user_id": "u1"})
                assert ok.is_error is False
                body = json.loads(ok.content[0].text)  # type: ignore[union-attr]
                assert body["status"] == "ok" and body["arguments"] == {"user_id": "u1"}
                args = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}
                refused = await s.call_tool("book_train", args)
                assert refused.is_error is True
                assert refused.content[0].text.startswith(  # type: ignore[union-attr]
                    "ApprovalDenied: book_train was not executed: it requires approval "
                    "(requires_approval) and the client did not declare the elicitation"
                )
                bad = await s.call_tool("fetch_user", {"user_id": 8507000})
                assert bad.is_error is True
                assert bad.content[0].text == (  # type: ignore[union-attr]
                    "Invalid arguments for tool fetch_user: 8507000 is not of type 'string' "
                    "at user_id"
                )
                with pytest.raises(MCPError) as unknown:
                    await s.call_tool("fly_rocket", {})
                assert unknown.value.code == -32602
                assert unknown.value.message == "Unknown tool: fly_rocket"

    anyio.run(session)


def test_sdk_client_gets_an_is_error_result_for_an_injected_error(failing: Path) -> None:
    async def session() -> None:
        with anyio.fail_after(30):
            async with (
                stdio_client(serve(failing, "--seed", "3")) as (r, w),
                ClientSession(r, w) as s,
            ):
                await s.initialize()
                for _ in range(3):
                    res = await s.call_tool("reserve", {"passenger": "Ada"})
                    assert res.is_error is True
                    text = res.content[0].text  # type: ignore[union-attr]
                    assert text.startswith("SoldOut: ")
                good = await s.call_tool("lookup", {})
                assert good.is_error is False

    anyio.run(session)


def wire(shared_data: Path, name: str) -> list[dict[str, Any]]:
    lines = (shared_data / "mcp_wire" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(ln)["msg"] for ln in lines if ln.strip()]


def shape(x: Any) -> Any:
    """The keys of a frame, recursively (lists by their first item); values dropped."""
    if isinstance(x, dict):
        return {k: shape(v) for k, v in x.items()}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    return type(x).__name__


def test_frames_have_the_shapes_of_real_servers(
    failing: Path, shared_data: Path, mcp_spec: dict[str, Any]
) -> None:
    time_frames = wire(shared_data, "time.jsonl")
    real_is_error = next(
        f for f in time_frames if f.get("result", {}).get("isError") is True and f["id"] == 2
    )
    real_unknown = next(f for f in time_frames if "error" in f)
    raw = RawSession([*warm_sim(), "serve", "mcp", str(failing)])
    try:
        init = {k: v for k, v in time_frames[0].items()}
        raw.send(init)
        answer = raw.receive()
        assert answer["id"] == 0 and answer["result"]["protocolVersion"] == "2025-11-25"
        assert spec_errors(answer["result"], mcp_spec, "InitializeResult") == []
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        listed = raw.receive()
        assert spec_errors(listed, mcp_spec, "JSONRPCResultResponse") == []
        assert spec_errors(listed["result"], mcp_spec, "ListToolsResult") == []
        assert listed["result"]["tools"][0]["_meta"][MCP_PLUS_META]["side_effects"] == "write"
        call = {"name": "reserve", "arguments": {"passenger": "Ada"}}
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        failed = raw.receive()
        assert spec_errors(failed["result"], mcp_spec, "CallToolResult") == []
        assert shape(failed) == shape(real_is_error)
        assert failed["result"]["content"][0]["text"].startswith("SoldOut: ")
        bad = {"name": "reserve", "arguments": {"passenger": "Ada", "seats": 0}}
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": bad})
        invalid = raw.receive()
        assert spec_errors(invalid["result"], mcp_spec, "CallToolResult") == []
        assert shape(invalid) == shape(real_is_error)
        assert invalid["result"]["isError"] is True
        assert "seats" in invalid["result"]["content"][0]["text"]
        nope = {"name": "no_such_tool", "arguments": {}}
        raw.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": nope})
        unknown = raw.receive()
        assert unknown == {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32602, "message": "Unknown tool: no_such_tool"},
        }
        assert unknown == {**real_unknown, "id": 4}
    finally:
        code = raw.close()
    assert code == 0


def test_arg_errors_protocol_gives_the_old_json_rpc_error(failing: Path, shared_data: Path) -> None:
    """By default a bad argument is an isError result (``test_frames_have_the_shapes_of_real_
    servers``); ``--arg-errors protocol`` gives the JSON-RPC error -32602 of a real server's
    shape instead."""
    memory = wire(shared_data, "memory.jsonl")
    real_unknown = next(f for f in wire(shared_data, "time.jsonl") if "error" in f)
    bad = {"name": "reserve", "arguments": {"passenger": 7}}
    argv = [*warm_sim(), "serve", "mcp", str(failing), "--arg-errors", "protocol"]
    raw = RawSession(argv)
    try:
        raw.send(memory[0])
        raw.receive()
        raw.send(memory[2])
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": bad})
        frame = raw.receive()
        assert shape(frame) == shape(real_unknown)
        assert frame["error"] == {
            "code": -32602,
            "message": "Invalid arguments for tool reserve: 7 is not of type 'string' at passenger",
        }
    finally:
        assert raw.close() == 0


def test_serve_pages_tools_list_and_import_follows_the_cursor() -> None:
    """``serve --page-size 2`` splits the six tools of train_booking into three pages that
    our own ``import mcp`` client follows; a forged cursor is a -32602 error."""
    from sim.interop.client import fetch_tools

    command = [
        *warm_sim(),
        "serve",
        "mcp",
        str(REPO / "scenarios" / "train_booking.yaml"),
        "--page-size",
        "2",
    ]
    listing = fetch_tools(command, timeout=30)
    assert listing.pages == 3
    names = [t["name"] for t in listing.tools["tools"]]
    assert names == [
        "fetch_user",
        "use_cached_data",
        "check_balance",
        "book_train",
        "send_ticket",
        "print_ticket",
    ]

    async def forged() -> list[str]:
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))
        answers = []
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            for cursor in ("offset-99", "offset-1", "offset-6", "offset-0", "offset-2"):
                try:
                    page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                except MCPError as exc:
                    answers.append(f"{exc.error.code}: {exc.error.message}")
                else:
                    answers.append(",".join(t.name for t in page.tools))
        return answers

    assert anyio.run(forged) == [
        "-32602: Invalid cursor: offset-99",
        "-32602: Invalid cursor: offset-1",  # not issued: pages start at multiples of 2
        "-32602: Invalid cursor: offset-6",
        "-32602: Invalid cursor: offset-0",
        "check_balance,book_train",
    ]
