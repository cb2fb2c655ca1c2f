"""``--json`` on every command that prints a result (issue 37, item 9): lts, bisim, plan,
run, native status and view print one JSON document on stdout, the human text (if any) on
stderr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"
BFS = ROOT / "tests" / "fixtures" / "scenarios" / "bfs_cannot_route.yaml"


def _json(capsys: pytest.CaptureFixture[str], code: int, *argv: str) -> Any:
    assert main(list(argv)) == code
    return json.loads(capsys.readouterr().out)


def test_lts_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["lts", str(TRAIN), "--tool", "book_train", "--protocol", "MCP", "--json"]
    shown = _json(capsys, 0, *argv)
    assert (shown["tool"], shown["protocol"], shown["dialect"]) == ("book_train", "MCP", "mcp")
    assert shown["states"] > 1 and {"from", "label", "to"} == set(shown["transitions"][0])
    assert "requires_approval" not in shown["fields"]  # plain MCP drops it


def test_bisim_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, b, c = (tmp_path / f"{n}.aut" for n in "abc")
    a.write_text('des (0, 3, 3)\n(0,"a",1)\n(1,"tau",2)\n(2,"b",0)\n')
    b.write_text('des (0, 2, 2)\n(0,"a",1)\n(1,"b",0)\n')
    c.write_text('des (0, 2, 3)\n(0,"a",1)\n(1,"c",2)\n')
    same = _json(capsys, 0, "bisim", str(a), str(b), "--json")
    assert same == {"equivalent": True, "weak": True, "distinction": None}
    other = _json(capsys, 1, "bisim", str(a), str(c), "--json")
    assert other["equivalent"] is False and other["distinction"]["kind"] == "trace"
    assert other["distinction"]["trace"][0] == "a"


def test_plan_json_names_the_route_or_why_not(capsys: pytest.CaptureFixture[str]) -> None:
    shown = _json(capsys, 1, "plan", str(BFS), "--json")
    dijkstra, bfs = shown["routers"]
    [task] = dijkstra["tasks"]
    assert task["route"]["path"] == ["planner", "gw", "tickets"] and task["reason"] is None
    [task] = bfs["tasks"]
    assert task["route"] is None and "does not speak MCP+" in task["reason"]


def test_run_json_and_view_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(TRAIN, tmp_path / "t.yaml")
    monkeypatch.chdir(tmp_path)
    argv = ["run", "t.yaml", "--replications", "1", "--set", "duration=30", "--out", "o"]
    assert main([*argv, "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    shown = json.loads(out)
    assert "results in o/dijkstra" in err  # the tables, on stderr
    assert (shown["router"], shown["replications"], shown["results"]) == (
        "dijkstra",
        1,
        "o/dijkstra",
    )
    [rep] = shown["runs"]
    metrics = json.loads(Path(rep["dir"], "metrics.json").read_text(encoding="utf-8"))
    assert rep["started"] == metrics["workflows"]["started"]
    assert rep["violations_per_1000"] == metrics["violations_per_1000_instances"]
    from sim.cli.live import _shown  # live --json: the same figures from a metrics.json

    live = _shown("dijkstra", Path(rep["dir"]), metrics)
    assert (live["started"], live["dropped"], live["violations"]) == (
        rep["started"],
        rep["dropped"],
        rep["violations"],
    )
    assert live["success_rate"] == rep["succeeded"] / rep["started"]
    page = _json(capsys, 0, "view", "o", "--json")
    assert page["page"] == "o/report.html" and Path(page["page"]).is_file()
    assert page["sampling"]["instances"] == metrics["workflows"]["started"]


def test_native_status_json(capsys: pytest.CaptureFixture[str]) -> None:
    from sim import native

    shown = _json(capsys, 0, "native", "status", "--json")
    assert shown == {"running": native.status(), "compiled": native.status().startswith("compiled")}
