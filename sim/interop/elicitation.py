"""Approval as MCP elicitation: what ``serve mcp`` asks a real client's user before it
executes a tool whose descriptor, as the client sees it, requires approval.

- 2025-11-25: an ``elicitation/create`` request (form mode) sent while the ``tools/call``
  is open; the answer's ``action`` decides.
- 2026-07-28 (multi round-trip requests): the ``tools/call`` is answered with an
  ``InputRequiredResult`` whose ``inputRequests`` hold the same form under
  :data:`APPROVAL_KEY` and whose ``requestState`` is :class:`StateSeal`'s token; the client
  retries the call with ``inputResponses[APPROVAL_KEY]`` and that state.

The form asks for nothing (``requestedSchema`` with no properties): ``accept`` approves,
``decline`` and ``cancel`` refuse (an ``isError`` result saying the tool was not executed).
A client that did not declare the ``elicitation`` capability (form mode) is never sent one
(both revisions forbid it): in 2026-07-28 it gets the prescribed
``MissingRequiredClientCapabilityError`` (-32021, ``requiredCapabilities``); 2025-11-25 has
no such error, so it gets the refusal as an ``isError`` result.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Mapping
from typing import Any

__all__ = [
    "APPROVAL_KEY",
    "MISSING_CAPABILITY",
    "REQUESTED_SCHEMA",
    "StateSeal",
    "approval_message",
    "elicits_form",
    "refusal",
]

APPROVAL_KEY = "approval"
"""The ``inputRequests``/``inputResponses`` key of the approval question."""
MISSING_CAPABILITY = -32021
"""2026-07-28 ``MissingRequiredClientCapabilityError``."""
REQUESTED_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
STATE_TTL = 600.0
"""Seconds a ``requestState`` stays valid."""


def approval_message(tool: str, arguments: Mapping[str, Any], reason: str) -> str:
    """The question shown to the user."""
    shown = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True)
    return f"Approve {tool} with {shown}? (protomesh asks because {reason})"


def refusal(tool: str, why: str) -> str:
    """The text of the ``isError`` result of a refused call."""
    return f"ApprovalDenied: {tool} was not executed: {why}"


def elicits_form(capabilities: Any) -> bool:
    """Whether declared client ``capabilities`` (the SDK's model, or None) allow a form
    elicitation: ``elicitation`` present with ``form``, or empty (form by default)."""
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    form, url = getattr(elicitation, "form", None), getattr(elicitation, "url", None)
    return form is not None or url is None


class StateSeal:
    """``requestState`` tokens bound by HMAC-SHA256 (a per-process key) to the invocation,
    the tool, a digest of the arguments and an expiry: a client cannot forge one, move it
    to another call, or keep it past :data:`STATE_TTL` seconds."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes | None = None) -> None:
        self._key = os.urandom(32) if key is None else key

    @staticmethod
    def _digest(tool: str, arguments: Mapping[str, Any]) -> str:
        text = json.dumps([tool, dict(arguments)], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()

    def seal(self, inv: int, tool: str, arguments: Mapping[str, Any]) -> str:
        """The token for invocation ``inv`` of ``tool`` with ``arguments``."""
        payload = {"inv": inv, "args": self._digest(tool, arguments), "at": time.time()}
        body = json.dumps(payload, separators=(",", ":")).encode()
        return self._token(body)

    def _token(self, body: bytes) -> str:
        encode = base64.urlsafe_b64encode
        return encode(body).decode() + "." + encode(self._mac(body)).decode()

    def open(self, token: str, tool: str, arguments: Mapping[str, Any]) -> int | None:
        """The invocation ``token`` was sealed for, or None when it was not sealed here,
        was sealed for another call, or expired."""
        body_text, _, mac_text = token.partition(".")
        try:
            body = base64.urlsafe_b64decode(body_text.encode())
            mac = base64.urlsafe_b64decode(mac_text.encode())
            if not hmac.compare_digest(mac, self._mac(body)):
                return None
            if token != self._token(body):  # one spelling per state (base64 has others)
                return None
            payload = json.loads(body)
        except (ValueError, TypeError):
            return None
        if payload.get("args") != self._digest(tool, arguments):
            return None
        if not 0 <= time.time() - float(payload.get("at", 0)) <= STATE_TTL:
            return None
        inv = payload.get("inv")
        return inv if isinstance(inv, int) else None
