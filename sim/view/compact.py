"""An event in the compact form the page embeds and the events file holds:
``[t, seq, label, agent, task, inv, tool, proto, detail]`` (then ``wf, inst`` when shown
outside its instance's list), from a decoded dict or straight from its line."""

from __future__ import annotations

from typing import Any

import msgspec


class _Compact(msgspec.Struct):
    """The fields of a line :func:`compact` keeps (``owner`` False), any value: the first
    three required, as :func:`compact` reads them."""

    t: Any
    seq: Any
    label: Any
    agent: Any = None
    task: Any = None
    inv: Any = None
    tool: Any = None
    proto: Any = None
    detail: Any = None


_compact = msgspec.json.Decoder(_Compact).decode


def compact_line(raw: bytes) -> list[Any] | None:
    """:func:`compact` of the event of the line ``raw``, decoded straight into it (no
    dict of the line: what the events file is written from); None when the decode
    refuses the line (then decode it in full and :func:`compact` it)."""
    try:
        e = _compact(raw)
    except msgspec.DecodeError:
        return None
    return [e.t, e.seq, e.label, e.agent, e.task, e.inv, e.tool, e.proto, e.detail or {}]


def compact(e: dict[str, Any], owner: bool = False) -> list[Any]:
    """An event as ``[t, seq, label, agent, task, inv, tool, proto, detail]`` (then
    ``wf, inst`` when ``owner``: an event shown outside its instance's list)."""
    out = [
        e["t"],
        e["seq"],
        e["label"],
        e.get("agent"),
        e.get("task"),
        e.get("inv"),
        e.get("tool"),
        e.get("proto"),
        e.get("detail") or {},
    ]
    return [*out, e.get("wf"), e.get("inst")] if owner else out
