"""``serve mcp``'s JSON-RPC 2.0 framing (issue 16, item 5): raw bytes into the real server over
stdio; every line that is not a message gets its error (-32700, -32600), never silence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.interop.framing import INVALID_REQUEST, PARSE_ERROR, Rejection, Screen, classify
from tests.harness.warm_sim import warm_sim

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "train_booking.yaml"

INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def exchange(frames: list[bytes], *extra: str, warm: bool = True) -> list[dict[str, Any]]:
    """Send ``frames`` to a fresh ``serve mcp`` (started warm, or with ``warm=False`` as
    ``python -m sim``), close stdin, return every answer line."""
    sim = warm_sim() if warm else [sys.executable, "-m", "sim"]
    proc = subprocess.run(
        [*sim, "serve", "mcp", str(SCENARIO), *extra],
        input=b"".join(frames),
        capture_output=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr
    return [json.loads(raw) for raw in proc.stdout.splitlines()]


#: (name, raw line, expected code, a phrase of the message); each gets its own answer, id null.
MALFORMED: list[tuple[str, bytes, int, str]] = [
    ("invalid JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', PARSE_ERROR, "Parse error"),
    ("not UTF-8", b'{"jsonrpc": "2.0", "method": "\xff\xfe"}', PARSE_ERROR, "not UTF-8"),
    ("a number", b"42", INVALID_REQUEST, "a number, not a JSON-RPC message"),
    ("a string", b'"ping"', INVALID_REQUEST, "a string, not a JSON-RPC message"),
    ("null", b"null", INVALID_REQUEST, "null, not a JSON-RPC message"),
    ("no jsonrpc member", b'{"hello": "world"}', INVALID_REQUEST, 'no "jsonrpc"'),
    ("an object id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST, '"id"'),
    ("a boolean id", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, "boolean"),
    ("a method that is a number", b'{"jsonrpc":"2.0","method":7}', INVALID_REQUEST, '"method"'),
    ("an empty batch", b"[]", INVALID_REQUEST, "empty batch"),
    (
        "a batch",
        line([{"jsonrpc": "2.0", "id": 9, "method": "ping"}]).strip(),
        INVALID_REQUEST,
        "no JSON-RPC batches",
    ),
    ("nested too deeply", b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR, "nested too deeply"),
]

#: (name, raw line, id, phrase): answered with their own id.
MALFORMED_WITH_ID: list[tuple[str, bytes, Any, str]] = [
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":"v1","method":"ping"}', "v1", '"1.0"'),
    ("an id without method", b'{"jsonrpc":"2.0","id":"bare"}', "bare", 'without "method"'),
    (
        "params an array",
        b'{"jsonrpc":"2.0","id":"arr","method":"ping","params":[1]}',
        "arr",
        "params",
    ),
]


@pytest.fixture(scope="module")
def initialized_answers() -> list[dict[str, Any]]:
    frames = [line(INIT), line(INITIALIZED)]
    frames += [raw + b"\n" for _, raw, _, _ in MALFORMED]
    frames += [raw + b"\n" for _, raw, _, _ in MALFORMED_WITH_ID]
    frames.append(line({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
    return exchange(frames)


@pytest.mark.parametrize(
    ("name", "raw", "code", "phrase"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_a_line_that_is_not_a_message_gets_its_error(
    initialized_answers: list[dict[str, Any]], name: str, raw: bytes, code: int, phrase: str
) -> None:
    anonymous = [a for a in initialized_answers if a.get("id") is None]
    assert len(anonymous) == len(MALFORMED), anonymous
    answer = anonymous[[m[0] for m in MALFORMED].index(name)]
    assert answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == code
    assert phrase in answer["error"]["message"]


@pytest.mark.parametrize(
    ("name", "raw", "msg_id", "phrase"), MALFORMED_WITH_ID, ids=[m[0] for m in MALFORMED_WITH_ID]
)
def test_an_invalid_request_with_a_usable_id_is_answered_with_that_id(
    initialized_answers: list[dict[str, Any]], name: str, raw: bytes, msg_id: Any, phrase: str
) -> None:
    (answer,) = [a for a in initialized_answers if a.get("id") == msg_id]
    assert answer["error"]["code"] == INVALID_REQUEST
    assert phrase in answer["error"]["message"]


def test_the_server_still_answers_after_every_bad_line(
    initialized_answers: list[dict[str, Any]],
) -> None:
    assert initialized_answers[0]["id"] == "init" and "result" in initialized_answers[0]
    assert {"jsonrpc": "2.0", "id": "last", "result": {}} in initialized_answers


def test_requests_before_initialize_are_refused_except_ping() -> None:
    answers = exchange(
        [
            line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            line({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            line(INIT),
            line(INITIALIZED),
            line({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        ]
    )
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["error"]["code"] == INVALID_REQUEST
    assert "not initialized" in by_id[1]["error"]["message"]
    assert by_id[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert by_id["init"]["result"]["protocolVersion"] == "2025-11-25"
    assert by_id[3]["result"]["tools"]


def test_an_oversized_frame_is_refused_by_size_and_the_next_line_served() -> None:
    big = b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"' + b"x" * 5_000_000
    big += b'"}}'
    answers = exchange(
        [line(INIT), big + b"\n", line({"jsonrpc": "2.0", "id": "after", "method": "ping"})]
    )
    (refusal,) = [a for a in answers if a.get("id") is None]
    assert refusal["error"]["code"] == INVALID_REQUEST
    assert f"{len(big)} bytes (limit 4194304 bytes)" in refusal["error"]["message"]
    assert {"jsonrpc": "2.0", "id": "after", "result": {}} in answers


def test_the_frame_limit_is_configurable() -> None:
    answers = exchange([line(INIT)], "--max-frame", "64", warm=False)  # a cold start too
    assert answers[0]["error"]["code"] == INVALID_REQUEST
    assert "(limit 64 bytes)" in answers[0]["error"]["message"]


def test_classify_keeps_notifications_and_responses_and_skips_blank_lines() -> None:
    assert classify(b"   ") is None
    assert classify(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == INITIALIZED
    response = {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}}
    assert classify(json.dumps(response).encode()) == response
    rejected = classify(b'{"jsonrpc":"2.0","result":{}}')
    assert isinstance(rejected, Rejection) and 'needs an "id"' in rejected.message


def test_a_modern_request_is_left_to_the_sdk_before_initialize() -> None:
    screen = Screen()
    modern = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    assert not isinstance(screen.admit(json.dumps(modern).encode()), Rejection)
    assert not isinstance(
        screen.admit(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'), Rejection
    )
