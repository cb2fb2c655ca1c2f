"""W3C Trace Context (https://www.w3.org/TR/trace-context/): the ``traceparent`` header.

``00-<trace-id: 32 hex>-<parent-id: 16 hex>-<flags: 2 hex>``, lower-case; a trace id or
parent id of all zeros is invalid, and so is version ``ff``. A later version is read by
its first four fields, as the recommendation asks. Nothing here imports OpenTelemetry.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

__all__ = [
    "TRACEPARENT",
    "TraceParent",
    "child_of",
    "derived_id",
    "instance_context",
    "invocation_span",
    "parse_traceparent",
]

TRACEPARENT = "traceparent"
"""The header's name, and the key under which ``_meta`` and the trace carry it."""
SAMPLED = 1
"""The ``sampled`` trace flag."""
_FORM = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


class TraceParent(NamedTuple):
    """A parsed ``traceparent``: 128-bit trace id, 64-bit parent span id, flags."""

    trace_id: int
    parent_id: int
    flags: int

    @property
    def text(self) -> str:
        """The header value (version 00)."""
        return f"00-{self.trace_id:032x}-{self.parent_id:016x}-{self.flags:02x}"


def parse_traceparent(value: object) -> TraceParent | None:
    """The ``traceparent`` in ``value``, or None when it is not a valid one (a receiver
    ignores an invalid header: it starts a trace of its own)."""
    if not isinstance(value, str):
        return None
    found = _FORM.match(value.strip())
    if found is None:
        return None
    version, trace, parent, flags, rest = found.groups()
    if version == "ff" or (version == "00" and rest is not None):
        return None
    trace_id, parent_id = int(trace, 16), int(parent, 16)
    if trace_id == 0 or parent_id == 0:
        return None
    return TraceParent(trace_id, parent_id, int(flags, 16))


def derived_id(text: str, size: int) -> int:
    """A ``size``-byte id derived from ``text`` (SHA-256; never zero)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big") or 1


def child_of(parent: TraceParent, key: str) -> TraceParent:
    """A context under ``parent``: the same trace and flags, a span id derived from the
    parent's and ``key`` (deterministic, never zero)."""
    return TraceParent(parent.trace_id, derived_id(f"{parent.text}/{key}", 8), parent.flags)


def instance_context(key: str) -> TraceParent:
    """The trace of a workflow instance and its root span's id, derived from ``key``
    (the instance named in a space of its own: ``export otel``'s, or a live caller's)."""
    trace_id = derived_id(key, 16)
    return TraceParent(trace_id, derived_id(f"{trace_id:032x}/root", 8), SAMPLED)


def invocation_span(trace_id: int, rep: int, inv: int) -> int:
    """The span id of invocation ``inv`` in a trace, as ``export otel`` derives it."""
    return derived_id(f"{trace_id:032x}/{rep}/inv/{inv}", 8)
