"""sim.view without a browser: the index read from result files, sampling, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.view import Budget, ViewError, build_index, render_page
from sim.view.mesh import AGGREGATE_ABOVE, Mesh
from tests.harness.replay_alone import ReplayAlone


def _ev(seq: int, t: float, label: str, inst: int | None, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "t": t, "seq": seq, "rep": 0, "label": label, "agent": kw.pop("agent", "planner"),
        "wf": "book" if inst is not None else None, "inst": inst, "task": None, "inv": None,
        "tool": None, "proto": kw.pop("proto", None), "detail": kw.pop("detail", {}),
    }  # fmt: skip
    return base


def _instance(inst: int, seq: int, t: float, status: str = "succeeded") -> list[dict[str, Any]]:
    """wf_start, two hops planner→gw→tool, a translation at gw, wf_end."""
    first = {"msg": seq, "from": "planner", "to": "gw", "proto": "MCP+"}
    tr = {"msg": seq, "at": "gw", "from_proto": "MCP+", "to_proto": "MCP", "dropped": []}
    second = {"msg": seq, "from": "gw", "to": "tool", "proto": "MCP"}
    return [
        _ev(seq, t, "wf_start", inst),
        _ev(seq + 1, t, "hop", inst, proto="MCP+", detail=first),
        _ev(seq + 2, t + 0.01, "translate", inst, agent="gw", detail=tr),
        _ev(seq + 3, t + 0.01, "hop", inst, agent="gw", detail=second),
        _ev(seq + 4, t + 1.0, "wf_end", inst, detail={"status": status}),
    ]


def _write_run(folder: Path, instances: int, bad: int | None = None) -> Path:
    """A rep folder with ``instances`` instances; ``bad``'s events are a counterexample."""
    folder.mkdir(parents=True)
    events: list[dict[str, Any]] = []
    for i in range(instances):
        events += _instance(i, len(events), float(i))
    events.append(_ev(len(events), float(instances), "node_down", None, agent="gw"))
    with (folder / "trace.jsonl").open("w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    checks: dict[str, Any] = {"recovery": {"examined": instances, "violations": 0}}
    if bad is not None:
        seqs = [e["seq"] for e in events if e["inst"] == bad][-2:]
        checks["recovery"] = {
            "examined": instances,
            "violations": 1,
            "first": {"message": f"instance {bad} broke it", "seqs": seqs},
        }
    metrics = {"duration": float(instances + 1), "conformance": {"checks": checks}}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return folder


def test_index_of_a_results_folder(tmp_path: Path) -> None:
    _write_run(tmp_path / "resilient" / "rep-0", 10, bad=7)
    _write_run(tmp_path / "dijkstra" / "rep-0", 10)
    index = build_index(tmp_path, None)
    labels = [r["label"] for r in index["runs"]]
    assert labels == ["dijkstra/rep-0", "resilient/rep-0"]
    mesh = index["mesh"]
    assert sorted(n["id"] for n in mesh["nodes"]) == ["gw", "planner", "tool"]
    assert len(mesh["links"]) == 2 and mesh["protocols"] == ["MCP", "MCP+"]
    res = index["runs"][1]
    (group,) = res["violated"]  # without the scenario: the first that metrics.json keeps
    assert (group["kind"], group["name"], group["violations"]) == ("check", "recovery", 1)
    (cx,) = group["examples"]
    assert cx["instances"] == ["book#7"] and cx["seqs"] == [38, 39]
    row = next(r for r in res["instances"] if r[1] == 7)
    assert row == ["book", 7, "succeeded", 5, 2, ["recovery"], True]
    assert sum(h[3] for h in res["hops"]) == 20  # two hops per instance
    assert sum(t[2] for t in res["translations"]) == 10
    assert res["down"] == [["node", "gw", 10.0, 11.0]]  # still down at the end
    assert len(index["cdf"]["resilient"]) == 10
    assert res["level"] == "full" and res["flows"] == []
    assert res["timeline"] == {"bin": 60.0, "ended": {"succeeded": [10]}}


def test_sampling_keeps_every_violating_instance_within_budget(tmp_path: Path) -> None:
    _write_run(tmp_path / "r" / "rep-0", 100, bad=93)
    index = build_index(tmp_path, None, Budget(max_events=50, seed=3))
    run = index["runs"][0]
    assert "book#93" in run["events"]
    assert sum(len(v) for v in run["events"].values()) <= 50
    assert index["sampling"]["kept"] == len(run["events"]) == 10
    again = build_index(tmp_path, None, Budget(max_events=50, seed=3))
    assert again["runs"][0]["events"].keys() == run["events"].keys()
    other = build_index(tmp_path, None, Budget(max_events=50, seed=4))
    assert other["runs"][0]["events"].keys() != run["events"].keys()


def test_page_is_deterministic_and_self_contained(tmp_path: Path) -> None:
    _write_run(tmp_path / "r" / "rep-0", 5, bad=2)
    a = render_page(build_index(tmp_path, None), "t")
    b = render_page(build_index(tmp_path, None), "t")
    assert a == b
    assert "</script>" not in a.split('id="protomesh-data">', 1)[1].split("</script>", 1)[0]
    for ref in ("src=", "href=", "https:", "@import", "url("):
        assert ref not in a, ref


def test_no_trace_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(ViewError, match=r"no trace\.jsonl"):
        build_index(tmp_path, None)
    with pytest.raises(ViewError, match="no such file"):
        build_index(tmp_path / "missing", None)


def test_large_mesh_aggregates_by_type() -> None:
    n = AGGREGATE_ABOVE + 1
    agents = [(f"a{i}", "GATEWAY" if i % 2 else "TOOL_SERVER", ["MCP"]) for i in range(n)]
    links = [(f"a{i}", f"a{i + 1}", ["MCP"]) for i in range(n - 1)]
    mesh = Mesh(agents, links)
    data = mesh.to_json()
    assert data["aggregated"] and [x["id"] for x in data["nodes"]] == ["GATEWAY", "TOOL_SERVER"]
    assert [x["members"] for x in data["nodes"]] == [150, 151]
    assert data["links"] == [{"a": 0, "b": 1, "protocols": ["MCP"], "members": n - 1}]
    assert mesh.link_of("a0", "a1") == 0
    small = Mesh(agents[:3], links[:2])
    assert not small.to_json()["aggregated"] and len(small.to_json()["nodes"]) == 3


def test_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    _write_run(tmp_path / "r" / "rep-0", 3)
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")
    assert "3 of 3 instances" in capsys.readouterr().out
    assert main(["view", str(tmp_path / "nothing")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_view_imports_neither_engine_nor_experiments() -> None:
    """ARCHITECTURE: the view reads the files the runs wrote, never the code that wrote them."""
    import ast

    package = Path(__file__).resolve().parents[2] / "sim" / "view"
    imported = set()
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    assert "sim.view.data" in imported
    bad = sorted(m for m in imported if m.startswith(("sim.engine", "sim.experiments")))
    assert bad == []


@pytest.mark.slow
def test_a_million_event_trace_fits_the_size_budget(tmp_path: Path) -> None:
    """Issue 18: ≤ 20 MB for a 1-million-event trace (train_booking, 40,000 s: 1.02 M)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-m", "sim", "run", "scenarios/train_booking.yaml"]
    cmd += ["--router", "resilient", "--replications", "1", "--set", "duration=40000"]
    subprocess.run([*cmd, "--out", str(tmp_path / "r")], cwd=repo, check=True, capture_output=True)
    from sim.view import write_page

    out = tmp_path / "report.html"
    sampling = write_page(tmp_path / "r", out, repo / "scenarios" / "train_booking.yaml")
    assert sampling["events_total"] >= 1_000_000
    assert sampling["events_kept"] <= sampling["max_events"]
    assert out.stat().st_size <= 20 * 1024 * 1024


def _protocol_instance(inst: int, seq: int, t: float) -> list[dict[str, Any]]:
    """A protocol-level instance: no hops, a call planner→tool, a translation at gw, a drop."""
    call = {"target": "tool", "parent": None}
    tr = {"msg": seq, "at": "gw", "from_proto": "MCP+", "to_proto": "MCP", "dropped": []}
    return [
        _ev(seq, t, "wf_start", inst),
        _ev(seq + 1, t, "call", inst, proto="MCP+", detail=call),
        _ev(seq + 2, t + 0.01, "translate", inst, agent="gw", detail=tr),
        _ev(
            seq + 3, t + 0.02, "drop", inst, agent="gw", detail={"msg": seq, "reason": "node_down"}
        ),
        _ev(seq + 4, t + 90.0, "wf_end", inst, detail={"status": "failed"}),
    ]


def test_a_protocol_level_trace_replays_flows_translations_and_drops(tmp_path: Path) -> None:
    from sim.view.mesh import Mesh as MeshOf

    folder = tmp_path / "r" / "rep-0"
    folder.mkdir(parents=True)
    events: list[dict[str, Any]] = []
    for i in range(3):
        events += _protocol_instance(i, len(events), 50.0 * i)
    (folder / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (folder / "metrics.json").write_text(json.dumps({"duration": 200.0}))
    index = build_index(tmp_path, None)
    (run,) = index["runs"]
    assert run["level"] == "protocol" and run["hops"] == []
    # no hop names the mesh: its nodes are the agents the events name, no links
    mesh = index["mesh"]
    ids = [n["id"] for n in mesh["nodes"]]
    assert sorted(ids) == ["gw", "planner"] and mesh["links"] == []
    agents = [
        ("planner", "LLM_AGENT", ["MCP+"]),
        ("gw", "GATEWAY", ["MCP", "MCP+"]),
        ("tool", "TOOL_SERVER", ["MCP"]),
    ]
    full = MeshOf(agents, [("planner", "gw", ["MCP+"]), ("gw", "tool", ["MCP"])])
    from sim.conformance.checks import Context, run_pass
    from sim.conformance.events import read_blocks
    from sim.view.replay import Replay

    replay = Replay(full, 200.0, set())
    consumer = ReplayAlone(replay)
    run_pass(*read_blocks([json.dumps(e).encode() for e in events]), [consumer], Context())
    replay.finish()
    out = replay.to_json()
    frames = [replay.frame(50.0 * i) for i in range(3)]
    assert out["flows"] == [[f, 0, 2, full.proto_index("MCP+"), 1] for f in frames]
    assert [x[1:] for x in out["translations"]] == [[1, 1]] * 3
    assert [x[1:] for x in out["drops"]] == [[1, 1]] * 3
    # ended at 90, 140 and 190 s: bins of 60 s
    assert out["timeline"] == {"bin": 60.0, "ended": {"failed": [0, 1, 1, 1]}}


def test_timeline_bins_stay_bounded() -> None:
    from sim.view.replay import TIMELINE_BINS, timeline_bin

    assert timeline_bin(600.0) == 60.0
    assert timeline_bin(40_000.0) == 60.0
    assert timeline_bin(60.0 * TIMELINE_BINS * 3) == 180.0
    assert timeline_bin(60.0 * TIMELINE_BINS * 3 + 1) == 240.0
    for duration in (1.0, 59_999.0, 60_001.0, 1e6, 1e7):
        assert duration / timeline_bin(duration) <= TIMELINE_BINS


TRAIN = Path(__file__).resolve().parents[2] / "scenarios" / "train_booking.yaml"


def _violating_run(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    """A rep folder of ``events`` whose metrics.json reports one write_approval violation."""
    folder = tmp_path / "r" / "resilient" / "rep-0"
    folder.mkdir(parents=True)
    (folder / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    first = {"message": "first", "seqs": [events[0]["seq"]]}
    checks = {"write_approval": {"examined": 1, "violations": 99, "first": first}}
    metrics = {"duration": 1000.0, "conformance": {"checked": True, "checks": checks}}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return tmp_path / "r"


def test_with_the_scenario_every_counterexample_up_to_the_cap(
    train_mutations: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    from sim.conformance.checks import check_trace
    from sim.scenario import load_scenario
    from sim.vocabulary.counterexamples import KEEP_COUNTEREXAMPLES

    results = _violating_run(tmp_path, train_mutations["no_approvals"])
    scenario = load_scenario(TRAIN)
    index = build_index(results, scenario, Budget(max_events=10))
    (run,) = index["runs"]
    groups = {g["name"]: g for g in run["violated"]}
    report = check_trace(results / "resilient" / "rep-0" / "trace.jsonl", scenario)
    for name in ("write_approval", "lts"):
        v = report.verdict(name)
        g = groups[name]
        assert g["violations"] == v.violations > KEEP_COUNTEREXAMPLES
        assert [ex["message"] for ex in g["examples"]] == [c.message for c in v.counterexamples]
        assert len(g["examples"]) == KEEP_COUNTEREXAMPLES
        for ex, c in zip(g["examples"], v.counterexamples, strict=True):
            assert ex["seqs"] == sorted(e["seq"] for e in c.events)
            (key,) = ex["instances"]  # one invocation: one instance, always kept
            assert key in run["events"]
            assert set(ex["seqs"]) <= {e[1] for e in run["events"][key]}
    assert sorted(groups) == ["lts", "write_approval"]
    assert index["keep_counterexamples"] == KEEP_COUNTEREXAMPLES
    # the budget (10 events) holds no other instance
    violating = {k for g in run["violated"] for ex in g["examples"] for k in ex["instances"]}
    assert set(run["events"]) == violating
    rows = {f"{r[0]}#{r[1]}": r for r in run["instances"]}
    assert all("write_approval" in rows[k][5] for k in violating if k in rows)


def test_properties_are_listed_with_their_counterexamples(
    train_mutations: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    from sim.scenario import load_scenario
    from sim.scenario.properties import PropertySpec
    from sim.vocabulary.counterexamples import KEEP_COUNTEREXAMPLES

    events = train_mutations["drop_approve"]
    results = _violating_run(tmp_path, events)
    specs = [
        PropertySpec(
            name="approved-writes",
            scope="invocation",
            formula="G (execute(side_effects={write,delete}) -> Y (!execute S approve))",
        ),
        PropertySpec(name="never-drop", scope="run", formula="G !drop"),
        PropertySpec(name="booked", scope="instance", formula="F execute(book_train)"),
    ]
    scenario = load_scenario(TRAIN).model_copy(update={"properties": specs})
    (run,) = build_index(results, scenario)["runs"]
    groups = {(g["kind"], g["name"]): g for g in run["violated"]}
    approved = groups[("property", "approved-writes")]
    assert approved["scope"] == "invocation" and approved["violations"] == 1
    (ex,) = approved["examples"]
    execute = groups[("check", "write_approval")]["examples"][0]["seqs"][-1]
    assert ex["seqs"] == [execute]  # certain at the execute with no approval
    assert ex["context"] and max(ex["context"]) < execute and "events" not in ex
    drops = [e for e in events if e["label"] == "drop"]
    never = groups[("property", "never-drop")]
    assert drops  # the gw1 outage drops messages
    # a run-scope counterexample carries its own events (wf and inst appended)
    (nd,) = never["examples"]
    assert nd["seqs"] == [drops[0]["seq"]]
    assert [e[1] for e in nd["events"]][-1] == drops[0]["seq"]
    assert all(len(e) == 11 for e in nd["events"])
    # instance scope, decided at the scope's end: offending is the instance's last event
    by_inst: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        if e["wf"] is not None:
            by_inst.setdefault(f"{e['wf']}#{e['inst']}", []).append(e)
    unbooked = {
        k for k, evs in by_inst.items()
        if not any(e["label"] == "execute" and e["tool"] == "book_train" for e in evs)
    }  # fmt: skip
    booked = groups[("property", "booked")]
    assert booked["violations"] == len(unbooked) > 0
    assert len(booked["examples"]) == min(len(unbooked), KEEP_COUNTEREXAMPLES)
    for ex in booked["examples"]:
        (key,) = ex["instances"]
        assert key in unbooked and ex["seqs"] == [by_inst[key][-1]["seq"]]


def _verify_trace(events: list[dict[str, Any]]) -> str:
    """A verify-style counterexample: one invocation's events, untimed, renumbered."""
    return "".join(json.dumps({**e, "t": 0.0, "seq": k}) + "\n" for k, e in enumerate(events))


def test_verify_counterexample_traces_are_listed(tmp_path: Path) -> None:
    _write_run(tmp_path / "resilient" / "rep-0", 3)
    cx = tmp_path / "verify" / "book" / "resilient"
    cx.mkdir(parents=True)
    events = _instance(0, 0, 0.0)
    (cx / "approved-writes.jsonl").write_text(_verify_trace(events))
    (cx / "trace.jsonl").write_text(_verify_trace(events[:2]))  # a property named "trace"
    index = build_index(tmp_path, None)
    assert [r["label"] for r in index["runs"]] == ["resilient/rep-0"]  # verify/ is no run
    groups = {g["name"]: g for g in index["verify"]}
    assert sorted(groups) == ["approved-writes", "trace"]
    g = groups["approved-writes"]
    assert (g["kind"], g["workflow"], g["router"], g["violations"]) == (
        "verify",
        "book",
        "resilient",
        1,
    )
    (ex,) = g["examples"]
    assert ex["seqs"] == [4] and ex["context"] == [0, 1, 2, 3] and ex["instances"] == []
    assert [e[2] for e in ex["events"]] == [e["label"] for e in events]
    assert all(len(e) == 11 and e[9] == "book" for e in ex["events"])
    (cx / "trace.jsonl").write_text('{"seq": 0}\nnot json\n')
    with pytest.raises(ValueError, match=r"trace\.jsonl:2: not JSON"):
        build_index(tmp_path, None)
