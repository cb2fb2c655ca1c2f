"""compare: identical summaries across executors, resume, crash records, the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.engine import World
from sim.experiments.compare import Outcome, run_compare
from sim.experiments.runner import (
    InlineExecutor,
    Task,
    execute_task,
    fingerprint,
    is_complete,
    make_executor,
)
from sim.experiments.summary import describe, metric_range, student_t
from sim.experiments.sweep import expand, load_points
from sim.scenario import load_scenario
from tests.harness.small_mesh import SMALL, SMALL_FILE

ROOT = Path(__file__).resolve().parents[2]

SWEEP = (
    SMALL
    + """
sweep:
  mode: product
  parameters:
    failures.0.for: [30, 120]
"""
)


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL, encoding="utf-8")
    return path


def _compare(file: Path, out: Path, *extra: str) -> int:
    return main(["compare", str(file), "--out", str(out), "--quiet", *extra])


def _bare(file: Path, out: Path, *extra: str) -> int:
    """``compare`` without figures, for the tests that never look at them."""
    return _compare(file, out, "--no-plots", *extra)


def test_summary_identical_with_one_and_two_jobs(small_drawn: Path, tmp_path: Path) -> None:
    one_dir, two_dir = small_drawn, tmp_path / "two"
    assert _compare(SMALL_FILE, two_dir, "--jobs", "2", "--replications", "2") == 0
    one = (one_dir / "summary.json").read_bytes()
    assert one == (two_dir / "summary.json").read_bytes()
    assert (one_dir / "summary.csv").read_bytes() == (two_dir / "summary.csv").read_bytes()
    summary = json.loads(one)
    assert [r["router"] for r in summary["results"]] == ["dijkstra", "resilient"]
    assert all(r["replications_ok"] == 2 for r in summary["results"])
    # the runs themselves are byte-identical too
    for router in ("dijkstra", "resilient"):
        for rep in range(2):
            a = one_dir / router / f"rep-{rep}" / "metrics.json"
            b = two_dir / router / f"rep-{rep}" / "metrics.json"
            assert a.read_bytes() == b.read_bytes()
    # the figures a pool draws while the page is written, and the page, are the same too
    drawn = sorted(p.name for p in (one_dir / "plots").glob("*.png"))
    assert drawn == sorted(p.name for p in (two_dir / "plots").glob("*.png"))
    assert len(drawn) == 6
    for name in [f"plots/{n}" for n in drawn] + ["report.html"]:
        assert (one_dir / name).read_bytes() == (two_dir / name).read_bytes()

    def timeless(out: Path) -> list[str]:  # the report less its wall-clock rows
        lines = (out / "report.md").read_text().splitlines()
        return [x for x in lines if not x.startswith(("| run time ", "| date ", "| runs "))]

    assert timeless(one_dir) == timeless(two_dir)
    assert all(f"plots/{n}" in "\n".join(timeless(two_dir)) for n in drawn)


def test_no_plots_draws_nothing_and_changes_nothing_else(small_drawn: Path, tmp_path: Path) -> None:
    assert _bare(SMALL_FILE, tmp_path / "without", "--jobs", "1", "--replications", "2") == 0
    assert list((small_drawn / "plots").glob("*.png"))
    assert not (tmp_path / "without" / "plots").exists()
    for name in ("summary.json", "summary.csv", "report.html"):
        with_plots = (small_drawn / name).read_bytes()
        assert with_plots == (tmp_path / "without" / name).read_bytes(), name
    assert "plots/" in (small_drawn / "report.md").read_text()
    assert "plots/" not in (tmp_path / "without" / "report.md").read_text()


@pytest.mark.slow  # 4 s; test_summary_identical_with_one_and_two_jobs covers --jobs in the suite
def test_a_sweep_draws_the_same_figures_with_one_and_two_jobs(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP, encoding="utf-8")
    for jobs in ("1", "2"):
        assert _compare(sweep, tmp_path / jobs, "--jobs", jobs, "--replications", "2") == 0
    drawn = sorted(p.name for p in (tmp_path / "1" / "plots").glob("*.png"))
    assert len(drawn) == 9 and "sweep_success_rate.png" in drawn
    for name in [f"plots/{n}" for n in drawn] + ["summary.json", "points.json", "report.html"]:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name
    figures = [
        [x for x in (tmp_path / jobs / "report.md").read_text().splitlines() if "plots/" in x]
        for jobs in ("1", "2")
    ]
    assert figures[0] == figures[1] and len(figures[0]) >= 9  # the same figures, same order


def test_a_pool_draws_every_figure_once() -> None:
    from sim.experiments.figures import FIGURES, RUN_FIGURES, SUMMARY_FIGURES

    assert sorted(RUN_FIGURES + SUMMARY_FIGURES) == sorted(FIGURES)


def test_summary_identical_on_a_dask_local_cluster(small: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    assert _bare(small, tmp_path / "local", "--jobs", "1") == 0
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        code = _bare(
            small,
            tmp_path / "dask",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
    assert code == 0
    assert (tmp_path / "local" / "summary.json").read_bytes() == (
        tmp_path / "dask" / "summary.json"
    ).read_bytes()


def test_common_random_numbers_same_arrivals(small: Path, tmp_path: Path) -> None:
    assert _bare(small, tmp_path / "out", "--jobs", "1", "--replications", "2") == 0
    for rep in range(2):
        started = {
            json.loads((tmp_path / "out" / r / f"rep-{rep}" / "metrics.json").read_text())[
                "workflows"
            ]["started"]
            for r in ("dijkstra", "resilient")
        }
        assert len(started) == 1  # same arrivals for every router


def _mtimes(base: Path) -> dict[str, int]:
    return {str(p.parent.relative_to(base)): p.stat().st_mtime_ns for p in base.rglob("run.json")}


def test_resume_runs_only_the_missing_runs(tmp_path: Path) -> None:
    file = tmp_path / "sweep.yaml"
    file.write_text(SWEEP, encoding="utf-8")
    out = tmp_path / "out"
    assert _bare(file, out, "--jobs", "1", "--replications", "2") == 0
    assert json.loads((out / "points.json").read_text()) == {
        "p0": {"failures.0.for": 30},
        "p1": {"failures.0.for": 120},
    }
    before = _mtimes(out)
    assert len(before) == 2 * 2 * 2
    # a "killed" sweep: one run gone, one partial (trace without metrics), one temp dir
    gone = out / "p1" / "resilient" / "rep-1"
    for f in gone.iterdir():
        f.unlink()
    gone.rmdir()
    partial = out / "p0" / "dijkstra" / "rep-0"
    (partial / "metrics.json").unlink()
    (out / "p0" / "dijkstra" / ".rep-1.tmp").mkdir()
    (out / "p0" / "dijkstra" / ".rep-1.tmp" / "trace.jsonl").write_text("{")
    summary_before = (out / "summary.json").read_bytes()

    records = []
    scenario = load_scenario(file)
    loaded, _ = load_points(file, scenario, expand(scenario, []))
    handle = make_executor("local", 1)

    def resume() -> Outcome:
        return run_compare(
            scenario, loaded, ["dijkstra", "resilient"], 2, out, handle,
            on_record=records.append, plots=False,
        )  # fmt: skip

    outcome = resume()
    assert sorted(r.key for r in records) == ["p0/dijkstra/rep-0", "p1/resilient/rep-1"]
    assert outcome.skipped == 6
    after = _mtimes(out)
    for key, mtime in before.items():
        if key not in ("p0/dijkstra/rep-0", "p1/resilient/rep-1"):
            assert after[key] == mtime, key
    assert (out / "summary.json").read_bytes() != b""
    # a third run does nothing, and the summary is what it was before the kill
    records.clear()
    outcome = resume()
    assert records == [] and outcome.skipped == 8
    assert (out / "summary.json").read_bytes() == summary_before


def test_force_redoes_every_run(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bare(small, out, "--jobs", "1", "--replications", "1") == 0
    before = _mtimes(out)
    assert _bare(small, out, "--jobs", "1", "--replications", "1", "--force") == 0
    after = _mtimes(out)
    assert all(after[k] != v for k, v in before.items())


def test_a_stale_run_of_another_scenario_is_redone(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bare(small, out, "--jobs", "1", "--replications", "1") == 0
    before = _mtimes(out)
    small.write_text(SMALL.replace("seed: 5", "seed: 6"), encoding="utf-8")
    assert _bare(small, out, "--jobs", "1", "--replications", "1") == 0
    assert all(_mtimes(out)[k] != v for k, v in before.items())


def _crash_on_rep_1(world: World) -> None:
    if world.rep == 1 and world.router_name == "dijkstra":
        world.env.process(_boom(world))


def _boom(world: World) -> Any:
    yield world.env.timeout(42.0)
    raise RuntimeError("injected failure")


def test_a_crashed_replication_is_recorded_and_the_others_complete(
    small: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(small)
    loaded, _ = load_points(small, scenario, expand(scenario, []))
    out = tmp_path / "out"
    outcome = run_compare(
        scenario,
        loaded,
        ["dijkstra", "resilient"],
        3,
        out,
        make_executor("local", 1),
        hook=_crash_on_rep_1,
        plots=False,
    )
    errors = outcome.summary.errors
    assert len(errors) == 1
    err = errors[0]
    assert err.run == "dijkstra/rep-1" and err.replication == 1
    assert err.sim_time == pytest.approx(42.0)
    assert err.error is not None and "injected failure" in err.error
    assert err.message is not None and "small-mesh" in err.message
    assert (out / "dijkstra" / "rep-1" / "error.json").exists()
    assert (out / "dijkstra" / "rep-1" / "trace.jsonl").exists()  # what was written so far
    assert not (out / "dijkstra" / "rep-1" / "metrics.json").exists()
    rows = {r.router: r for r in outcome.summary.results}
    assert rows["dijkstra"].replications_ok == 2
    assert rows["resilient"].replications_ok == 3
    report = outcome.report.read_text()
    assert "## Failed runs" in report and "dijkstra/rep-1" in report
    # a crashed run is not "finished": a re-run tries it again
    fp = fingerprint(scenario)
    assert not is_complete(out / "dijkstra" / "rep-1", fp)
    assert is_complete(out / "dijkstra" / "rep-0", fp)


def test_progress_reporter_does_not_change_the_run(small: Path, tmp_path: Path) -> None:
    scenario = load_scenario(small)
    seen: list[float] = []

    def task(d: str) -> Task:
        return Task(scenario, "resilient", 0, str(tmp_path / d), fingerprint=fingerprint(scenario))

    execute_task(task("quiet"))
    execute_task(task("watched"), report=lambda _k, now: seen.append(now))
    for name in ("metrics.json", "trace.jsonl", "series.json"):
        assert (tmp_path / "quiet" / name).read_bytes() == (
            tmp_path / "watched" / name
        ).read_bytes()


def test_inline_executor_propagates_exceptions() -> None:
    future = InlineExecutor().submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        future.result()


def test_student_t_interval() -> None:
    stat = describe([1.0, 2.0, 3.0, None])
    assert stat.n == 3 and stat.mean == pytest.approx(2.0)
    # t(0.975, 2) = 4.302652729749464; s = 1
    half = 4.302652729749464 / 3**0.5
    assert stat.ci_low == pytest.approx(2.0 - half) and stat.ci_high == pytest.approx(2.0 + half)
    assert describe([5.0]).ci_low is None
    assert describe([]).mean is None


def test_student_t_is_scipy_stats_t_ppf_to_the_bit() -> None:
    from scipy import stats

    for df in [*range(1, 60), 99, 100, 1_000, 12_345]:
        for p in (0.9, 0.95, 0.975, 0.995, 0.5, 0.025):
            assert student_t(p, df) == float(stats.t.ppf(p, df)), (p, df)
    assert student_t(0.975, 2) == 4.302652729749462


def test_intervals_stay_within_the_metric_range() -> None:
    rate = describe([0.737, 1.0], *metric_range("success_rate"))
    assert rate.ci_high == 1.0 and rate.ci_low is not None and rate.ci_low >= 0.0
    drops = describe([0.0, 10.0], *metric_range("messages_dropped"))
    assert drops.ci_low == 0.0 and drops.ci_high is not None and drops.ci_high > 10.0


def test_compare_bad_input_exits_2(small: Path, tmp_path: Path, capsys: Any) -> None:
    assert _compare(small, tmp_path / "o", "--set", "routing.los_penalty=1,2") == 2
    err = capsys.readouterr().err
    assert "did you mean 'loss_penalty'" in err and "--set routing.los_penalty=1" in err
    assert _compare(small, tmp_path / "o", "--set", "nonsense") == 2
    assert _compare(small, tmp_path / "o", "--executor", "dask") == 2


def test_gateway_failover_separates_resilient_from_dijkstra(tmp_path: Path) -> None:
    out = tmp_path / "gf"
    code = main(
        [
            "compare",
            str(ROOT / "scenarios" / "gateway_failover.yaml"),
            "--out",
            str(out),
            "--quiet",
            "--routers",
            "dijkstra,resilient",
            "--replications",
            "3",
            "--no-plots",
            "--jobs",
            "1",  # in this process: a pool's worker start-ups cost more than the six runs
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    rate = {r["router"]: r["metrics"]["success_rate"] for r in summary["results"]}
    assert rate["resilient"]["mean"] > rate["dijkstra"]["mean"]
    assert rate["resilient"]["ci_low"] > rate["dijkstra"]["ci_high"]  # no overlap
    report = (out / "report.md").read_text()
    assert "**resilient**'s success_rate" in report
    assert "do not overlap" in report


def test_compare_prints_the_headline_of_each_router(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _bare(small, tmp_path / "out", "--jobs", "1") == 0
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    header = next(line for line in out.splitlines() if "success rate" in line)
    assert header.split() == [
        "router",
        "success",
        "rate",
        "p95",
        "latency",
        "s",
        "dropped",
        "reroutes",
        "violations",
        "/",
        "1,000",
    ]
    for row in summary["results"]:
        stat = row["metrics"]["success_rate"]
        line = next(x for x in out.splitlines() if x.strip().startswith(row["router"] + " "))
        assert f"{stat['mean']:.3g} [{stat['ci_low']:.3g}, {stat['ci_high']:.3g}]" in line
