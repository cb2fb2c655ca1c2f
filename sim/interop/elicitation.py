"""Approval as MCP elicitation: what ``serve mcp`` asks a real client's user before it
executes a tool whose descriptor, as the client sees it, requires approval.

- 2025-11-25: an ``elicitation/create`` request (form mode) sent while the ``tools/call``
  is open; the answer's ``action`` decides.
- 2026-07-28 (multi round-trip requests): the ``tools/call`` is answered with an
  ``InputRequiredResult`` whose ``inputRequests`` hold the same form under
  :data:`APPROVAL_KEY` and whose ``requestState`` is :class:`StateSeal`'s token; the client
  retries the call with ``inputResponses[APPROVAL_KEY]`` and that state. A state is
  consumed by its answer: used again, it is refused (a JSON-RPC error, and a ``deny`` with
  ``reason`` ``replayed`` in the trace), as the revision asks of a server whose state must
  be consumed once.

The form asks for nothing (``requestedSchema`` with no properties): ``accept`` approves,
``decline`` and ``cancel`` refuse (an ``isError`` result saying the tool was not executed;
the trace's ``deny`` says ``declined`` or ``cancelled``, see :data:`sim.vocabulary.DENIALS`).
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
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "APPROVAL_KEY",
    "ELICITATION_TIMEOUT",
    "MISSING_CAPABILITY",
    "REQUESTED_SCHEMA",
    "Refused",
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
ELICITATION_TIMEOUT = 300.0
"""Seconds a 2025-11-25 approval question waits for its answer (then: deny ``timeout``)."""
STATE_TTL = 600.0
"""Seconds a ``requestState`` stays valid."""
MAX_OUTSTANDING = 1024
"""``requestState`` tokens that may wait for their answer at once."""
MAX_REMEMBERED = 4096
"""Used ``requestState`` tokens remembered (a replay of an older one is "no longer held")."""


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
    """``requestState`` tokens bound by HMAC-SHA256 (a per-process random key) to the
    invocation, the tool, a digest of the arguments, an expiry and a random nonce, and
    consumed once: a client cannot forge one, move it to another call, keep it past
    :data:`STATE_TTL` seconds or answer with it twice (an approval gates one execution).

    At most :data:`MAX_OUTSTANDING` states wait for their answer (the oldest is dropped
    first) and the last :data:`MAX_REMEMBERED` used ones are remembered, to tell a replay
    ("already used") from a state this server no longer holds."""

    __slots__ = ("_key", "_outstanding", "_used")

    def __init__(self, key: bytes | None = None) -> None:
        self._key = os.urandom(32) if key is None else key
        self._outstanding: OrderedDict[str, int] = OrderedDict()  # nonce → invocation
        self._used: OrderedDict[str, None] = OrderedDict()

    @staticmethod
    def _digest(tool: str, arguments: Mapping[str, Any]) -> str:
        text = json.dumps([tool, dict(arguments)], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()

    def seal(self, inv: int, tool: str, arguments: Mapping[str, Any]) -> str:
        """A fresh single-use token for invocation ``inv`` of ``tool`` with ``arguments``."""
        nonce = os.urandom(16).hex()
        payload = {"inv": inv, "args": self._digest(tool, arguments), "at": time.time(), "n": nonce}
        body = json.dumps(payload, separators=(",", ":")).encode()
        self._outstanding[nonce] = inv
        while len(self._outstanding) > MAX_OUTSTANDING:
            self._outstanding.popitem(last=False)
        return self._token(body)

    def _token(self, body: bytes) -> str:
        encode = base64.urlsafe_b64encode
        return encode(body).decode() + "." + encode(self._mac(body)).decode()

    def open(self, token: str, tool: str, arguments: Mapping[str, Any]) -> int | Refused:
        """The invocation ``token`` was sealed for, consuming the token; or why it is
        refused (:class:`Refused`), leaving every held state as it was."""
        body_text, _, mac_text = token.partition(".")
        try:
            body = base64.urlsafe_b64decode(body_text.encode())
            mac = base64.urlsafe_b64decode(mac_text.encode())
            if not hmac.compare_digest(mac, self._mac(body)):
                return Refused("not issued by this server")
            if token != self._token(body):  # one spelling per state (base64 has others)
                return Refused("not issued by this server")
            payload = json.loads(body)
        except (ValueError, TypeError):
            return Refused("not issued by this server")
        if payload.get("args") != self._digest(tool, arguments):
            return Refused("issued for another call (its tool or arguments differ)")
        if not 0 <= time.time() - float(payload.get("at", 0)) <= STATE_TTL:
            return Refused(f"expired (a state is answered within {STATE_TTL:g} s)")
        nonce = str(payload.get("n"))
        if nonce in self._used:
            return Refused("already used: one approval answers one call", replayed=True)
        inv = self._outstanding.pop(nonce, None)
        if inv is None:
            return Refused(
                f"no longer held (at most {MAX_OUTSTANDING} approvals wait for an answer)"
            )
        self._used[nonce] = None
        while len(self._used) > MAX_REMEMBERED:
            self._used.popitem(last=False)
        return inv


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a ``requestState`` was refused; ``replayed``: it was used before."""

    why: str
    replayed: bool = False

    def message(self) -> str:
        """The JSON-RPC error's message."""
        return f"Invalid requestState: {self.why}; nothing was executed"
