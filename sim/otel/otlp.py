"""protomesh spans (:mod:`sim.otel.spans`) through the OpenTelemetry SDK: as its
``ReadableSpan``\\ s, encoded by its OTLP encoder into an ``ExportTraceServiceRequest``
(written as OTLP/JSON) or sent by its OTLP/HTTP exporter (``--endpoint``). One model,
two outputs: the file and the collector receive the same request.

OTLP/JSON (the OTLP specification's JSON encoding): the protobuf JSON mapping of the
request with lowerCamelCase names, except that ``traceId``, ``spanId`` and
``parentSpanId`` are hex strings (not base64) and enums are integers (``kind``,
``status.code``); 64-bit integers are strings.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sim.otel.spans import Span

__all__ = ["SERVICE", "otlp_json", "readable_spans", "send_spans"]

SERVICE = "protomesh"
_IDS = frozenset({"traceId", "spanId", "parentSpanId"})


def readable_spans(spans: Sequence[Span], resource: Mapping[str, Any]) -> list[Any]:
    """The SDK ``ReadableSpan`` of every span; ``resource``: attributes of every
    replication's resource (``protomesh.replication`` added per span's ``rep``)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    from sim import __version__

    kinds = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT, "server": SpanKind.SERVER}
    codes = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
    scope = InstrumentationScope(SERVICE, __version__)
    resources: dict[int, Any] = {}
    sampled = TraceFlags(TraceFlags.SAMPLED)
    out: list[Any] = []
    for s in spans:
        if s.rep not in resources:
            attrs = {
                "service.name": SERVICE,
                "service.version": __version__,
                **resource,
                "protomesh.replication": s.rep,
            }
            resources[s.rep] = Resource(attrs)
        code, message = s.status
        out.append(
            ReadableSpan(
                name=s.name,
                context=SpanContext(s.trace_id, s.span_id, False, sampled),
                parent=(
                    None
                    if s.parent_id is None
                    else SpanContext(s.trace_id, s.parent_id, True, sampled)
                ),
                resource=resources[s.rep],
                attributes=dict(s.attributes),
                events=[Event(e.name, dict(e.attributes), e.time_ns) for e in s.events],
                kind=kinds[s.kind],
                status=Status(codes[code], message or None)
                if code == "error"
                else Status(codes[code]),
                start_time=s.start_ns,
                end_time=s.end_ns,
                instrumentation_scope=scope,
            )
        )
    return out


def _otlp_shape(data: dict[str, Any]) -> dict[str, Any]:
    """The protobuf JSON mapping made OTLP/JSON in place: the spans' (and their links')
    ids in hex; enums are integers already (``use_integers_for_enums``)."""
    for rs in data.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for span in ss.get("spans", ()):
                for item in (span, *span.get("links", ())):
                    for key in _IDS & item.keys():
                        item[key] = base64.b64decode(item[key]).hex()
    return data


def otlp_json(readable: Sequence[Any]) -> dict[str, Any]:
    """The OTLP/JSON ``ExportTraceServiceRequest`` of the SDK spans ``readable``."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(readable)
    data: dict[str, Any] = MessageToDict(request, use_integers_for_enums=True)
    return _otlp_shape(data)


def send_spans(readable: Sequence[Any], endpoint: str, timeout: float) -> None:
    """Send the SDK spans ``readable`` to the OTLP/HTTP ``endpoint`` (its traces URL)
    through the SDK's exporter; ``timeout`` in seconds. ``ValueError`` when the collector
    did not take them (the exporter's own retries spent)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
    quiet = logging.getLogger("opentelemetry.exporter.otlp.proto.http")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # its warnings would be a second, multi-line message
    try:
        result = exporter.export(list(readable))
    finally:
        quiet.setLevel(level)
        exporter.shutdown()  # type: ignore[no-untyped-call]
    if result is not SpanExportResult.SUCCESS:
        raise ValueError(f"{endpoint}: the OTLP/HTTP collector did not accept the spans")
