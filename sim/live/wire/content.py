"""The protomesh content of a live message as a JSON object, for the wires that carry it
in an object of their own (A2A's DataPart, JSON-RPC's params and result): one encoding,
shared by :mod:`~sim.live.wire.a2a` and :mod:`~sim.live.wire.jsonrpc`.

- a descriptor: ``{"name", <each known field's value in the scenario's shape>,
  "unknown": [fields the protocol represents but the message lost]}``, projected to the
  protocol's fields first (:meth:`~sim.live.payload.Descriptor.keep`): a protocol never
  carries a field it does not represent;
- a call: ``{"name", "arguments", "plus": {...}, "answer": {...}}`` (``plus`` only when
  not empty, ``answer`` only when there is one);
- an outcome: ``{"error", "text"}`` (and ``"cause"`` when it has one), or ``{"ask":
  {"message", "state"}}`` for a request for approval.

Each encoder has its decoder; the decoders raise ``KeyError``, ``TypeError`` or
``ValueError`` on malformed content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.live.payload import Ask, Call, Descriptor, Outcome

__all__ = [
    "call_from_json",
    "call_json",
    "descriptor_from_json",
    "descriptor_json",
    "outcome_from_json",
    "outcome_json",
]


def descriptor_json(desc: Descriptor, fields: frozenset[str]) -> dict[str, Any]:
    """``desc`` in a protocol that represents ``fields``."""
    desc = desc.keep(fields)
    out = {k: v for k, v in desc.values.items() if k in desc.known and v is not None}
    unknown = sorted(fields - desc.known)
    if unknown:
        out["unknown"] = unknown
    return out


def descriptor_from_json(data: Mapping[str, Any], fields: frozenset[str]) -> Descriptor:
    """What a descriptor received in a protocol that represents ``fields`` tells."""
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a descriptor without a name")
    known = (fields - frozenset(str(x) for x in data.get("unknown") or ())) | {"name"}
    values = {k: v for k, v in data.items() if k in known}
    return Descriptor(values, frozenset(known))


def call_json(call: Call) -> dict[str, Any]:
    """The content of a ``tools/call``."""
    out: dict[str, Any] = {"name": call.name, "arguments": dict(call.arguments)}
    if call.plus:
        out["plus"] = dict(call.plus)
    if call.answer is not None:
        out["answer"] = dict(call.answer)
    return out


def call_from_json(data: Mapping[str, Any]) -> Call:
    """The call of a ``tools/call``'s content."""
    return Call(
        str(data["name"]),
        dict(data.get("arguments") or {}),
        dict(data.get("plus") or {}),
        data.get("answer"),
    )


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """The content of a reply to a call."""
    if outcome.ask is not None:
        return {"ask": {"message": outcome.ask.message, "state": outcome.ask.state}}
    out: dict[str, Any] = {"error": outcome.error, "text": outcome.text}
    if outcome.cause is not None:
        out["cause"] = outcome.cause
    return out


def outcome_from_json(data: Mapping[str, Any]) -> Outcome:
    """The outcome of a reply's content."""
    ask = data.get("ask")
    if isinstance(ask, Mapping):
        return Outcome(ask=Ask(str(ask.get("message", "")), str(ask.get("state", ""))))
    error, cause = data.get("error"), data.get("cause")
    return Outcome(
        None if error is None else str(error),
        str(data.get("text", "")),
        cause=None if cause is None else str(cause),
    )
