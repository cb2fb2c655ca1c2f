"""The trace labels a formula may name, each with its detail keys (SPEC §5).

Derived from the one trace vocabulary, :mod:`sim.vocabulary`.
"""

from __future__ import annotations

from collections.abc import Mapping

#: label → the detail keys its events may carry
LABEL_KEYS: Mapping[str, frozenset[str]] = {
    "wf_start": frozenset(("turn",)),
    "wf_end": frozenset(("turn", "status", "latency", "reason")),
    "list": frozenset(("approval", "approval_reason", "fields", "host")),
    "call": frozenset(("turn", "target")),
    "invoke": frozenset(("turn", "target")),
    "collect": frozenset(("turn", "slot")),
    "validate": frozenset(),
    "approve": frozenset(("turn", "reason")),
    "deny": frozenset(("turn", "reason")),
    "execute": frozenset(("turn", "attempt", "waited", "approved")),
    "result": frozenset(("turn", "attempt")),
    "error": frozenset(("turn", "error", "attempt", "cause", "missing")),
    "retry": frozenset(("error", "n", "backoff")),
    "fallback": frozenset(("error", "to")),
    "prompt": frozenset(("error", "message")),
    "abort": frozenset(("turn", "error")),
    "skip": frozenset(("exclusive_with",)),
    "send": frozenset(("msg", "kind", "path", "to")),
    "hop": frozenset(("msg", "from", "proto", "to")),
    "translate": frozenset(("msg", "at", "chain", "dropped", "from_proto", "kind", "to_proto")),
    "deliver": frozenset(("msg", "kind")),
    "drop": frozenset(("msg", "reason", "lost")),
    "timeout": frozenset(("attempt", "after", "executed", "kind", "action")),
    "reroute": frozenset(("from_path", "to_path", "avoid")),
    "node_down": frozenset(),
    "node_up": frozenset(),
    "link_down": frozenset(("link",)),
    "link_up": frozenset(("link",)),
}
