"""compare --against DIR: the simulation beside live runs (laid out from real ``run``
outputs as ``<router>/live-<k>/`` with a live run's header), the arithmetic, the JSON,
the report's section, the duration, the routers, and every bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.engine.metrics import dumps
from sim.experiments.against import Live, LiveRun, compared, entry
from sim.experiments.summary import About, Point, Result, Stat, Summary, flatten

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "fixtures" / "scenarios" / "small_mesh.yaml"  # 300 s, small-mesh
#: what every compare here runs: 2 replications in this process, no figures
FAST = ["--replications", "2", "--jobs", "1", "--no-plots", "--quiet"]


def _run(out: Path, router: str, *extra: str) -> Path:
    argv = ["run", str(SMALL), "--router", router, "--replications", "2", "--out", str(out)]
    assert main([*argv, "--quiet", *extra]) == 0
    return out / router


@pytest.fixture(scope="module")
def reps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real ``run`` outputs of small-mesh, 2 replications per router: 300 s (the file's)
    from another seed than the file's (11, not 5), so that they differ from the simulation;
    200 s (``--set duration=200``) from the file's seed."""
    base = tmp_path_factory.mktemp("runs")
    return {
        "dijkstra": _run(base / "300", "dijkstra", "--seed", "11"),
        "resilient": _run(base / "300", "resilient", "--seed", "11"),
        "dijkstra@200": _run(base / "200", "dijkstra", "--set", "duration=200"),
        "resilient@200": _run(base / "200", "resilient", "--set", "duration=200"),
    }


def lay_out(
    reps: dict[str, Path],
    directory: Path,
    runs: dict[str, str],
    duration: float = 300.0,
    count: int = 2,
) -> Path:
    """``directory/<router>/live-<k>/{trace.jsonl, metrics.json}`` from the ``run`` outputs
    ``runs[router]`` names, with a live run's header."""
    for router, source in runs.items():
        for k in range(count):
            rep = reps[source] / f"rep-{k}"
            live = directory / router / f"live-{k}"
            live.mkdir(parents=True)
            shutil.copy(rep / "trace.jsonl", live / "trace.jsonl")
            metrics = json.loads((rep / "metrics.json").read_text(encoding="utf-8"))
            metrics["live"] = {"duration": duration, "speed": 10.0, "started": "2026-01-01"}
            (live / "metrics.json").write_text(dumps(metrics), encoding="utf-8")
    return directory


@pytest.fixture()
def live(reps: dict[str, Path], tmp_path: Path) -> Path:
    """Two live runs per router of the file's 300 s."""
    return lay_out(reps, tmp_path / "live", {"dijkstra": "dijkstra", "resilient": "resilient"})


def against(
    live: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["compare", str(SMALL), "--out", str(out), *FAST, "--against", str(live), *extra])
    got = capsys.readouterr()
    return code, got.out, got.err


def _metrics(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# --- the arithmetic ------------------------------------------------------------------


def test_the_page_reads_the_file_compare_writes() -> None:
    import sim.experiments.against
    import sim.view.against

    assert sim.experiments.against.AGAINST_FILE == sim.view.against.AGAINST_FILE


def test_entry_relative_error_difference_and_interval_by_hand() -> None:
    stat = Stat(3, 2.0, 0.5, 1.5, 2.5)
    row = entry(stat, [2.5, 3.5])  # live mean 3.0, above the interval
    assert row == {
        "simulated": {"mean": 2.0, "interval": [1.5, 2.5], "n": 3},
        "live": 3.0,
        "live_runs": [2.5, 3.5],
        "difference": -1.0,  # simulated - live
        "relative_error": 0.333333333,  # |2 - 3| / |3|, 9 significant digits
        "within_interval": False,
    }
    inside = entry(stat, [1.6])
    assert (inside["relative_error"], inside["within_interval"]) == (0.25, True)  # 0.4 / 1.6
    assert entry(stat, [2.5])["within_interval"] is True  # the bounds are inside


def test_entry_live_zero_missing_values_and_no_interval() -> None:
    stat = Stat(4, 0.5, 0.1, 0.0, 1.0)
    zero = entry(stat, [0.0, 0.0])
    assert (zero["live"], zero["relative_error"], zero["difference"]) == (0.0, None, 0.5)
    assert zero["within_interval"] is True
    # a live run without the metric (a p95 with no succeeded instance) is left out of the mean
    partial = entry(stat, [None, 0.4])
    assert (partial["live"], partial["live_runs"], partial["relative_error"]) == (
        0.4,
        [None, 0.4],
        0.25,
    )
    none = entry(stat, [None])
    assert (none["live"], none["difference"], none["relative_error"]) == (None, None, None)
    assert none["within_interval"] is None
    one = entry(Stat(1, 2.0, None, None, None), [4.0])
    assert one["simulated"] == {"mean": 2.0, "interval": None, "n": 1}
    assert (one["relative_error"], one["within_interval"]) == (0.5, None)
    assert entry(None, [1.0])["simulated"] == {"mean": None, "interval": None, "n": 0}


def test_compared_by_hand_with_a_metric_only_live_runs_have() -> None:
    stat = Stat(2, 10.0, 1.0, 9.0, 11.0)
    summary = Summary(
        0.95,
        2,
        ("a", "b"),
        (Point(None, {}),),
        tuple(Result(None, r, 2, {"timeouts": stat}, ()) for r in ("a", "b")),
        (),
        (),
        About("s", None, 1),
    )
    runs = tuple(
        LiveRun(router, f"live-{k}", Path(f"{router}/live-{k}"), 60.0, 5, metrics)
        for router, k, metrics in (
            ("a", 0, {"timeouts": 8.0, "property_violations_per_1000.p": 2.0}),
            ("a", 1, {"timeouts": 12.5}),
            ("c", 0, {"timeouts": 1.0}),
        )
    )
    table = compared(summary, Live(Path("live"), runs), ["a", "b"], 300.0)
    assert table["duration"] == {"file": 300.0, "live": 60.0, "simulated": 60.0}
    assert table["left_out"] == {"live_only": ["c"], "simulated_only": ["b"]}
    assert table["live_runs"] == {
        "a": [{"run": "live-0", "speed": 5}, {"run": "live-1", "speed": 5}]
    }
    assert table["metrics"] == ["timeouts", "property_violations_per_1000.p"]
    timeouts = table["routers"]["a"]["timeouts"]
    assert (timeouts["live"], timeouts["live_runs"]) == (10.25, [8.0, 12.5])
    assert (timeouts["difference"], timeouts["relative_error"]) == (-0.25, 0.0243902439)  # 1/41
    assert (timeouts["within_interval"], timeouts["unit"]) == (True, "time-outs")
    only_live = table["routers"]["a"]["property_violations_per_1000.p"]
    assert only_live["simulated"] == {"mean": None, "interval": None, "n": 0}
    assert (only_live["live"], only_live["live_runs"], only_live["relative_error"]) == (
        2.0,
        [2.0, None],
        None,
    )
    assert only_live["unit"] == "per 1,000 scopes"


# --- the comparison end to end ---------------------------------------------------------


def test_json_shape_values_and_determinism(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = against(live, tmp_path / "a", capsys, "--json")
    assert code == 0, err
    table = json.loads(out)
    assert out == dumps(table) == (tmp_path / "a" / "against.json").read_text(encoding="utf-8")
    assert sorted(table["routers"]) == ["dijkstra", "resilient"]
    summary = _metrics(tmp_path / "a" / "summary.json")
    for router, rows in table["routers"].items():
        result = next(r for r in summary["results"] if r["router"] == router)
        assert list(rows) == sorted(result["metrics"])  # every summary metric, sorted keys
        lives = [flatten(_metrics(live / router / f"live-{k}" / "metrics.json")) for k in (0, 1)]
        for metric, row in rows.items():
            assert {"simulated", "live", "relative_error"} <= set(row)
            assert set(row["simulated"]) >= {"mean", "interval"}
            stat = result["metrics"][metric]
            assert row["simulated"]["mean"] == stat["mean"]
            if stat["ci_low"] is not None:
                assert row["simulated"]["interval"] == [stat["ci_low"], stat["ci_high"]]
            assert row["live_runs"] == [x[metric] for x in lives]
    p95 = table["routers"]["resilient"]["latency_p95"]
    a, b = p95["live_runs"]
    assert p95["live"] == float(f"{(a + b) / 2:.9g}")
    sim = p95["simulated"]["mean"]
    assert p95["relative_error"] == float(f"{abs(sim - p95['live']) / p95['live']:.9g}")
    assert p95["difference"] == float(f"{sim - p95['live']:.9g}")
    assert table["duration"] == {"file": 300.0, "live": 300.0, "simulated": 300.0}
    assert table["left_out"] == {"live_only": [], "simulated_only": []}
    assert table["live_runs"]["dijkstra"] == [
        {"run": "live-0", "speed": 10.0},
        {"run": "live-1", "speed": 10.0},
    ]
    # the human lines went to stderr; the same inputs give the same bytes
    assert "summary:" in err and "summary:" not in out
    code, again, _ = against(live, tmp_path / "b", capsys, "--json")
    assert (code, again) == (0, out)


def test_the_simulated_side_is_plain_compare(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(SMALL), "--out", str(tmp_path / "plain"), *FAST]) == 0
    code, out, err = against(live, tmp_path / "against", capsys)
    assert code == 0, err
    plain = (tmp_path / "plain" / "summary.json").read_bytes()
    assert plain == (tmp_path / "against" / "summary.json").read_bytes()
    assert "simulation against the live mesh (relative error |simulated - live| / |live|):" in out
    assert f"against: {tmp_path / 'against' / 'against.json'}" in out
    assert not (tmp_path / "plain" / "against.json").exists()


def _outside(live: Path) -> None:
    """Make dijkstra's live runs' p50 latency 1000 s: far outside the simulated interval."""
    for k in (0, 1):
        path = live / "dijkstra" / f"live-{k}" / "metrics.json"
        metrics = _metrics(path)
        metrics["latency"]["p50"] = 1000.0
        path.write_text(dumps(metrics), encoding="utf-8")


def test_the_report_section_in_report_md_and_report_html(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _outside(live)
    code, _out, err = against(live, tmp_path / "r", capsys)
    assert code == 0, err
    table = _metrics(tmp_path / "r" / "against.json")
    row = table["routers"]["dijkstra"]["latency_p50"]
    assert (row["live"], row["within_interval"]) == (1000.0, False)
    mean, (lo, hi) = row["simulated"]["mean"], row["simulated"]["interval"]
    rel = f"{100 * (1000.0 - mean) / 1000.0:.3g} %"
    shown = f"{mean:.4g} [{lo:.4g}, {hi:.4g}]"
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "\n## simulation against the live mesh\n" in report
    assert f"Live runs in `{live}`: dijkstra (live-0, live-1); resilient (live-0, live-1)." in (
        report
    )
    assert f"| latency_p50 | s | {shown} | 1000 (1000, 1000) | {rel} | **outside** |" in report
    assert "| workflows_cancelled | instances | 0 [0, 0] | 0 (0, 0) | – (both 0) |  |" in report
    assert report.index("## simulation against") < report.index("## Files")
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert '<div id="against"><h2>simulation against the live mesh</h2>' in page
    assert (
        '<tr class="outside"><td style="text-align:left">latency_p50</td><td>s</td>'
        f"<td>{shown}</td><td>1000 (1000, 1000)</td><td>{rel}</td><td>outside</td></tr>"
    ) in page
    data = page.split('id="protomesh-data">')[1].split("</script>")[0].replace("<\\/", "</")
    assert json.loads(data)["against"] == table
    # a plain compare into the folder afterwards drops the comparison it no longer matches
    assert main(["compare", str(SMALL), "--out", str(tmp_path / "r"), *FAST]) == 0
    assert not (tmp_path / "r" / "against.json").exists()
    assert "against the live mesh" not in (tmp_path / "r" / "report.md").read_text("utf-8")
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert '<div id="against"></div>' in page and "<h2>simulation against" not in page


def test_a_shorter_live_run_is_simulated_as_long(
    reps: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = lay_out(
        reps,
        tmp_path / "live",
        {"dijkstra": "dijkstra@200", "resilient": "resilient@200"},
        duration=200.0,
    )
    code, out, err = against(live, tmp_path / "a", capsys, "--json")
    assert code == 0, err
    assert (
        "note: the live runs lasted 200 s of scenario time, the file says 300 s: "
        "simulating 200 s (as --set duration=200)"
    ) in err
    table = json.loads(out)
    assert table["duration"] == {"file": 300.0, "live": 200.0, "simulated": 200.0}
    assert _metrics(tmp_path / "a" / "dijkstra" / "rep-1" / "metrics.json")["duration"] == 200.0
    argv = ["compare", str(SMALL), "--out", str(tmp_path / "plain"), *FAST]
    assert main([*argv, "--set", "duration=200"]) == 0
    plain = (tmp_path / "plain" / "summary.json").read_bytes()
    assert plain == (tmp_path / "a" / "summary.json").read_bytes()
    # same seeds, same duration: the live runs laid out from `run` are the simulation itself
    started = table["routers"]["dijkstra"]["workflows_started"]
    assert (started["difference"], started["relative_error"]) == (0.0, 0.0)
    report = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    assert (
        "Each lasted 200 s of scenario time; the file says 300 s: the simulation ran 200 s "
        "(as with --set duration=200), so that counts compare."
    ) in report
    code, _, err = against(live, tmp_path / "b", capsys, "--set", "duration=200")
    assert code == 0 and "note:" not in err  # asked for already


def test_routers_on_one_side_only(
    reps: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = lay_out(reps, tmp_path / "live", {"dijkstra": "dijkstra"})
    (live / "dijkstra" / "live-2").mkdir()  # a live run that never finished
    code, _, err = against(live, tmp_path / "a", capsys, "--routers", "dijkstra,resilient")
    assert code == 0, err
    assert f"warning: {live / 'dijkstra' / 'live-2'}: no metrics.json (an unfinished live " in err
    assert f"warning: router 'resilient' has no live run under {live}: simulated only" in err
    table = _metrics(tmp_path / "a" / "against.json")
    assert list(table["routers"]) == ["dijkstra"]
    assert table["left_out"] == {"live_only": [], "simulated_only": ["resilient"]}
    assert "Simulated only, no live run: resilient." in (tmp_path / "a" / "report.md").read_text(
        "utf-8"
    )
    code, _, err = against(live, tmp_path / "b", capsys, "--routers", "resilient")
    assert code == 2
    assert err == (
        f"warning: {live / 'dijkstra' / 'live-2'}: no metrics.json (an unfinished live run?): "
        f"left out\nerror: {live}: no router in common: live runs of dijkstra; simulated "
        "routers resilient (the file's routers, or --routers)\n"
    )
    shutil.copytree(live / "dijkstra", live / "bfs")
    for k in (0, 1):
        path = live / "bfs" / f"live-{k}" / "metrics.json"
        path.write_text(dumps({**_metrics(path), "router": "bfs"}), encoding="utf-8")
    code, _, err = against(live, tmp_path / "c", capsys)
    assert code == 0
    assert (
        f"warning: {live / 'bfs'}: live runs of router 'bfs', not among the simulated "
        "routers (dijkstra, resilient): left out"
    ) in err
    assert _metrics(tmp_path / "c" / "against.json")["left_out"]["live_only"] == ["bfs"]


# --- bad input: one located line, exit 2 ----------------------------------------------


def _bad(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> str:
    capsys.readouterr()
    code = main(["compare", str(SMALL), "--out", str(out), *FAST, *argv])
    got = capsys.readouterr()
    assert code == 2
    assert got.out == "" and "Traceback" not in got.err
    assert not (out / "summary.json").exists()  # nothing ran
    return got.err


def _edit(live: Path, change: dict[str, Any], k: int = 0, router: str = "dijkstra") -> Path:
    path = live / router / f"live-{k}" / "metrics.json"
    metrics = {**_metrics(path), **change}
    path.write_text(dumps({k: v for k, v in metrics.items() if v is not None}), encoding="utf-8")
    return path


def test_missing_empty_and_file_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    nowhere = tmp_path / "nowhere"
    err = _bad(capsys, out, "--against", str(nowhere))
    assert err == f"error: {nowhere}: no such directory (--against)\n"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    err = _bad(capsys, out, "--against", str(tmp_path / "file"))
    assert err == f"error: {tmp_path / 'file'}: not a directory (--against)\n"
    empty = tmp_path / "empty"
    (empty / "dijkstra" / "rep-0").mkdir(parents=True)  # a run's folder, not a live run's
    err = _bad(capsys, out, "--against", str(empty))
    assert err == (
        f"error: {empty}: no <router>/live-<k>/metrics.json under it (the folder "
        "python -m sim live FILE --out DIR writes)\n"
    )


def test_malformed_metrics_are_named(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    path = live / "resilient" / "live-1" / "metrics.json"
    text = path.read_text(encoding="utf-8")
    path.write_text("{\n  oops", encoding="utf-8")
    err = _bad(capsys, out, "--against", str(live))
    assert err == (
        f"error: {path}: invalid JSON at line 2 column 3: Expecting property name enclosed "
        "in double quotes\n"
    )
    path.write_text("[1, 2]", encoding="utf-8")
    err = _bad(capsys, out, "--against", str(live))
    assert err == f"error: {path}: not a metrics.json: a JSON object is expected\n"
    path.write_text('{"scenario": "small-mesh", "live": {"duration": 300}}', encoding="utf-8")
    err = _bad(capsys, out, "--against", str(live))
    assert err == f"error: {path}: not a metrics.json: no 'workflows' counts\n"
    path.write_text(text, encoding="utf-8")
    path = _edit(live, {"live": None})
    err = _bad(capsys, out, "--against", str(live))
    assert err == f"error: {path}: no 'live' header: not the metrics of a live run\n"
    _edit(live, {"live": {"duration": -3, "speed": 1}})
    err = _bad(capsys, out, "--against", str(live))
    assert err == (
        f"error: {path}: live.duration: expected a positive number of scenario seconds, got -3\n"
    )


def test_another_scenario_router_or_duration(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    path = _edit(live, {"scenario": "train-booking"}, k=1)
    err = _bad(capsys, out, "--against", str(live))
    assert err == (
        f"error: {path}: a live run of scenario 'train-booking', not of 'small-mesh' "
        "(the scenario file's name)\n"
    )
    _edit(live, {"scenario": "small-mesh", "router": "bfs"}, k=1)
    err = _bad(capsys, out, "--against", str(live))
    assert err == f"error: {path}: a live run of router 'bfs' in the folder of 'dijkstra'\n"
    _edit(live, {"router": "dijkstra"}, k=1)
    longer = _edit(live, {"live": {"duration": 600, "speed": 10}}, router="resilient")
    err = _bad(capsys, out, "--against", str(live))
    first = live / "dijkstra" / "live-0" / "metrics.json"
    assert err == (
        f"error: {longer}: live.duration 600 s differs from 300 s in {first}: "
        "compare live runs of one duration\n"
    )


def test_bad_combinations_of_options(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert _bad(capsys, out, "--json") == "error: --json needs --against DIR\n"
    err = _bad(capsys, out, "--against", str(live), "--set", "failures.0.for=30,60")
    assert err == (
        "error: --against compares one configuration with the live runs, but --set "
        "failures.0.for=30,60 makes a sweep: set one value (--set PATH=V)\n"
    )
    err = _bad(capsys, out, "--against", str(live), "--set", "duration=100")
    assert err == (
        "error: --set duration=100: the live runs lasted 300 s of scenario time; "
        "compare --against simulates as long (leave duration out)\n"
    )
    swept = tmp_path / "swept.yaml"
    text = SMALL.read_text(encoding="utf-8")
    swept.write_text(text + "sweep:\n  parameters:\n    failures.0.for: [30, 60]\n", "utf-8")
    capsys.readouterr()
    assert main(["compare", str(swept), "--out", str(out), *FAST, "--against", str(live)]) == 2
    assert capsys.readouterr().err == (
        "error: --against compares one configuration with the live runs, but the file's "
        "sweep: block makes a sweep: set one value (--set PATH=V)\n"
    )
