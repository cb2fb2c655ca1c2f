"""W3C trace context in the live mesh (the shared live run of test_live_run): each
instance's caller mints one ``traceparent``, records it on ``wf_start`` and every
``call``, and every hop passes it on (``_meta["traceparent"]`` and the envelope, as the
agents received them); ``export otel`` of the live trace makes each instance one trace
under that context."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.otel.context import parse_traceparent
from tests.harness.live_paths import TINY


def contexts(trace: list[dict[str, Any]]) -> dict[tuple[str, int], str]:
    """The ``traceparent`` of each instance's ``wf_start``."""
    return {
        (e["wf"], e["inst"]): e["detail"]["traceparent"] for e in trace if e["label"] == "wf_start"
    }


def test_each_instance_has_one_context_on_its_start_and_calls(tiny: dict[str, Any]) -> None:
    trace = tiny["trace"]
    started = contexts(trace)
    assert started and all(parse_traceparent(v) is not None for v in started.values())
    ids = [parse_traceparent(v) for v in started.values()]
    assert len({c.trace_id for c in ids if c is not None}) == len(started)  # one trace each
    calls = [e for e in trace if e["label"] == "call"]
    assert calls and all(e["detail"]["traceparent"] == started[(e["wf"], e["inst"])] for e in calls)


def _received(wire: Path, agent: str) -> list[dict[str, Any]]:
    """The JSON bodies ``agent`` received that carry an envelope (its capture)."""
    out = []
    for line in (wire / f"{agent}.jsonl").read_text(encoding="utf-8").splitlines():
        body = json.loads(line)["body"]
        if "protomesh/route" in body:
            out.append(json.loads(body))
    return out


def _meta(body: dict[str, Any]) -> dict[str, Any]:
    params = body.get("params") or {}
    if "message" in params:  # A2A: the message's metadata
        return dict(params["message"].get("metadata") or {})
    return dict(params.get("_meta") or {})


def test_every_hop_passes_the_context_on(tiny: dict[str, Any]) -> None:
    started = set(contexts(tiny["trace"]).values())
    wire = tiny["run"] / "wire"
    seen: dict[str, set[str]] = defaultdict(set)
    for agent in ("gw", "coord", "tickets"):
        for body in _received(wire, agent):
            meta = _meta(body)
            carried = meta["protomesh/route"].get("traceparent")
            assert carried is not None and meta.get("traceparent") == carried, (agent, meta)
            seen[agent].add(carried)
    assert seen["gw"] and seen["coord"] and seen["tickets"]  # MCP+, A2A and MCP hops
    assert set().union(*seen.values()) <= started  # nothing but the instances' contexts


def test_export_otel_makes_each_instance_one_trace(tiny: dict[str, Any], tmp_path: Path) -> None:
    trace = tiny["trace"]
    out = tmp_path / "spans.json"
    argv = ["export", "otel", str(tiny["run"] / "trace.jsonl"), "--scenario", str(TINY)]
    assert main([*argv, "--out", str(out)]) == 0  # the live trace's wall: no --epoch
    spans = [
        s
        for rs in json.loads(out.read_text(encoding="utf-8"))["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    by_trace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in spans:
        by_trace[s["traceId"]].append(s)
    started = contexts(trace)
    expected = {v.split("-")[1] for v in started.values()}
    assert set(by_trace) == expected  # one trace per instance, and nothing else
    for value in started.values():
        _, trace_id, root, _ = value.split("-")
        mine = by_trace[trace_id]
        roots = [s for s in mine if "parentSpanId" not in s]
        assert [s["spanId"] for s in roots] == [root]
        calls = [s for s in mine if s["name"].startswith("tools/call ")]
        assert all(s["parentSpanId"] == root for s in calls)


def test_the_envelope_carries_the_context_and_the_meta_repeats_it() -> None:
    from sim.live.envelope import ENVELOPE_KEY, Envelope, request_meta
    from sim.live.parts import Owner

    context = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    route = {"path": ["a", "b"], "protocols": ["MCP"], "start": "MCP", "translations": []}
    env = Envelope(route, 1, "request", 4, Owner("w", 0, "t", 2, "x"), 1, 0.5, traceparent=context)
    assert Envelope.from_json(env.to_json()) == env
    assert env.at(2, 0.75).traceparent == context  # passed on unchanged at the next hop
    assert request_meta(env) == {ENVELOPE_KEY: env.to_json(), "traceparent": context}
    bare = Envelope(route, 1, "request", 4, Owner("w", 0, "t", 2, "x"), 1, 0.5)
    assert "traceparent" not in bare.to_json() and request_meta(bare) == {
        ENVELOPE_KEY: bare.to_json()
    }


@pytest.mark.slow
def test_a_served_mcp_server_behind_the_mesh_records_the_instances_trace(tmp_path: Path) -> None:
    """A live mesh whose tool server is ``serve mcp --http`` (``live: {url}``): the calls
    that reach it carry their instance's context, which its session trace records; the
    exported spans of both traces share each instance's trace id."""
    import yaml

    from tests.harness.live_runs import live
    from tests.harness.mcp_http import http_server

    scenario = {
        "name": "traced-desk", "seed": 1, "duration": 2, "routers": ["dijkstra"],
        "protocols": ["MCP"],
        "agents": [
            {"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP": 1.0}},
            {"id": "desk", "type": "TOOL_SERVER", "protocols": {"MCP": 1.0},
             "tools": ["get_forecast"]},
        ],
        "links": [{"between": ["planner", "desk"], "latency": {"MCP": 0.005}}],
        "tools": [{"name": "get_forecast", "description": "Forecast for a city.",
                   "side_effects": "read", "annotations": {"readOnlyHint": True}}],
        "workflows": [{"name": "sky", "initiator": "planner", "protocol": "MCP",
                       "arrivals": {"times": [0.2, 0.8, 1.4]}, "timeout": 10,
                       "tasks": [{"id": "f", "tool": "get_forecast"}]}],
    }  # fmt: skip
    served = tmp_path / "served.yaml"
    served.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
    served_trace = tmp_path / "served.jsonl"
    with http_server(served, "--trace", str(served_trace)) as url:
        scenario["agents"][1]["live"] = {"url": url}
        mesh = tmp_path / "mesh.yaml"
        mesh.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
        done = live(str(mesh), "--out", str(tmp_path / "out"), "--quiet")
        assert done.returncode == 0, done.stderr
    run = tmp_path / "out" / "dijkstra" / "live-0"
    trace = [json.loads(x) for x in (run / "trace.jsonl").read_text().splitlines()]
    started = set(contexts(trace).values())
    assert len(started) == 3
    lines = [json.loads(x) for x in served_trace.read_text().splitlines()]
    received = {x["detail"].get("traceparent") for x in lines if x["label"] == "call"}
    assert received == started  # every instance's calls reached the server with its context
    ids: list[set[str]] = []
    for path, scenario_file in ((run / "trace.jsonl", mesh), (served_trace, served)):
        out = tmp_path / f"{path.stem}.json"
        assert main(["export", "otel", str(path), "--scenario", str(scenario_file),
                     "--out", str(out)]) == 0  # fmt: skip
        data = json.loads(out.read_text())
        ids.append({s["traceId"] for rs in data["resourceSpans"] for ss in rs["scopeSpans"]
                    for s in ss["spans"] if s["name"] == "tools/call get_forecast"})  # fmt: skip
    assert ids[0] == ids[1] == {v.split("-")[1] for v in started}
