"""``export otel`` end to end: a short run's trace as an OTLP/JSON request that the official
``opentelemetry-proto`` JSON mapping parses, consistent ids, parents and times; the same
spans sent by the OpenTelemetry SDK's OTLP/HTTP exporter to a receiver run here on
127.0.0.1 (a real HTTP server decoding protobuf) arrive equal; bad input exits 2."""

from __future__ import annotations

import base64
import http.server
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

SCENARIO = "scenarios/train_booking.yaml"
EPOCH = "1765000000.5"
EPOCH_NS = 1_765_000_000_500_000_000


@pytest.fixture(scope="module")
def run_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40 s replication of the paper scenario (its trace under ``dijkstra/rep-0``)."""
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    out = tmp_path_factory.mktemp("run") / "dijkstra" / "rep-0"
    scenario = load_scenario(SCENARIO).model_copy(update={"duration": 40.0})
    run_replication(scenario, "dijkstra", 0, out)
    return out / "trace.jsonl"


def parsed(path: Path) -> Any:
    """The file as the official proto's JSON mapping reads it, ids made bytes again
    (OTLP/JSON writes them in hex, which the generic mapping reads as base64)."""
    from google.protobuf.json_format import Parse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = Parse(path.read_text(encoding="utf-8"), ExportTraceServiceRequest())
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                for name in ("trace_id", "span_id", "parent_span_id"):
                    raw = getattr(span, name)
                    setattr(span, name, bytes.fromhex(base64.b64encode(raw).decode()))
    return request


@pytest.fixture(scope="module")
def exported(run_trace: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("otel") / "spans.json"
    argv = ["export", "otel", str(run_trace), "--scenario", SCENARIO, "--epoch", EPOCH]
    assert main([*argv, "--out", str(out)]) == 0
    return out, parsed(out)


def all_spans(request: Any) -> list[Any]:
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def trace_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_one_trace_per_instance_and_a_span_per_invocation(
    run_trace: Path, exported: tuple[Path, Any]
) -> None:
    lines = trace_lines(run_trace)
    spans = all_spans(exported[1])
    instances = {(x["wf"], x["inst"]) for x in lines if x["inst"] is not None}
    assert len({s.trace_id for s in spans}) == len(instances)
    assert all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)
    invocations = {(x["inst"], x["inv"]) for x in lines if x["inv"] is not None}
    calls = [s for s in spans if s.name.startswith(("tools/call ", "tools/list "))]
    assert len(calls) == len(invocations)
    named = Counter(s.name.split(" ")[0] for s in spans)
    assert named["hop"] == sum(x["label"] == "hop" for x in lines)
    assert named["workflow"] == len(instances)
    (resource,) = exported[1].resource_spans
    attrs = {a.key: a.value for a in resource.resource.attributes}
    assert attrs["service.name"].string_value == "protomesh"
    assert attrs["protomesh.router"].string_value == "dijkstra"  # read from the folder


def test_parents_ids_and_times_are_consistent(run_trace: Path, exported: tuple[Path, Any]) -> None:
    spans = all_spans(exported[1])
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    assert len(by_id) == len(spans)
    for s in spans:
        assert s.start_time_unix_nano <= s.end_time_unix_nano
        if s.parent_span_id:
            parent = by_id[(s.trace_id, s.parent_span_id)]
            assert parent.start_time_unix_nano <= s.start_time_unix_nano
            assert s.end_time_unix_nano <= parent.end_time_unix_nano
        else:
            assert s.name.startswith("workflow ")
        for e in s.events:
            assert s.start_time_unix_nano <= e.time_unix_nano <= s.end_time_unix_nano
    first = trace_lines(run_trace)[0]
    starts = min(s.start_time_unix_nano for s in spans)
    assert starts == EPOCH_NS + round(first["t"] * 1e6) * 1000


def test_approvals_are_events_of_their_invocation(
    run_trace: Path, exported: tuple[Path, Any]
) -> None:
    lines = trace_lines(run_trace)
    approvals = sum(x["label"] == "approve" for x in lines)
    events = [e for s in all_spans(exported[1]) for e in s.events if e.name == "approve"]
    assert approvals > 0 and len(events) == approvals


class Receiver(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: POST /v1/traces, protobuf body decoded and kept."""

    received: list[Any] = []  # noqa: RUF012 - one list for the server's handlers

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path != "/v1/traces" or self.headers["Content-Type"] != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.received.append(request)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def collector() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Receiver.received.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_the_collector_receives_what_the_file_holds(
    run_trace: Path, exported: tuple[Path, Any], collector: str, tmp_path: Path
) -> None:
    argv = ["export", "otel", str(run_trace), "--scenario", SCENARIO, "--epoch", EPOCH]
    assert main([*argv, "--endpoint", collector]) == 0  # no path: /v1/traces
    assert len(Receiver.received) >= 1
    got = [s for r in Receiver.received for s in all_spans(r)]
    want = all_spans(exported[1])
    key = lambda s: (s.trace_id, s.span_id)  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    resources = {
        r.resource.SerializeToString() for q in Receiver.received for r in q.resource_spans
    }
    assert resources == {r.resource.SerializeToString() for r in exported[1].resource_spans}


def _refused() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bad_input_is_one_line(
    run_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    head = run_trace.read_text(encoding="utf-8").splitlines(keepends=True)[:3]
    broken.write_text("".join(head) + "{oops\n", encoding="utf-8")
    base = ["export", "otel", str(run_trace), "--scenario", SCENARIO]
    cases = [
        (base, "no detail.wall (not a live trace): give --epoch SECONDS"),
        ([*base, "--epoch", "soon"], "--epoch 'soon': expected Unix seconds"),
        ([*base, "--epoch", "-1"], "expected Unix seconds, at least 0"),
        ([*base, "--epoch", "1e300"], "beyond OTLP's"),
        ([*base, "--epoch", "0", "--endpoint", "collector:4318"], "expected an http:// or"),
        (
            [
                *base,
                "--epoch",
                "0",
                "--endpoint",
                f"http://127.0.0.1:{_refused()}",
                "--timeout",
                "0.3",
            ],
            "the OTLP/HTTP collector did not accept the spans",
        ),
        (["export", "otel", str(broken), "--scenario", SCENARIO, "--epoch", "0"], ":4: "),
        (["export", "otel", str(tmp_path / "none.jsonl"), "--scenario", SCENARIO], "none.jsonl"),
        (["export", "otel", str(run_trace), "--scenario", "none.yaml"], "none.yaml: no such file"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert message in err and out == "", (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
