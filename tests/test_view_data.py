"""sim.view without a browser: the index read from result files, sampling, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.view import Budget, ViewError, build_index, render_page
from sim.view.mesh import AGGREGATE_ABOVE, Mesh


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
    (cx,) = res["counterexamples"]
    assert cx["check"] == "recovery" and cx["instances"] == ["book#7"]
    row = next(r for r in res["instances"] if r[1] == 7)
    assert row == ["book", 7, "succeeded", 5, 2, ["recovery"], True]
    assert sum(h[3] for h in res["hops"]) == 20  # two hops per instance
    assert sum(t[2] for t in res["translations"]) == 10
    assert res["down"] == [["node", "gw", 10.0, 11.0]]  # still down at the end
    assert len(index["cdf"]["resilient"]) == 10


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

    package = Path(__file__).resolve().parents[1] / "sim" / "view"
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

    repo = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "sim", "run", "scenarios/train_booking.yaml"]
    cmd += ["--router", "resilient", "--replications", "1", "--set", "duration=40000"]
    subprocess.run([*cmd, "--out", str(tmp_path / "r")], cwd=repo, check=True, capture_output=True)
    from sim.view import write_page

    out = tmp_path / "report.html"
    sampling = write_page(tmp_path / "r", out, repo / "scenarios" / "train_booking.yaml")
    assert sampling["events_total"] >= 1_000_000
    assert sampling["events_kept"] <= sampling["max_events"]
    assert out.stat().st_size <= 20 * 1024 * 1024
