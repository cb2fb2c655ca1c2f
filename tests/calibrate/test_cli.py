"""``python -m sim calibrate``: its outputs, and every input error as one line and exit 2
(``sim/cli/calibrate.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main
from sim.scenario import load_scenario
from tests.harness.calibrate_traces import event, hop, write_trace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 100 s run of the calibration mesh at level full."""
    from sim.engine import run_replication
    from sim.scenario import parse_scenario
    from tests.harness.calibrate_traces import MESH

    folder = tmp_path_factory.mktemp("run")
    run_replication(parse_scenario(MESH, "mesh.yaml")[0], "dijkstra", 0, folder, "full")
    return folder / "trace.jsonl"


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["calibrate", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_it_writes_the_scenario_and_the_report(
    trace: Path, mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "calibrated.yaml"
    code, stdout, err = _run(capsys, trace, "--scenario", mesh_file, "--out", out)
    assert (code, err) == (0, "")
    report = tmp_path / "calibration"
    content = json.loads((report / "fit.json").read_text())
    n = len(content["quantities"])
    assert stdout.splitlines() == [
        f"calibrated {n} of {n} measured quantities from {content['events']:,} events; "
        f"the report in {report}; the scenario in {out}"
    ]
    scenario = load_scenario(out)
    assert scenario.links[1].latency == {"MCP": 0.005}
    plots = sorted(p.name for p in report.glob("*.png"))
    assert plots == sorted(q["plot"] for q in content["quantities"] if "plot" in q)
    assert plots[0] == "00-link-gw-planner-MCP+.png"
    assert (report / "fit.md").read_text().startswith(f"# Calibration of {mesh_file}\n")
    first = content["quantities"][0]
    assert set(first["families"]) == {"exponential", "lognormal", "gamma"}
    assert set(first["families"]["gamma"]) == {"params", "loglik", "ks", "p"}


def test_json_prints_fit_json_and_the_yaml_goes_to_out(
    trace: Path, mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "c.yaml", tmp_path / "rep"
    code, stdout, err = _run(
        capsys, trace, "--scenario", mesh_file, "--out", out, "--report", report, "--json"
    )
    assert code == 0
    assert json.loads(stdout) == json.loads((report / "fit.json").read_text())
    assert err.startswith("calibrated ")


def test_without_out_the_scenario_is_printed(
    trace: Path, mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, err = _run(
        capsys, trace, "--scenario", mesh_file, "--report", tmp_path / "r", "--min-samples", "100"
    )
    assert code == 0
    assert stdout.startswith("# yaml-language-server:")
    assert "kept: service lookup (78 samples, fewer than 100 (--min-samples): kept)" in err


def test_kept_quantities_past_ten_are_counted(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [hop(i * 0.1, i, "planner", "gw", "MCP+") for i in range(12)]
    events += [event("deliver", 2.0, "gw", detail={"msg": i}) for i in range(12)]
    trace = write_trace(tmp_path / "t.jsonl", events)
    code, _, err = _run(capsys, trace, "--scenario", mesh_file, "--report", tmp_path / "r")
    assert code == 0
    assert "kept: link gw|planner MCP+ (12 samples, fewer than 30 (--min-samples): kept)" in err


# --- input errors ------------------------------------------------------------------------------


def test_a_missing_trace(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nope = tmp_path / "nope.jsonl"
    assert _run(capsys, nope, "--scenario", mesh_file) == (
        2,
        "",
        f"error: {nope}: No such file or directory\n",
    )


def test_a_line_that_is_not_a_trace_event(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": 0, "seq": 0, "label": "wf_start"}\n[1, 2]\n', encoding="utf-8")
    assert _run(capsys, bad, "--scenario", mesh_file) == (
        2,
        "",
        f"error: {bad}:2: not a trace event: a trace line must be a JSON object\n",
    )


def test_a_trace_naming_a_link_the_scenario_lacks(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [hop(0.0, 1, "planner", "server", "MCP")])
    assert _run(capsys, trace, "--scenario", mesh_file) == (
        2,
        "",
        f"error: {trace}:1: hop over planner-server: no such link in {mesh_file}\n",
    )


def test_a_trace_naming_a_tool_the_scenario_lacks(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = event("execute", 0.0, "server", inv=1, tool="lokup", detail={"attempt": 1})
    trace = write_trace(tmp_path / "t.jsonl", [line])
    assert _run(capsys, trace, "--scenario", mesh_file)[2] == (
        f"error: {trace}:1: execute of tool 'lokup': no such tool in {mesh_file}\n"
    )


def test_an_empty_trace(
    mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert _run(capsys, empty, "--scenario", mesh_file) == (
        2,
        "",
        f"error: {empty}: no events (an empty trace)\n",
    )


def test_a_scenario_with_errors(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nprotocols: [MCP]\nagents: []\nlinkz: []\n", encoding="utf-8")
    code, stdout, err = _run(capsys, trace, "--scenario", bad)
    assert (code, stdout) == (2, "")
    assert err.splitlines() == [
        f"{bad}:3:9: agents: must have at least 1 item (got none)",
        f"{bad}:4:1: linkz: unknown key 'linkz' (did you mean 'links'?)",
    ]


def test_a_missing_scenario(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nope = tmp_path / "nope.yaml"
    assert _run(capsys, trace, "--scenario", nope) == (
        2,
        "",
        f"{nope}:1:1: <root>: cannot read: No such file or directory\n",
    )


def test_json_needs_out(trace: Path, mesh_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, trace, "--scenario", mesh_file, "--json") == (
        2,
        "",
        "error: --json prints the fit report on stdout: give --out FILE for the scenario\n",
    )


def test_a_report_folder_that_is_a_file(
    trace: Path, mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("", encoding="utf-8")
    out = tmp_path / "c.yaml"
    assert _run(capsys, trace, "--scenario", mesh_file, "--out", out, "--report", taken) == (
        2,
        "",
        f"error: {taken}: is a file; the output must be a directory\n",
    )
    assert not out.exists()


def test_an_out_file_that_cannot_be_written(
    trace: Path, mesh_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no" / "such" / "c.yaml"
    code, _, err = _run(capsys, trace, "--scenario", mesh_file, "--out", out, "--report", tmp_path)
    assert (code, err) == (2, f"error: cannot write {out}: No such file or directory\n")


@pytest.mark.parametrize(
    ("value", "why"), [("1", "must be at least 2"), ("x", "not a whole number: 'x'")]
)
def test_min_samples_below_2(
    trace: Path, mesh_file: Path, capsys: pytest.CaptureFixture[str], value: str, why: str
) -> None:
    code, _, err = _run(capsys, trace, "--scenario", mesh_file, "--min-samples", value)
    assert code == 2
    assert err.splitlines()[-1].endswith(f"error: argument --min-samples: {why}")


_PROBE = """
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["sim", *sys.argv[1:]]
runpy.run_module("sim", run_name="__main__", alter_sys=True)
"""


def test_bad_input_is_refused_before_scipy_and_matplotlib_are_imported(
    mesh_file: Path, tmp_path: Path
) -> None:
    args = ["calibrate", str(tmp_path / "nope.jsonl"), "--scenario", str(mesh_file)]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=False,
    )
    first, modules = done.stderr.splitlines()
    assert (done.returncode, first) == (
        2,
        f"error: {tmp_path / 'nope.jsonl'}: No such file or directory",
    )
    heavy = {m for m in json.loads(modules) if m.split(".")[0] in ("scipy", "matplotlib", "sim")}
    assert not {m for m in heavy if m.startswith(("scipy", "matplotlib", "sim.engine"))}
    assert "sim.calibrate.measure" in heavy
