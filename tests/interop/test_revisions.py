"""Revisions negotiated as the spec says and one JSON-RPC answer per message whatever the
transport (issue 32, item 3; issue 38, items 1 and 9): an ``initialize`` offering a
revision ``serve mcp`` does not implement gets 2025-11-25 back; a header that contradicts
the body is -32020; every malformed message gets the same error over stdio and HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import yaml

from tests.harness.mcp_http import REPO, http_server
from tests.harness.warm_sim import warm_sim

TRAIN = REPO / "scenarios" / "train_booking.yaml"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

#: messages no transport may hand to the SDK, and the answer each gets (the repro files)
ATTACK = REPO / "tests" / "fixtures" / "attack" / "jsonrpc"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load((ATTACK / "expected.yaml").read_text())
MALFORMED: list[tuple[str, bytes]] = [(n, (ATTACK / f"{n}.txt").read_bytes()) for n in EXPECTED]


def message(answer: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, whether JSON or one SSE event."""
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [x[5:] for x in answer.text.splitlines() if x.startswith("data:")]
        out: dict[str, Any] = json.loads(data[-1])
        return out
    out = answer.json()
    return out


def initialize(version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "old-client", "version": "1"},
        },
    }


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server(TRAIN) as served:
        yield served


@pytest.fixture(scope="module")
def stdio_answers() -> dict[str, dict[str, Any]]:
    """Every MALFORMED line sent to one ``serve mcp`` over stdio, answered in order."""
    frames = b"".join(body + b"\n" for _, body in MALFORMED)
    done = subprocess.run(
        [*warm_sim(), "serve", "mcp", str(TRAIN)],
        input=frames,
        capture_output=True,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert len(lines) == len(MALFORMED), done.stderr.decode()
    return {name: line for (name, _), line in zip(MALFORMED, lines, strict=True)}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_an_older_revision_is_answered_with_the_one_served(version: str, url: str) -> None:
    with httpx2.Client(timeout=30) as http:
        answer = http.post(url, json=initialize(version), headers=ACCEPT)
        assert answer.status_code == 200
        result = message(answer)["result"]
        assert result["protocolVersion"] == "2025-11-25"
        session = answer.headers["mcp-session-id"]
        old = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": version}
        listed = http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=old
        )
        assert listed.status_code == 400, listed.text


def test_the_served_revision_is_kept_and_its_header_accepted(url: str) -> None:
    with httpx2.Client(timeout=30) as http:
        answer = http.post(url, json=initialize("2025-11-25"), headers=ACCEPT)
        assert message(answer)["result"]["protocolVersion"] == "2025-11-25"
        headers = {
            **ACCEPT,
            "Mcp-Session-Id": answer.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=done, headers=headers).status_code == 202
        listed = http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
        )
        assert listed.status_code == 200
        assert "book_train" in listed.text


def test_a_header_that_contradicts_the_body_is_a_header_mismatch(url: str) -> None:
    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": MODERN_META}}
    headers = {**ACCEPT, "MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}
    with httpx2.Client(timeout=30) as http:
        answer = http.post(url, json=request, headers=headers)
    assert answer.status_code == 400
    body = answer.json()
    assert body["id"] == 3
    assert body["error"]["code"] == -32020
    assert body["error"]["message"].startswith(
        "Header mismatch: MCP-Protocol-Version header '2025-11-25' does not match"
    )


def test_stdio_answers_an_older_revision_the_same_way() -> None:
    frame = json.dumps(initialize("2024-11-05")).encode() + b"\n"
    done = subprocess.run(
        [*warm_sim(), "serve", "mcp", str(TRAIN)],
        input=frame,
        capture_output=True,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    (line,) = done.stdout.splitlines()
    assert json.loads(line)["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize(("name", "body"), MALFORMED, ids=[n for n, _ in MALFORMED])
def test_both_transports_give_a_malformed_message_the_same_answer(
    name: str, body: bytes, url: str, stdio_answers: dict[str, dict[str, Any]]
) -> None:
    with httpx2.Client(timeout=30) as http:
        answer = http.post(
            url, content=body, headers={**ACCEPT, "MCP-Protocol-Version": "2025-11-25"}
        )
    assert answer.status_code == 400
    over_http, over_stdio = answer.json(), stdio_answers[name]
    assert over_http == over_stdio
    assert over_http["error"]["code"] == EXPECTED[name]["code"]
    assert over_http["id"] == EXPECTED[name]["id"]


def _call(i: int) -> dict[str, Any]:
    params = {"name": "fetch_user", "arguments": {"user_id": "u1"}}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def test_a_trace_that_cannot_be_written_refuses_every_call_and_ends_in_exit_2() -> None:
    """``--trace /dev/full``: each call is answered -32603 naming the refusal (nothing is
    served without its trace) and the command ends with one line, exit 2."""
    session = [
        initialize("2025-11-25"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _call(1),
        _call(2),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "sim", "serve", "mcp", str(TRAIN), "--trace", "/dev/full"],
        input=b"".join(json.dumps(m).encode() + b"\n" for m in session),
        capture_output=True,
        cwd=REPO,
        timeout=60,
    )
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    refused = "--trace /dev/full: cannot write: No space left on device"
    for answer in answers[1:]:
        assert answer["error"]["code"] == -32603
        assert answer["error"]["message"].startswith(refused)
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert done.returncode == 2
    assert done.stderr.decode().splitlines()[-1].startswith(f"error: serve stopped: {refused}")
