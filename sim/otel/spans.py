"""A SPEC §5 trace as OpenTelemetry spans (``export otel``), without OpenTelemetry itself.

The spans of one workflow instance (``rep``, ``wf``, ``inst``) form one trace:

- the instance's root span (``workflow <wf>``, kind internal) over all of its lines, its
  ``wf_start``, ``wf_end`` and ``skip`` as span events, status error when it did not
  succeed;
- a span per invocation (``inv``; kind client), from its first line to its last:
  ``tools/call <tool>`` (``invoke <tool>`` in SGD, ``tools/list <tool>`` for a discovery);
  every line of it that is not a message's (``call``, ``validate``, ``approve``, ``deny``,
  ``execute``, ``result``, ``error``, ``retry``, ``timeout``, ...) and every ``drop`` is a
  span event; status ok after a ``result``, error after an outcome that is not one;
- a child span of the invocation per ``hop`` (``hop <from>-><to>``) and per ``translate``
  (``translate <p>-><p'>``), from that line to the message's next line (so a child
  lies within its parent).

An instance whose ``wf_start`` carries a valid ``detail.traceparent`` (a live caller's
context for it) is that trace, its root that span. An invocation whose ``call`` (or
``invoke``, or first line) carries another valid ``detail.traceparent`` belongs to that
trace instead, its span a child of the traceparent's span (a request a client traced).
Lines without an instance (outages) are left out and counted.

Times are Unix nanoseconds: ``detail.wall`` when every line has it (a live trace), else
``epoch + t`` (integer arithmetic on microseconds: no float rounding). Ids are derived
from the scenario, router, replication, workflow and instance (a trace id) and the
span's place (a span id): the same trace exports the same bytes.

Attributes follow the OpenTelemetry semantic conventions where one exists
(``gen_ai.operation.name`` ``execute_tool``, ``gen_ai.tool.name``, ``mcp.method.name`` on
a protocol whose wire is MCP's (MCP, MCP⁺, a protocol declaring ``wire: mcp``: the
``wires`` of :func:`trace_spans`, :data:`METHOD_CONVENTIONS`: ``tools/call``, or
``tools/list`` for a discovery, whatever the dialect's opening), ``error.type``; resource
``service.name`` ``protomesh``, ``service.version``), everything else under
``protomesh.*`` (:data:`PREFIX`).
"""

from __future__ import annotations

import calendar
import datetime
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.otel.context import (
    TRACEPARENT,
    derived_id,
    instance_context,
    invocation_span,
    parse_traceparent,
)

__all__ = [
    "MESSAGE_LABELS",
    "PREFIX",
    "Span",
    "SpanError",
    "SpanEvent",
    "Traced",
    "read_trace",
    "trace_spans",
    "wall_ns",
]

PREFIX = "protomesh."
MESSAGE_LABELS = frozenset({"send", "hop", "translate", "deliver", "drop"})
"""Labels of a message's journey (a ``drop`` is also a span event of its invocation)."""
_OUTCOME_OK = frozenset({"result"})
_OUTCOME_BAD = frozenset({"error", "abort", "prompt", "deny", "fallback", "timeout", "drop"})
_SKIPPED_KEYS = frozenset({"wall", TRACEPARENT})
#: by the wire family whose semantic conventions name an invocation's method (MCP's
#: ``mcp.method.name``, incubating; other wires: none): that attribute, the method of a
#: call on that wire and the method of a discovery
METHOD_CONVENTIONS: Mapping[str, tuple[str, str, str]] = {
    "mcp": ("mcp.method.name", "tools/call", "tools/list")
}


class SpanError(ValueError):
    """A trace that cannot be exported: a located, one-line reason."""


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event: its name (the trace label), time (Unix ns) and attributes."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any]


@dataclass(slots=True)
class Span:
    """One span; ids are integers (128-bit trace, 64-bit span); ``kind`` ``internal`` or
    ``client``; ``status`` ``(code, message)`` with code ``unset``, ``ok`` or ``error``.
    Invariant: ``start_ns <= end_ns``."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    rep: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    status: tuple[str, str] = ("unset", "")


@dataclass(frozen=True, slots=True)
class Traced:
    """The spans of a trace, and how many lines had no instance (left out)."""

    spans: list[Span]
    outside: int


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The lines of a trace file (plain or gzip), each a dict with ``_line`` its line
    number; :class:`SpanError` ``FILE:LINE: ...`` on a line that is not a trace event."""
    from sim.conformance.events import TraceError, read_blocks

    out: list[dict[str, Any]] = []
    lineno = 0
    try:
        name, blocks = read_blocks(path)
        for block in blocks:
            for raw in block:
                lineno += 1
                if not raw.strip():
                    continue
                out.append(_line(raw, name, lineno))
    except TraceError as exc:
        raise SpanError(str(exc)) from None
    if not out:
        raise SpanError(f"{path}: an empty trace (nothing to export)")
    return out


def _line(raw: bytes, name: str, lineno: int) -> dict[str, Any]:
    from sim.json_input import JsonInputError, parse_json

    where = f"{name}:{lineno}"
    try:
        obj = parse_json(raw.decode("utf-8"), where)
    except (JsonInputError, UnicodeDecodeError) as exc:
        message = exc.message if isinstance(exc, JsonInputError) else str(exc)
        raise SpanError(f"{where}: not a JSON trace line: {message}") from None
    if not isinstance(obj, dict):
        raise SpanError(f"{where}: a trace line is a JSON object")
    for key, kinds in (("t", (int, float)), ("seq", (int,)), ("rep", (int,)), ("label", (str,))):
        value = obj.get(key)
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise SpanError(f"{where}: {key}: {value!r} is not what a trace line holds")
    if not isinstance(obj.get("detail", {}), dict):
        raise SpanError(f"{where}: detail: an object expected")
    obj["_line"] = lineno
    return obj


#: OTLP's times are unsigned 64-bit nanoseconds since 1970: the protobuf encoder raises
#: on a larger one (``--epoch 1e300`` was a traceback from inside the exporter).
_MAX_NS = 2**64 - 1
_BEYOND = "beyond OTLP's last time (2**64 - 1 ns since 1970: 2554-07-21)"


def wall_ns(text: str) -> int:
    """Unix nanoseconds of an ISO 8601 UTC time (``2026-12-06T21:14:03.118204Z``)."""
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    moment = moment.astimezone(datetime.UTC)
    seconds = calendar.timegm(moment.utctimetuple())
    return seconds * 1_000_000_000 + moment.microsecond * 1000


def _clock(lines: Sequence[dict[str, Any]], epoch_ns: int | None, source: str) -> list[int]:
    """The Unix time (ns) of every line: its wall when all have one, else epoch + t."""
    walls = [(x.get("detail") or {}).get("wall") for x in lines]
    if all(isinstance(w, str) for w in walls):
        out: list[int] = []
        for line, w in zip(lines, walls, strict=True):
            try:
                ns = wall_ns(str(w))
            except ValueError as exc:
                raise SpanError(f"{source}:{line['_line']}: detail.wall: {exc}") from None
            if not 0 <= ns <= _MAX_NS:
                when = "before 1970" if ns < 0 else _BEYOND
                raise SpanError(f"{source}:{line['_line']}: detail.wall: {w!r} is {when}")
            out.append(ns)
        return out
    if epoch_ns is None:
        missing = next(x for x, w in zip(lines, walls, strict=True) if not isinstance(w, str))
        raise SpanError(
            f"{source}:{missing['_line']}: no detail.wall (not a live trace): give --epoch "
            "SECONDS, the Unix time of t = 0"
        )
    out = [epoch_ns + round(float(x["t"]) * 1_000_000) * 1000 for x in lines]
    for line, ns in zip(lines, out, strict=True):
        if ns > _MAX_NS:
            raise SpanError(
                f"{source}:{line['_line']}: t = {float(line['t']):g} s after --epoch is "
                f"{_BEYOND}; give a smaller --epoch"
            )
    return out


def _attrs(detail: Mapping[str, Any]) -> dict[str, Any]:
    """A line's detail keys as attributes (``protomesh.<key>``; lists of strings kept)."""
    out: dict[str, Any] = {}
    for key, value in detail.items():
        if key in _SKIPPED_KEYS or value is None:
            continue
        if isinstance(value, list):
            out[PREFIX + key] = [str(v) for v in value]
        elif isinstance(value, bool | int | float | str):
            out[PREFIX + key] = value
        else:
            out[PREFIX + key] = json.dumps(value, sort_keys=True)
    return out


def _event(line: dict[str, Any], when: int) -> SpanEvent:
    attrs = {PREFIX + "agent": line["agent"], **_attrs(line.get("detail") or {})}
    if line.get("proto") is not None:
        attrs[PREFIX + "protocol"] = line["proto"]
    return SpanEvent(str(line["label"]), when, attrs)


def _status(labels: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """An invocation's status: ok after a result, else error after a bad outcome."""
    names = [x["label"] for x in labels]
    if any(n in _OUTCOME_OK for n in names):
        return "ok", ""
    bad = [x for x in labels if x["label"] in _OUTCOME_BAD]
    if not bad:
        return "unset", ""
    last = bad[-1]
    detail = last.get("detail") or {}
    why = detail.get("error") or detail.get("reason") or detail.get("action") or ""
    return "error", f"{last['label']}: {why}".rstrip(": ")


def trace_spans(
    lines: Sequence[dict[str, Any]],
    *,
    scenario: str,
    router: str | None,
    epoch_ns: int | None,
    source: str,
    wires: Mapping[str, str],
) -> Traced:
    """The spans of a trace's ``lines`` (see the module docstring); ``source`` names the
    trace in errors; ``wires`` maps each protocol to its wire's name (the scenario's
    :meth:`~sim.scenario.model.Scenario.wires`), which says which conventions apply."""
    times = _clock(lines, epoch_ns, source)
    methods = {p: METHOD_CONVENTIONS[w] for p, w in wires.items() if w in METHOD_CONVENTIONS}
    instances: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    outside = 0
    for k, line in enumerate(lines):
        if line.get("wf") is None or line.get("inst") is None:
            outside += 1
            continue
        instances[(int(line["rep"]), str(line["wf"]), int(line["inst"]))].append(k)
    spans: list[Span] = []
    for (rep, wf, inst), ks in instances.items():
        spans.extend(_instance(lines, times, ks, (scenario, router, rep, wf, inst), methods))
    return Traced(spans, outside)


def _instance(
    lines: Sequence[dict[str, Any]],
    times: Sequence[int],
    ks: Sequence[int],
    key: tuple[str, str | None, int, str, int],
    methods: Mapping[str, tuple[str, str, str]],
) -> list[Span]:
    """The root span of one instance and its invocations' (``methods``: protocol → its
    wire's :data:`METHOD_CONVENTIONS`)."""
    scenario, router, rep, wf, inst = key
    own: list[int] = []
    invocations: dict[int, list[int]] = defaultdict(list)
    for k in ks:
        inv = lines[k].get("inv")
        (own if inv is None else invocations[int(inv)]).append(k)
    started = [lines[k] for k in own if lines[k]["label"] == "wf_start"]
    context = (
        parse_traceparent((started[0].get("detail") or {}).get(TRACEPARENT)) if started else None
    )
    if context is None:  # else the instance's own context, minted by a live caller
        context = instance_context(f"protomesh/{scenario}/{router or ''}/{rep}/{wf}/{inst}")
    trace_id, root_id = context.trace_id, context.parent_id
    spans: list[Span] = []
    rooted = list(own)
    for inv, members in invocations.items():
        first = next((k for k in members if lines[k]["label"] in ("call", "invoke")), members[0])
        parent = parse_traceparent((lines[first].get("detail") or {}).get(TRACEPARENT))
        if parent is None or (parent.trace_id, parent.parent_id) == (trace_id, root_id):
            rooted.extend(members)
            spans.extend(_invocation(lines, times, members, (trace_id, root_id), rep, inv, methods))
        else:
            parents = (parent.trace_id, parent.parent_id)
            spans.extend(_invocation(lines, times, members, parents, rep, inv, methods))
    if not rooted:
        return spans
    root = Span(
        trace_id,
        root_id,
        None,
        f"workflow {wf}",
        "internal",
        min(times[k] for k in rooted),
        max(times[k] for k in rooted),
        rep,
        {PREFIX + "workflow": wf, PREFIX + "instance": inst},
    )
    for k in own:
        line = lines[k]
        root.events.append(_event(line, times[k]))
        if line["label"] == "wf_start":
            root.attributes[PREFIX + "initiator"] = line["agent"]
        elif line["label"] == "wf_end":
            status = str((line.get("detail") or {}).get("status", ""))
            root.attributes[PREFIX + "status"] = status
            reason = (line.get("detail") or {}).get("reason")
            root.status = ("ok", "") if status == "succeeded" else ("error", str(reason or status))
    return [root, *spans]


def _invocation(
    lines: Sequence[dict[str, Any]],
    times: Sequence[int],
    members: Sequence[int],
    parents: tuple[int, int],
    rep: int,
    inv: int,
    methods: Mapping[str, tuple[str, str, str]],
) -> list[Span]:
    """The span of one invocation and its hop and translation children (``parents``: the
    trace id and the parent span's id)."""
    trace_id, parent_id = parents
    first = lines[members[0]]
    labels = [lines[k]["label"] for k in members]
    tool = str(first.get("tool"))
    if "invoke" in labels:
        method = "invoke"
    elif "call" in labels:
        method = "tools/call"
    else:
        method = "tools/list"
    span_id = invocation_span(trace_id, rep, inv)
    call = next((lines[k] for k in members if lines[k]["label"] in ("call", "invoke")), None)
    proto = (call or first).get("proto")
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        PREFIX + "workflow": first["wf"],
        PREFIX + "instance": first["inst"],
        PREFIX + "task": first.get("task"),
        PREFIX + "invocation": inv,
        PREFIX + "protocol": proto,
        PREFIX + "caller": first["agent"],
    }
    convention = methods.get(str(proto))
    if convention is not None:
        attribute, calling, listing = convention
        attrs[attribute] = calling if call is not None else listing
    if call is not None and (call.get("detail") or {}).get("target") is not None:
        attrs[PREFIX + "target"] = call["detail"]["target"]
    traceparent = (call or first).get("detail", {}).get(TRACEPARENT)
    if traceparent is not None:
        attrs[PREFIX + TRACEPARENT] = str(traceparent)
    span = Span(
        trace_id,
        span_id,
        parent_id,
        f"{method} {tool}",
        "client",
        min(times[k] for k in members),
        max(times[k] for k in members),
        rep,
        {k: v for k, v in attrs.items() if v is not None},
    )
    outcome = [lines[k] for k in members if lines[k]["label"] not in MESSAGE_LABELS - {"drop"}]
    span.status = _status(outcome)
    if span.status[0] == "error":
        errors = [lines[k] for k in members if (lines[k].get("detail") or {}).get("error")]
        if errors:
            span.attributes["error.type"] = str(errors[-1]["detail"]["error"])
    children: list[Span] = []
    journeys: dict[int, list[int]] = defaultdict(list)
    for k in members:
        line = lines[k]
        if line["label"] not in MESSAGE_LABELS or line["label"] == "drop":
            span.events.append(_event(line, times[k]))
        msg = (line.get("detail") or {}).get("msg")
        if line["label"] in MESSAGE_LABELS and msg is not None:
            journeys[int(msg)].append(k)
    for msg, steps in journeys.items():
        kind = next(
            (lines[k]["detail"].get("kind") for k in steps if lines[k]["label"] == "send"), None
        )
        for i, k in enumerate(steps):
            line = lines[k]
            if line["label"] not in ("hop", "translate"):
                continue
            end = times[steps[i + 1]] if i + 1 < len(steps) else times[k]
            children.append(_step(line, times[k], end, trace_id, span_id, rep, msg, kind))
    return [span, *children]


def _step(
    line: dict[str, Any],
    start: int,
    end: int,
    trace_id: int,
    parent_id: int,
    rep: int,
    msg: int,
    kind: str | None,
) -> Span:
    """A hop's or a translation's span."""
    detail = line.get("detail") or {}
    if line["label"] == "hop":
        name = f"hop {detail.get('from')}->{detail.get('to')}"
    else:
        name = f"translate {detail.get('from_proto')}->{detail.get('to_proto')}"
    attrs = {
        PREFIX + "agent": line["agent"],
        PREFIX + "message": msg,
        **_attrs({k: v for k, v in detail.items() if k != "msg"}),
    }
    if kind is not None:
        attrs[PREFIX + "message_kind"] = kind
    span_id = derived_id(f"{trace_id:032x}/{rep}/{line['label']}/{line['seq']}", 8)
    return Span(trace_id, span_id, parent_id, name, "internal", start, end, rep, attrs)
