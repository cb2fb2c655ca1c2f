"""docs/a2a.md names the JSON-RPC methods ``serve a2a`` answers at ``/a2a``: a client that
follows the page must not get -32601 Method not found. Each method the page lists is sent,
raw JSON-RPC over real HTTP, to a real ``serve a2a`` on 127.0.0.1."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

from tests.harness.mcp_http import A2A_URL, http_server
from tests.harness.paths import REPO

PAGE = REPO / "docs" / "a2a.md"
TRAIN = REPO / "scenarios" / "train_booking.yaml"


def _listed() -> list[str]:
    """The methods of the sentence 'JSON-RPC at `/a2a` (`A`, `B`, ...)'."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    found = re.search(r"JSON-RPC at `/a2a` \(([^)]*)\)", text)
    assert found, "docs/a2a.md no longer says which methods /a2a answers"
    return re.findall(r"`([^`]+)`", found.group(1))


def _post(url: str, method: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(request, timeout=20) as reply:
        answer: dict[str, Any] = json.loads(reply.read())
    return answer


def test_every_method_the_page_names_is_served() -> None:
    methods = _listed()
    assert len(methods) >= 4
    with http_server(TRAIN, "--agent", "tickets", kind="a2a", url=A2A_URL, warm=False) as base:
        answers = {m: _post(base + "/a2a", m) for m in methods}
    codes = {
        m: a["error"].get("code") for m, a in answers.items() if isinstance(a.get("error"), dict)
    }
    assert [m for m, code in codes.items() if code == -32601] == [], answers
