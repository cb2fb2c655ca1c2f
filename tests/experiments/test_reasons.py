"""Why a router's tasks failed, in validate, the summary, report.md and the verdict
(issue 37): bfs, which keeps to the caller's protocol, routes no task of
tests/fixtures/scenarios/bfs_cannot_route.yaml (success 0); the reports name no_route."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.experiments.reasons import FailureReason, failure_reasons, leading_text
from sim.experiments.summary import Point, Result, Stat, Summary
from sim.experiments.verdict import better

BFS = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "bfs_cannot_route.yaml"


def test_validate_warns_at_the_task_bfs_cannot_route(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(BFS)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{BFS}: ok (3 agents, 2 links, 1 tools, 1 workflows)\n"
    assert err.startswith(f"{BFS}:25:13: warning: workflows[0].tasks[0]: router bfs cannot route ")
    assert "task 'book' (book_train) from planner in MCP+: " in err
    assert "'tickets' does not speak MCP+" in err and err.count("\n") == 1  # dijkstra routes


def test_validate_json_holds_the_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--json", str(BFS)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["errors"] == []
    assert report["counts"] == {"agents": 3, "links": 2, "tools": 1, "workflows": 1}
    [warning] = report["warnings"]
    assert (warning["line"], warning["field"]) == (25, "workflows[0].tasks[0]")


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfs") / "r"
    argv = ["compare", str(BFS), "--out", str(out), "--jobs", "1", "--no-plots", "--quiet"]
    assert main(argv) == 0
    return out


def test_the_summary_and_the_report_name_no_route_as_bfss_failure(compared: Path) -> None:
    summary = json.loads((compared / "summary.json").read_text(encoding="utf-8"))
    bfs = next(r for r in summary["results"] if r["router"] == "bfs")
    assert bfs["metrics"]["success_rate"]["mean"] == 0
    [reason] = bfs["failure_reasons"]
    assert reason["reason"] == "no_route" and reason["share"] == 1
    started = bfs["metrics"]["workflows_started"]["mean"] * summary["replications"]
    assert reason["tasks"] == started  # one task per instance, each failed as no_route
    report = (compared / "report.md").read_text(encoding="utf-8")
    assert f"- **bfs**: no_route {reason['tasks']} (100 %)" in report
    [point] = summary["verdict"]
    assert point["why"]["bfs"].startswith(f"failed tasks: no_route {reason['tasks']} (100 %)")
    assert point["sentences"][0].startswith("dijkstra is better than bfs on success_rate: ")
    page = (compared / "report.html").read_text(encoding="utf-8")
    assert '<li data-router="bfs"><b>bfs</b>: failed tasks: no_route' in page


@settings(max_examples=40)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-2, 50))))
def test_reasons_are_ranked_and_their_shares_sum_to_one(runs: list[dict[str, int]]) -> None:
    reasons = failure_reasons(runs)
    counts = [r.tasks for r in reasons]
    assert counts == sorted(counts, reverse=True) and all(n > 0 for n in counts)
    assert sum(counts) == sum(n for run in runs for n in run.values() if n > 0)
    if reasons:
        assert abs(sum(r.share for r in reasons) - 1) < 1e-9


def test_reasons_skip_what_is_not_a_count_and_say_none() -> None:
    assert failure_reasons([None, {"x": "3"}, {"timeout": 2, "denied": 2}]) == (
        FailureReason("denied", 2, 0.5),
        FailureReason("timeout", 2, 0.5),
    )
    assert leading_text([]) == "none"
    many = failure_reasons([{"a": 4, "b": 3, "c": 2, "d": 1}])
    assert leading_text(many) == "a 4 (40 %), b 3 (30 %), c 2 (20 %), and 1 more"


def _summary(a: tuple[float, float, float], b: tuple[float, float, float]) -> Summary:
    def row(router: str, s: tuple[float, float, float]) -> Result:
        return Result(None, router, 5, {"latency_p95": Stat(5, s[0], 0.1, s[1], s[2])}, ())

    results = (row("x", a), row("y", b))
    return Summary(0.95, 5, ("x", "y"), (Point(None, {}),), results, (), ())


def test_the_verdict_says_which_is_better_and_whether_it_is_significant() -> None:
    apart = _summary((1.0, 0.9, 1.1), (2.0, 1.9, 2.1))
    assert better(apart, None, "y", "x", "latency_p95", False) == (
        "x is better than y on latency_p95: 1 [0.9, 1.1] against 2 [1.9, 2.1] "
        "(the 95 % intervals do not overlap)."
    )
    close = _summary((1.0, 0.5, 1.5), (1.2, 0.7, 1.7))
    said = better(close, None, "x", "y", "latency_p95", True)
    assert said is not None and said.startswith("y is better than x")
    assert said.endswith("(the 95 % intervals overlap: not significant).")
    assert better(close, None, "x", "z", "latency_p95", True) is None
