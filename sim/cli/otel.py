"""``export otel``: a SPEC §5 trace as OpenTelemetry spans, written as an OTLP/JSON
``ExportTraceServiceRequest`` or sent to an OTLP/HTTP collector (SPEC §14, docs/otel.md)."""

from __future__ import annotations

import argparse
import decimal
import json
import re
import sys
from pathlib import Path
from typing import Any

from sim.cli.console import EXIT_OK, BadInput, guarded, positive_number

__all__ = ["add_export_otel", "epoch_ns"]

_RUN_FOLDER = re.compile(r"^(?:rep|live)-\d+$")


def add_export_otel(kinds: Any) -> None:
    """Add ``export otel`` to ``kinds`` (the subparsers of ``export``)."""
    k = kinds.add_parser(
        "otel",
        help="a trace as OpenTelemetry spans (OTLP/JSON, or sent to an OTLP/HTTP collector)",
        description="The trace as an OTLP/JSON ExportTraceServiceRequest: a trace per workflow "
        "instance (or per request that carried a traceparent), a span per invocation, child "
        "spans per hop and translation, approvals, denials, retries and drops as span events. "
        "Times from detail.wall (a live trace), else --epoch. Exit 0, or 2.",
    )
    k.add_argument("trace", metavar="TRACE", help="a trace.jsonl (plain or gzip)")
    k.add_argument("--scenario", required=True, metavar="FILE", help="the trace's scenario")
    k.add_argument("--out", metavar="FILE.json", help="write the JSON here (default: stdout)")
    k.add_argument(
        "--epoch",
        metavar="SECONDS",
        default=None,
        help="Unix time of t = 0, seconds (decimals allowed), for a trace without detail.wall",
    )
    k.add_argument(
        "--router",
        metavar="NAME",
        default=None,
        help="the run's router (an attribute, and part of the ids; default: the folder above "
        "rep-<k>/ or live-<k>/, when the trace is in one)",
    )
    k.add_argument(
        "--endpoint",
        metavar="URL",
        default=None,
        help="send the spans through the OpenTelemetry SDK's OTLP/HTTP exporter to this "
        "collector URL instead (.../v1/traces; a URL without a path gets /v1/traces)",
    )
    k.add_argument(
        "--timeout",
        type=positive_number,
        default=10.0,
        metavar="S",
        help="seconds the exporter may take, retries included (default 10)",
    )
    k.set_defaults(handler=export_otel_command)


def epoch_ns(text: str) -> int:
    """Unix nanoseconds of ``--epoch SECONDS`` (exact: a decimal, not a float)."""
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise BadInput(f"--epoch {text!r}: expected Unix seconds, e.g. 1765000000.25") from None
    if not value.is_finite() or value < 0:
        raise BadInput(f"--epoch {text!r}: expected Unix seconds, at least 0")
    return int(value * 1_000_000_000)


def _endpoint(url: str) -> str:
    found = re.match(r"(?i)^(https?://[^/\s?#]+)(/[^\s]*)?$", url)
    if found is None:
        raise BadInput(f"--endpoint {url!r}: expected an http:// or https:// collector URL")
    return url if found.group(2) not in (None, "/") else found.group(1) + "/v1/traces"


def _router(trace: Path) -> str | None:
    folder = trace.resolve().parent
    return folder.parent.name if _RUN_FOLDER.match(folder.name) else None


@guarded()
def export_otel_command(args: argparse.Namespace) -> int:
    """``export otel TRACE --scenario FILE [--out FILE.json] [--epoch S] [--endpoint URL]``."""
    from sim.cli.artifacts import load_with_extension, write_output
    from sim.otel.otlp import otlp_json, readable_spans, send_spans
    from sim.otel.spans import SpanError, read_trace, trace_spans

    epoch = None if args.epoch is None else epoch_ns(args.epoch)
    endpoint = None if args.endpoint is None else _endpoint(args.endpoint)
    scenario, _ = load_with_extension(args.scenario)
    router = args.router or _router(Path(args.trace))
    try:
        lines = read_trace(args.trace)
        traced = trace_spans(
            lines,
            scenario=scenario.name,
            router=router,
            epoch_ns=epoch,
            source=args.trace,
            wires=scenario.wires(),
        )
    except SpanError as exc:
        raise BadInput(str(exc)) from None
    resource: dict[str, Any] = {"protomesh.scenario": scenario.name}
    if router is not None:
        resource["protomesh.router"] = router
    readable = readable_spans(traced.spans, resource)
    if endpoint is None or args.out is not None:
        text = json.dumps(otlp_json(readable), ensure_ascii=False, separators=(",", ":"))
        write_output(text + "\n", args.out)
    if endpoint is not None:
        try:
            send_spans(readable, endpoint, args.timeout)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    traces = len({s.trace_id for s in traced.spans})
    where = endpoint or args.out or "stdout"
    left = f"; {traced.outside} lines without an instance left out" if traced.outside else ""
    print(f"export: {traces} traces, {len(traced.spans)} spans → {where}{left}", file=sys.stderr)
    return EXIT_OK
