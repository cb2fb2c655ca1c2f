"""OpenTelemetry for protomesh traces (SPEC §14, docs/otel.md).

``context`` (W3C trace context: ``traceparent`` read, checked and made), ``spans`` (a
SPEC §5 trace as spans: one trace per workflow instance, or per request that carried a
``traceparent``), ``otlp`` (the spans as the OpenTelemetry SDK's ``ReadableSpan``\\ s, an
OTLP/JSON ``ExportTraceServiceRequest``, or sent through the SDK's OTLP/HTTP exporter).
Only ``otlp`` imports OpenTelemetry, inside its functions.
"""
