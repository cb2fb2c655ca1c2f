"""``python -m sim smc``: the issue's must-hold on the one-instance scenario, ``--json``
keys, several routers, jobs independence, the reproduction command, bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
APPROVAL = str(ROOT / "scenarios" / "smc_approval.yaml")
KEYS = {
    "property",
    "router",
    "runs",
    "satisfied",
    "estimate",
    "interval",
    "confidence",
    "stopped",
    "decision",
    "first_violation",
}


def _smc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main(["smc", *argv, "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if code == 0 else None, out.err


def test_estimation_at_width_0_05_covers_0_7(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.experiments.smc import planned_runs

    code, obj, err = _smc(
        capsys, APPROVAL, "--property", "paid", "--width", "0.05", "--confidence", "0.99"
    )
    assert code == 0
    assert set(obj) == KEYS
    lo, hi = obj["interval"]
    assert lo <= 0.7 <= hi and (hi - lo) / 2 <= 0.05
    assert obj["stopped"] == "width" and obj["decision"] is None and obj["confidence"] == 0.99
    assert abs(obj["runs"] - planned_runs(0.7, 0.05, 0.99)) < 0.15 * obj["runs"]
    assert obj["estimate"] == obj["satisfied"] / obj["runs"]
    k = obj["first_violation"]
    assert f"--replications {k + 1}" in err and f"rep-{k}/trace.jsonl" in err


@pytest.mark.slow
def test_the_issue_must_hold_width_0_02_confidence_0_99(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sim.experiments.smc import planned_runs

    code, obj, _ = _smc(
        capsys, APPROVAL, "--property", "paid", "--width", "0.02", "--confidence", "0.99",
        "--jobs", "2",
    )  # fmt: skip
    assert code == 0
    lo, hi = obj["interval"]
    assert lo <= 0.7 <= hi and (hi - lo) / 2 <= 0.02
    assert abs(obj["runs"] - planned_runs(0.7, 0.02, 0.99)) < 0.05 * obj["runs"]


@pytest.mark.parametrize(("theta", "decision"), [("0.6", "above"), ("0.8", "below")])
def test_sprt_decides(capsys: pytest.CaptureFixture[str], theta: str, decision: str) -> None:
    code, obj, _ = _smc(capsys, APPROVAL, "--property", "paid", "--threshold", theta)
    assert code == 0
    assert (obj["stopped"], obj["decision"]) == ("sprt", decision)
    assert obj["runs"] < 1200  # estimation to ±0.02 at 0.99 needs about 3,500


def test_jobs_1_and_2_print_the_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = (APPROVAL, "--width", "0.15", "--router", "dijkstra", "--router", "bfs")
    one = _smc(capsys, *args, "--jobs", "1")
    two = _smc(capsys, *args, "--jobs", "2")
    assert one[0] == two[0] == 0
    assert one[1] == two[1]
    assert isinstance(one[1], list) and len(one[1]) == 4  # 2 properties x 2 routers
    assert [(o["property"], o["router"]) for o in one[1]] == [
        ("paid", "dijkstra"),
        ("paid", "bfs"),
        ("approved-writes", "dijkstra"),
        ("approved-writes", "bfs"),
    ]
    approved = one[1][2]
    assert approved["satisfied"] == approved["runs"] and approved["first_violation"] is None


def test_the_table_names_the_routers_and_whether_intervals_are_disjoint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    code = main(["smc", APPROVAL, "--property", "paid", "--width", "0.1",
                 "--router", "dijkstra", "--router", "semantic"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "paid: dijkstra vs semantic: intervals overlap" in out
    assert "reproduce: python -m sim run" in out


def test_a_properties_file_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    props = tmp_path / "p.yaml"
    props.write_text("- {name: never-paid, scope: run, formula: 'G !execute(pay)'}\n")
    code, obj, _ = _smc(
        capsys, APPROVAL, "--properties", str(props), "--property", "never-paid",
        "--width", "0.1",
    )  # fmt: skip
    assert code == 0
    assert obj["property"] == "never-paid" and obj["first_violation"] == 0
    lo, hi = obj["interval"]
    assert lo <= 0.3 <= hi


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--property", "nope"], "--property: unknown property nope"),
        (["--router", "warp"], "--router: "),
        (["--width", "0.7"], "width must be in (0, 0.5)"),
        (["--threshold", "0.995"], "need 0 < θ − δ < θ + δ < 1"),
        (["--max-runs", "0"], "max-runs must be at least 1"),
        (["--confidence", "1.5"], "confidence must be in (0, 1)"),
        (["--trace", "off"], "--trace off"),
        (["--jobs", "0"], "--jobs: must be at least 1"),
    ],
)
def test_bad_input_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = _smc(capsys, APPROVAL, *argv)
    assert code == 2
    assert message in err


def test_a_malformed_formula_is_located(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    props = tmp_path / "bad.yaml"
    props.write_text("- name: broken\n  scope: run\n  formula: 'F (execute(pay)'\n")
    code, _, err = _smc(capsys, APPROVAL, "--properties", str(props))
    assert code == 2
    assert f"{props}:3:" in err


def test_a_missing_scenario_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _smc(capsys, str(tmp_path / "none.yaml"))
    assert code == 2 and "none.yaml" in err


def test_a_dask_cluster_prints_the_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    distributed = pytest.importorskip("distributed")
    args = (APPROVAL, "--property", "paid", "--width", "0.15")
    local = _smc(capsys, *args)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        dask = _smc(capsys, *args, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert local[0] == dask[0] == 0
    assert local[1] == dask[1]


def test_a_check_is_a_property_by_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--property write_approval`` is the check itself on each replication's trace:
    the same verdicts as a user formula of P2."""
    text = Path(APPROVAL).read_text(encoding="utf-8")
    never = tmp_path / "never.yaml"  # plain MCP carries no requires_approval: never asked
    never.write_text(
        text.replace("grant_probability: 0.7\n", "grant_probability: 0.7\n  mcp_policy: never\n")
    )
    code, obj, _ = _smc(
        capsys, str(never), "--property", "write_approval", "--property", "approved-writes",
        "--max-runs", "20",
    )  # fmt: skip
    assert code == 0
    builtin, user = obj
    assert (builtin["property"], user["property"]) == ("write_approval", "approved-writes")
    assert builtin["runs"] == user["runs"] == 20
    assert builtin["satisfied"] == user["satisfied"] == 0
    code, obj, _ = _smc(capsys, APPROVAL, "--property", "write_approval", "--max-runs", "20")
    assert code == 0 and obj["satisfied"] == 20
    # no ExclusiveWith pair: nothing to violate
    code, obj, _ = _smc(capsys, APPROVAL, "--property", "exclusive", "--max-runs", "5")
    assert code == 0 and obj["satisfied"] == 5


def test_a_check_without_a_formula_is_its_verdict_on_each_replications_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--property recovery`` has no formula: each replication's trace goes through the
    check itself. Its verdicts are those of ``run``'s own check of the same replications
    (train_booking under resilient, 1,000 s: gw1 down at 600 s, recovery violated)."""
    text = (ROOT / "scenarios" / "train_booking.yaml").read_text(encoding="utf-8")
    short = tmp_path / "short.yaml"
    short.write_text(text.replace("duration: 3600", "duration: 1000"), encoding="utf-8")
    assert "duration: 1000" in short.read_text()
    code, obj, err = _smc(
        capsys, str(short), "--property", "recovery", "--router", "resilient", "--max-runs", "3"
    )
    assert code == 0 and obj["property"] == "recovery" and obj["runs"] == 3
    capsys.readouterr()
    out = tmp_path / "runs"
    argv = ["run", str(short), "--router", "resilient", "--replications", "3", "--out", str(out)]
    assert main([*argv, "--quiet"]) in (0, 1)
    violated = [
        json.loads((out / "resilient" / f"rep-{k}" / "metrics.json").read_text())["violations"][
            "recovery"
        ]
        > 0
        for k in range(3)
    ]
    assert any(violated)  # the case is not vacuous
    assert obj["satisfied"] == violated.count(False)
    assert obj["first_violation"] == violated.index(True)
    assert "--only recovery" in err and "--property recovery" not in err


def test_checks_and_properties_together_do_not_depend_on_jobs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    args = (APPROVAL, "--property", "lts", "--property", "paid", "--property", "conservation")
    one = _smc(capsys, *args, "--max-runs", "24", "--jobs", "1")
    two = _smc(capsys, *args, "--max-runs", "24", "--jobs", "2")
    assert one[0] == two[0] == 0 and one[1] == two[1]
    assert list(scratch.iterdir()) == []  # no replication's trace is written to a file
    # in the order asked for
    assert [o["property"] for o in one[1]] == ["lts", "paid", "conservation"]
    assert one[1][0]["satisfied"] == one[1][2]["satisfied"] == 24


def test_a_transport_check_needs_trace_full(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _smc(capsys, APPROVAL, "--property", "route_validity", "--trace", "protocol")
    assert code == 2
    assert "--trace protocol: route_validity reads" in err and "only level full keeps" in err
