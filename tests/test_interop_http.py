"""``serve mcp FILE --http HOST:PORT``: the SDK's own client lists and calls the tools of
``scenarios/train_booking.yaml`` over Streamable HTTP on 127.0.0.1, under both revisions."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from mcp import Client
from mcp_http import REPO, http_server

TRAIN = REPO / "scenarios" / "train_booking.yaml"
ARGS = {"user_id": "u1"}


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_sdk_client_lists_and_calls_over_streamable_http(mode: str, revision: str) -> None:
    async def session(url: str) -> None:
        with anyio.fail_after(30):
            async with Client(url, mode=mode) as client:
                assert client.session.protocol_version == revision
                listed = await client.list_tools()
                names = [t.name for t in listed.tools]
                assert names == [
                    "fetch_user",
                    "use_cached_data",
                    "check_balance",
                    "book_train",
                    "send_ticket",
                    "print_ticket",
                ]
                result = await client.call_tool("fetch_user", ARGS)
                assert result.is_error is False
                body = json.loads(result.content[0].text)  # type: ignore[union-attr]
                assert body == {
                    "tool": "fetch_user",
                    "status": "ok",
                    "simulated": True,
                    "arguments": ARGS,
                }

    with http_server(TRAIN) as url:
        anyio.run(session, url)


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1", "expected HOST:PORT"),
        ("127.0.0.1:70000", "the port must be a number from 0 to 65535"),
        ("::1:80", "write an IPv6 host in brackets"),
    ],
)
def test_a_bad_address_is_bad_input(address: str, message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sim", "serve", "mcp", str(TRAIN), "--http", address],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
