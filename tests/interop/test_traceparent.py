"""``serve mcp`` and W3C trace context: a real MCP client (the official SDK) sends a
``traceparent`` in the call's ``_meta`` and another in the HTTP header; the session trace
records each on its call, and ``export otel`` puts every span of each request in the
client's trace, under the client's span."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from sim.cli import main
from tests.harness.mcp_http import REPO, http_server

TRAIN = REPO / "scenarios" / "train_booking.yaml"
IN_META = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
IN_HEADER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
INVALID = "00-00000000000000000000000000000000-b7ad6b7169203331-01"


async def _calls(url: str) -> None:
    """A call with the context in ``_meta``, then one with an invalid context there (one
    session); a call with the context in the HTTP header (another)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    sessions = [({}, [IN_META, INVALID]), ({"traceparent": IN_HEADER}, [None])]
    for headers, metas in sessions:
        async with httpx2.AsyncClient(timeout=30, headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="auto", cache=None) as client:
                for value in metas:
                    meta = {"traceparent": value} if value else None
                    result = await client.call_tool("check_balance", {"user_id": "u"}, meta=meta)
                    assert not result.is_error


def spans_of(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_a_clients_traceparent_is_its_requests_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with http_server(TRAIN, "--trace", str(trace)) as url:
        anyio.run(_calls, url)
    lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    calls = [x for x in lines if x["label"] == "call"]
    assert [x["detail"].get("traceparent") for x in calls] == [IN_META, None, IN_HEADER]
    out = tmp_path / "spans.json"
    argv = ["export", "otel", str(trace), "--scenario", str(TRAIN), "--out", str(out)]
    assert main(argv) == 0  # the serve trace's wall: no --epoch
    spans = spans_of(out)
    for sent in (IN_META, IN_HEADER):
        _, trace_id, parent, _ = sent.split("-")
        mine = [s for s in spans if s["traceId"] == trace_id]
        assert [s["name"] for s in mine] == ["tools/call check_balance"]
        assert mine[0]["parentSpanId"] == parent
    untraced = [
        s for s in spans if s["traceId"] not in (IN_META.split("-")[1], IN_HEADER.split("-")[1])
    ]
    assert {s["name"] for s in untraced} == {"workflow serve", "tools/call check_balance"}
