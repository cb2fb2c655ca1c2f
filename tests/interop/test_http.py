"""``serve mcp FILE --http HOST:PORT`` on bad addresses (the sessions over Streamable HTTP,
both revisions, are in ``tests/interop/test_approval.py``)."""

from __future__ import annotations

import pytest

from sim.cli import main
from tests.harness.mcp_http import REPO, http_server

TRAIN = REPO / "scenarios" / "train_booking.yaml"
TRIP = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1", "expected HOST:PORT"),
        ("127.0.0.1:70000", "the port must be a number from 0 to 65535"),
        ("::1:80", "write an IPv6 host in brackets"),
        ("no-such-host.invalid:80", "cannot resolve 'no-such-host.invalid'"),
    ],
)
def test_a_bad_address_is_bad_input(
    address: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "mcp", str(TRAIN), "--http", address]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_raw_http_requests_get_json_rpc_answers() -> None:
    """Over HTTP the SDK's transport does the framing: a body that is not JSON is a -32700
    error, a body over ``--max-frame`` is refused with 413, and a 2026-07-28 call of an
    approval tool by a client without elicitation is 400 with -32021."""
    import httpx2

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "book_train", "arguments": TRIP, "_meta": meta},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "book_train",
    }
    with (
        http_server(TRAIN, "--max-frame", "2000", warm=False) as url,
        httpx2.Client(timeout=30) as http,
    ):
        garbage = http.post(url, content=b"{not json", headers=headers)
        assert garbage.json()["error"]["code"] == -32700
        huge = http.post(url, content=b" " * 5000, headers=headers)
        assert huge.status_code == 413
        refused = http.post(url, json=call, headers=headers)
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
