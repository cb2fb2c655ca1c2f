"""``run`` checks its trace in process, as the engine writes it (sim.experiments.checked):
the trace file keeps its golden bytes, and the verdicts (every check's counts,
counterexamples, per-workflow counts, the properties) are those of ``check`` re-reading
the file; the pass fed in blocks of any size gives the same; a line the pass refuses is
a located ``conformance.error``."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import check_run_dir, check_trace
from sim.conformance.checks.stream import Checker
from sim.conformance.truth import Truth, from_scenario
from sim.engine import run_replication
from sim.experiments import checked
from sim.experiments.checked import RunChecks
from sim.experiments.properties import property_metrics, property_monitor
from sim.experiments.runner import Task, execute_task
from sim.experiments.worker import built
from sim.scenario import load_scenario
from sim.view.fragment import EVENTS_FILE

ROOT = Path(__file__).resolve().parents[2]
HASHES = json.loads((ROOT / "tests" / "fixtures" / "golden_hashes.json").read_text("utf-8"))
MCP_VS_PLUS = ROOT / "scenarios" / "mcp_vs_mcp_plus.yaml"
SMC = ROOT / "scenarios" / "smc_approval.yaml"


@pytest.fixture(scope="module")
def mcp_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The lines of mcp_vs_mcp_plus (dijkstra, protocol): four checks violated."""
    out = tmp_path_factory.mktemp("mcp")
    run_replication(load_scenario(MCP_VS_PLUS), "dijkstra", 0, out, "protocol")
    return (out / "trace.jsonl").read_bytes().splitlines(keepends=True)


@pytest.fixture(scope="module")
def mcp_truth() -> Truth:
    return from_scenario(load_scenario(MCP_VS_PLUS))


@pytest.mark.parametrize("level", ["full", "protocol"])
def test_a_tapped_run_writes_the_golden_trace_and_checks_it_as_check_does(
    level: str, tmp_path: Path
) -> None:
    scenario = load_scenario(MCP_VS_PLUS)
    tapped: list[bytes] = []
    checker = Checker("t", scenario)

    def tap(text: bytes) -> None:
        tapped.append(text)
        checker.lines(text)

    run_replication(scenario, "dijkstra", 0, tmp_path, level, tap=tap)
    data = (tmp_path / "trace.jsonl").read_bytes()
    golden = HASHES[f"mcp_vs_mcp_plus/dijkstra/{level}/rep-0"]["trace.jsonl"]
    assert hashlib.sha256(data).hexdigest() == golden
    assert b"".join(tapped) == data and len(tapped) > 1
    fed, reread = checker.report(), check_trace(tmp_path / "trace.jsonl", scenario)
    assert {v.name for v in fed.verdicts if v.violations} >= {"lts", "write_approval"}
    assert fed.verdicts == reread.verdicts
    assert (fed.events, fed.instances) == (reread.events, reread.instances)


@pytest.mark.parametrize(
    ("file", "turn"),
    [(MCP_VS_PLUS, checked.TAP_BYTES), (MCP_VS_PLUS, 1), (SMC, checked.TAP_BYTES)],
    ids=["violations", "violations-fed-at-each-block", "properties"],
)
def test_the_verdicts_stored_by_run_are_those_of_check_rereading_the_trace(
    file: Path, turn: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fed at the end (a small trace is under one turn) or as each block is written; the
    trace's digest in ``run.json`` (taken as it was tapped) is the file's."""
    monkeypatch.setattr(checked, "TAP_BYTES", turn)
    router = "dijkstra"
    scenario = load_scenario(file)
    out = tmp_path / "rep-0"
    assert execute_task(Task(scenario, router, 0, str(out))).status == "ok"
    stored = json.loads((out / "metrics.json").read_text("utf-8"))
    # run.json's digest of the trace, taken from the tapped bytes, is the file's
    digest = json.loads((out / "run.json").read_text("utf-8"))["files"]["trace.jsonl"]
    assert digest == hashlib.sha256((out / "trace.jsonl").read_bytes()).hexdigest()
    monitor = property_monitor(scenario) if scenario.properties else None
    again = check_run_dir(out, scenario, consumers=[monitor] if monitor else ())
    assert {k: stored[k] for k in again} == again
    if monitor is not None:
        was_checked = again["conformance"]["checked"]
        assert stored["properties"] == property_metrics(monitor.finish(), was_checked)
        assert stored["properties"]  # the scenario's properties were monitored


@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=12))
def test_the_pass_fed_in_blocks_of_any_size_gives_the_verdicts_of_one_read(
    mcp_lines: list[bytes], mcp_truth: Truth, cuts: list[int]
) -> None:
    scenario = mcp_truth
    edges = sorted({c % (len(mcp_lines) + 1) for c in cuts} | {0, len(mcp_lines)})
    checker = Checker("t", scenario)
    for a, b in itertools.pairwise(edges):
        checker.lines(b"".join(mcp_lines[a:b]))
    whole = check_trace(iter(mcp_lines), scenario, ordered=True)
    assert checker.report().verdicts == whole.verdicts


def test_a_line_the_pass_refuses_is_a_located_conformance_error_and_no_page_data(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(SMC)
    (tmp_path / "metrics.json").write_text("{}", encoding="utf-8")
    checks = RunChecks(tmp_path, built(scenario, "t"))
    checks.tap(
        b'{"t":0.0,"seq":0,"label":"wf_start","agent":"a"}\n{"t":0.0,"seq":1,"label":"nope"}\n'
    )
    checks.tap(b"not even read\n")
    checks.merge()
    error = json.loads((tmp_path / "metrics.json").read_text("utf-8"))["conformance"]
    assert error["ok"] is False
    assert error["error"].startswith(f"{tmp_path / 'trace.jsonl'}:2: unknown label 'nope'")
    assert not (tmp_path / EVENTS_FILE).exists()


def test_a_run_with_no_trace_line_builds_no_truth_nor_mesh_and_stores_the_empty_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trace level off: the verdicts and page data stored are those of the whole pass
    (checks, properties, page data on the scenario's mesh) fed no line, though neither the
    ground truth nor the page's mesh is built; at a level that writes lines, both are."""
    from sim.conformance import truth as truth_module
    from sim.conformance.checks import run_dir_verdicts
    from sim.view import mesh as mesh_module
    from sim.view.fragment import PagePass, encode_json, scenario_digest
    from sim.view.violations import groups

    scenario = load_scenario(SMC)
    monitor = property_monitor(scenario)
    mesh = mesh_module.mesh_from_scenario(scenario)
    page = PagePass(mesh, float(scenario.duration), io.BytesIO())
    report = Checker("t", scenario, consumers=[monitor, page]).report()
    found = monitor.finish()
    view = page.fragment(groups(report.verdicts, found), scenario_digest(scenario))
    expected = {**run_dir_verdicts(report), "properties": property_metrics(found, False)}

    def not_built(*_: object) -> None:
        raise LookupError("built")

    monkeypatch.setattr(truth_module, "from_scenario", not_built)
    monkeypatch.setattr(mesh_module, "mesh_from_scenario", not_built)
    out = tmp_path / "off"
    assert execute_task(Task(scenario, "dijkstra", 0, str(out), trace_level="off")).status == "ok"
    stored = json.loads((out / "metrics.json").read_text("utf-8"))
    assert expected["properties"] and {k: stored[k] for k in expected} == expected
    assert (out / "view.json").read_text("utf-8") == encode_json(view)
    assert (out / EVENTS_FILE).read_bytes() == b""
    with pytest.raises(LookupError, match="built"):
        execute_task(Task(scenario, "dijkstra", 0, str(tmp_path / "protocol")))
