"""The calibrated scenario (``sim/calibrate/write.py``): a simulated run's trace
calibrated, written, and loaded again; what is kept is the file's own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sim.calibrate.calibration import Source, calibrate, load
from sim.calibrate.write import calibrated_yaml
from sim.engine import run_replication
from sim.scenario import Distribution, parse_scenario
from tests.harness.calibrate_traces import hop, write_trace


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 100 s run of the calibration mesh at level full: its trace."""
    from tests.harness.calibrate_traces import MESH

    folder = tmp_path_factory.mktemp("run")
    scenario, _ = parse_scenario(MESH, "mesh.yaml")
    run_replication(scenario, "dijkstra", 0, folder, "full")
    return folder / "trace.jsonl"


def test_the_calibrated_scenario_loads_with_the_fitted_values(
    run: Path, mesh: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    cal = calibrate([run], mesh)
    text = calibrated_yaml(cal, ["run/trace.jsonl"], "calibration")
    header = text.splitlines()[:5]
    assert header == [
        "# yaml-language-server: $schema=../../scenarios/protomesh.schema.json",
        "# Calibrated by `python -m sim calibrate` on 2023-11-14 from",
        "#   run/trace.jsonl",
        f"# {len(cal.results)} of {len(cal.results)} measured quantities written (the fit "
        f"report: calibration); everything else is {mesh.name}'s.",
        "# links[0].jitter (0.002 s) dropped: its MCP+ latency is now a distribution (its "
        "other numeric latencies now have no jitter)",
    ]
    scenario, _ = parse_scenario(text, "calibrated.yaml")
    planner_gw, gw_server = scenario.links
    assert isinstance(planner_gw.latency["MCP+"], Distribution)
    assert planner_gw.jitter == 0.0
    assert gw_server.latency == {"MCP": 0.005}  # a constant link stays a number
    assert scenario.agents[1].translation_delay == pytest.approx(0.001, abs=2e-6)
    assert scenario.agents[2].concurrency == 4  # the merge key's value, written out
    lookup = scenario.tools[0]
    assert lookup.service_time.dist == "exponential"
    assert lookup.service_time.mean == pytest.approx(0.1, rel=0.3)
    assert set(lookup.errors) == {"ServiceDown"}
    assert scenario.approval.latency == Distribution(dist="constant", value=2.0)
    assert 0.7 < scenario.approval.grant_probability < 1.0
    assert scenario.workflows == mesh.scenario.workflows  # everything else is the file's


def test_nothing_fitted_writes_the_file_s_own_data(run: Path, mesh: Source) -> None:
    cal = calibrate([run], mesh, min_samples=10**9)
    assert {r.status for r in cal.results} == {"kept"}
    text = calibrated_yaml(cal, ["t"], None)
    assert "# 0 of" in text
    assert yaml.safe_load(text) == yaml.safe_load(mesh.text)


def test_a_generated_topology_s_links_are_kept(tmp_path: Path) -> None:
    """A link of a ``topology:`` block has no entry of its own: measured, not written."""
    file = tmp_path / "generated.yaml"
    file.write_text(
        """\
name: generated
protocols: [MCP]
agents:
  - {id: a, type: LLM_AGENT, protocols: {MCP: 1.0}}
  - {id: b, type: LLM_AGENT, protocols: {MCP: 1.0}}
links:
  - {between: [a, b], latency: {MCP: 0.01}}
topology:
  generator: grid
  agents: 4
  protocols: {MCP: 1.0}
  gateways: 0
  attach: [{agent: a, links: 1}]
""",
        encoding="utf-8",
    )
    source = load(file)
    generated = next(
        lk for lk in source.scenario.links if "a" in lk.between and "b" not in lk.between
    )
    other = next(x for x in generated.between if x != "a")
    events = []
    for i in range(40):
        events += [hop(i, i, "a", "b", "MCP"), hop(i + 0.012, i, "b", "a", "MCP")]
        events += [hop(i + 0.5, 100 + i, "a", other, "MCP")]
        events += [hop(i + 0.52, 100 + i, other, "a", "MCP")]
    trace = write_trace(tmp_path / "t.jsonl", sorted(events, key=lambda e: e["t"]))
    cal = calibrate([trace], source)
    by_key = {r.key: r for r in cal.results}
    own = by_key["link a|b MCP"]
    assert (own.field, own.written) == ("links[0].latency.MCP", 0.012)
    ends = "|".join(sorted(("a", other)))
    kept = by_key[f"link {ends} MCP"]
    assert (kept.field, kept.written, kept.status) == (None, None, "kept")
    assert kept.note == "a link of the topology block: no entry of its own to write"
    written = parse_scenario(calibrated_yaml(cal, [str(trace)], None), "out.yaml")[0]
    assert written.links[0].latency == {"MCP": 0.012}
