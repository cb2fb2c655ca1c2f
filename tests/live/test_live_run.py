"""A real live run (``python -m sim live``): real processes on 127.0.0.1, the real SDKs,
the trace checked; and the ways a start fails (located, exit 2, nothing left running)."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.vocabulary.lines import line_problems
from tests.harness.live_paths import ROOT, TINY
from tests.harness.live_runs import live, ours
from tests.harness.warm_sim import warm_sim


def test_a_live_run_ends_cleanly_and_leaves_nothing_running(tiny: dict[str, Any]) -> None:
    done = tiny["done"]
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"results in {tiny['run']}"
    assert ours(str(tiny["out"])) == []  # every process of the mesh is gone
    assert sorted(p.name for p in tiny["run"].iterdir()) == ["metrics.json", "trace.jsonl", "wire"]


def test_the_live_trace_is_a_protomesh_trace_the_checks_pass(tiny: dict[str, Any]) -> None:
    trace = tiny["trace"]
    assert [e["seq"] for e in trace] == list(range(len(trace)))
    assert all(a["t"] <= b["t"] for a, b in itertools.pairwise(trace))
    assert [p for e in trace for p in line_problems(e, source="live")] == []
    assert all(e["detail"]["wall"].endswith("Z") for e in trace)
    check = subprocess.run(
        [*warm_sim(), "check", str(tiny["run"] / "trace.jsonl"), "--scenario", str(TINY)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert check.returncode == 0, check.stdout
    m = tiny["metrics"]
    assert m["conformance"]["ok"] is True
    assert all(v == 0 for v in m["violations"].values())


def test_the_metrics_have_the_keys_of_a_run_and_say_what_was_live(tiny: dict[str, Any]) -> None:
    m = tiny["metrics"]
    keys = ("workflows", "latency", "messages", "approvals", "reroutes", "timeouts")
    keys += ("violations", "violations_per_1000_instances", "conformance", "by_workflow")
    for key in keys:
        assert key in m, key
    assert m["scenario"] == "live-tiny" and m["router"] == "dijkstra"
    assert m["live"]["duration"] == 4.0 and m["live"]["speed"] == 2.0
    assert m["workflows"]["started"] >= 5
    assert m["workflows"]["started"] == sum(e["label"] == "wf_start" for e in tiny["trace"])


def test_real_translations_happen_on_the_way(tiny: dict[str, Any]) -> None:
    moves = {(e["detail"]["at"], e["detail"]["from_proto"], e["detail"]["to_proto"])
             for e in tiny["trace"] if e["label"] == "translate"}  # fmt: skip
    assert {("gw", "MCP+", "MCP"), ("gw", "MCP", "MCP+"), ("coord", "A2A", "MCP")} <= moves
    lists = [e for e in tiny["trace"] if e["label"] == "list"]
    fields = {tuple(e["detail"]["fields"]) for e in lists}
    assert ("annotations", "description", "input_schema", "name") in fields  # through MCP
    assert ("description", "name") in fields  # through A2A


def test_the_mcp_side_of_the_gateway_never_receives_the_mcp_plus_metadata(
    tiny: dict[str, Any],
) -> None:
    """What the tool server received (its own capture of the bodies on the wire)."""
    wire = tiny["run"] / "wire"
    server = [json.loads(x) for x in (wire / "tickets.jsonl").read_text().splitlines()]
    gateway = [json.loads(x) for x in (wire / "gw.jsonl").read_text().splitlines()]
    calls = [r for r in server if '"tools/call"' in r["body"]]
    assert calls and all("protomesh/mcp-plus" not in r["body"] for r in server)
    assert all('"requires_approval"' not in r["body"] for r in server)
    # the gateway's MCP+ side does receive it: the planner's gated calls say so
    assert any('"protomesh/mcp-plus":{"requires_approval":true' in r["body"].replace(" ", "")
               for r in gateway)  # fmt: skip


def test_a_write_is_approved_by_elicitation_and_the_approval_used_once(
    tiny: dict[str, Any],
) -> None:
    trace = tiny["trace"]
    books = [e for e in trace if e["label"] == "execute" and e["tool"] == "book"]
    assert books and all(e["detail"]["approved"] for e in books)
    approves = {e["inv"] for e in trace if e["label"] == "approve"}
    assert {e["inv"] for e in books} <= approves
    # the question came back as a reply before the human answered
    for inv in approves:
        mine = [e for e in trace if e["inv"] == inv]
        first_approve = next(k for k, e in enumerate(mine) if e["label"] == "approve")
        assert any(e["label"] == "deliver" and e["detail"]["kind"] == "response"
                   for e in mine[:first_approve])  # fmt: skip


def _scenario(
    tmp_path: Path, live_entries: dict[str, dict[str, Any]], *, pair: bool = False
) -> Path:
    """The tiny scenario (with ``pair``, only its planner and tickets, for a start that
    fails: two processes start instead of four) with a ``live:`` entry for some agents."""
    import yaml

    data = yaml.safe_load(TINY.read_text())
    if pair:
        data["agents"] = [a for a in data["agents"] if a["id"] in ("planner", "tickets")]
        data["protocols"] = ["MCP"]
        data["agents"][0]["protocols"] = {"MCP": 1.0}
        data["links"] = [{"between": ["planner", "tickets"], "latency": {"MCP": 0.005}}]
        data["workflows"] = [{**data["workflows"][0], "protocol": "MCP"}]
    for agent in data["agents"]:
        if agent["id"] in live_entries:
            agent["live"] = live_entries[agent["id"]]
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_taken_port_is_located_and_nothing_starts(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    path = _scenario(tmp_path, {"gw": {"port": port}})
    try:
        done = live(str(path), "--out", str(tmp_path / "out"))
    finally:
        sock.close()
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {path}:") and ": agents[1].live.port: " in line
    assert f"agent 'gw' cannot listen on 127.0.0.1:{port}" in line
    assert ours(str(tmp_path)) == []


@pytest.mark.slow  # a mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_a_real_server_that_exits_is_located_and_everything_is_stopped(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; sys.exit(3)"]
    path = _scenario(tmp_path, {"tickets": {"command": command}}, pair=True)
    done = live(str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: agent 'tickets' failed to start: {path}:")
    assert "agents[1].live.command" in line
    assert ours(str(tmp_path)) == []


@pytest.mark.slow  # a mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_a_url_that_does_not_answer_is_located(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    path = _scenario(tmp_path, {"tickets": {"url": f"http://127.0.0.1:{port}/mcp"}}, pair=True)
    done = live(str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "agent 'tickets' failed to start" in line and "agents[1].live.url" in line
    assert f"http://127.0.0.1:{port}/mcp" in line
    assert ours(str(tmp_path)) == []


def test_bad_options_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = live(str(TINY), "--router", "nope", "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("error: --router: unknown router 'nope'")
    argv = [str(TINY), "--max-processes", "2", "--out", str(tmp_path)]
    done = subprocess.run(  # the first start above was cold: this one warm
        [*warm_sim(), "live", *argv], capture_output=True, text=True, cwd=ROOT, timeout=180
    )
    assert done.returncode == 2
    assert (
        "4 agents need 4 processes, more than this machine hosts (--max-processes 2)" in done.stderr
    )


@pytest.mark.slow  # a mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_a_signal_stops_the_mesh_keeps_what_ran_and_leaves_nothing(tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim", "live", str(TINY), "--duration", "60", "--out", str(out)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 60
    while "running" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    time.sleep(2.0)  # a few instances under way
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert rest.strip().splitlines()[-1] == "interrupted by SIGTERM"
    assert ours(str(out)) == []
    run = out / "dijkstra" / "live-0"
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["live"]["interrupted"] == "interrupted by SIGTERM"
    assert metrics["workflows"]["started"] >= 1
    assert (run / "trace.jsonl").read_text().count('"wf_start"') == metrics["workflows"]["started"]


@pytest.mark.slow  # a mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_packed_agents_still_talk_over_loopback(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = live(str(TINY), "--processes", "2", "--duration", "3", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((out / "dijkstra" / "live-0" / "metrics.json").read_text())
    assert metrics["live"]["processes"] == 2
    assert metrics["conformance"]["ok"] and metrics["workflows"]["succeeded"] >= 1
    assert metrics["messages"]["hops"] > 0  # every hop a real HTTP message between agents
    assert ours(str(out)) == []
