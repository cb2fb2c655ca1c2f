"""``run`` and ``compare`` store the scenario's property verdicts (SPEC §9) in each run's
metrics.json and the summary (violations per 1,000 scopes with CIs); the report names
them; a scenario without properties gets none of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
APPROVAL = str(ROOT / "scenarios" / "smc_approval.yaml")
MINIMAL = str(ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml")


def _metrics(base: Path, router: str, rep: int) -> dict[str, object]:
    path = base / router / f"rep-{rep}" / "metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_run_stores_each_propertys_verdict_and_the_executions_decide_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", APPROVAL, "--replications", "6", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "property violations per 1,000 scopes" in out
    seen = set()
    for rep in range(6):
        m = _metrics(tmp_path, "dijkstra", rep)
        props = m["properties"]
        assert isinstance(props, dict)
        paid, approved = props["paid"], props["approved-writes"]
        executed = (
            b'"label":"execute"'
            in (tmp_path / "dijkstra" / f"rep-{rep}" / "trace.jsonl").read_bytes()
        )
        assert paid["scope"] == "run" and paid["examined"] == 1
        assert paid["violations"] == (0 if executed else 1)
        assert paid["violations_per_1000_scopes"] == (0.0 if executed else 1000.0)
        assert ("first" in paid) is not executed
        assert approved["violations"] == 0 and approved["examined"] >= 1
        seen.add(executed)
    assert seen == {True, False}  # both outcomes occur in 6 replications at g = 0.7


def test_compare_summarises_violations_per_1000_scopes_and_the_report_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", APPROVAL, "--replications", "6", "--jobs", "1", "--quiet", "--no-plots"]
    assert main([*argv, "--routers", "dijkstra", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    stats = summary["results"][0]["metrics"]
    paid = stats["property_violations_per_1000.paid"]
    violated = sum(
        _metrics(tmp_path, "dijkstra", k)["properties"]["paid"]["violations"]  # type: ignore[index]
        for k in range(6)
    )
    assert paid["n"] == 6 and paid["mean"] == pytest.approx(1000.0 * violated / 6)
    assert 0.0 <= paid["ci_low"] <= paid["mean"] <= paid["ci_high"] <= 1000.0
    assert stats["property_violations_per_1000.approved-writes"]["mean"] == 0.0
    csv = (tmp_path / "summary.csv").read_text(encoding="utf-8")
    assert "property_violations_per_1000.paid" in csv and "per 1,000 scopes" in csv
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "- `paid` (run): `F execute(pay)`" in report
    assert "| property_violations_per_1000.paid | per 1,000 scopes |" in report


def test_a_scenario_without_properties_gets_no_property_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", MINIMAL, "--replications", "1", "--out", str(tmp_path)]) == 0
    assert "property" not in capsys.readouterr().out
    m = _metrics(tmp_path, "dijkstra", 0)
    assert "properties" not in m


def test_a_trace_level_off_checks_no_property(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", APPROVAL, "--replications", "1", "--trace", "off", "--out", str(tmp_path)]
    assert main(argv) == 0
    paid = _metrics(tmp_path, "dijkstra", 0)["properties"]["paid"]  # type: ignore[index]
    assert paid["violations"] is None and paid["violations_per_1000_scopes"] is None
