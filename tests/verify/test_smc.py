"""``verify``, ``smc`` and ``run`` + ``check --property`` agree on user formulas (issue 13,
item 3): where ``verify`` proves a property, ``smc`` estimates 1.0 and no simulated run
violates it; where ``verify`` finds a violation, ``check`` confirms its counterexample
and ``smc`` estimates below 1, its first violating replication confirmed by ``check``.

On the shipped ``smc_approval`` (one instance per run: an approval granted with
probability 0.7, then a write), with two instance-scope formulas of a properties file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

REPO = Path(__file__).resolve().parents[2]
APPROVAL = str(REPO / "scenarios" / "smc_approval.yaml")
PROPERTIES = """\
- name: paid-when-succeeded
  scope: instance
  formula: "G (wf_end(detail.status=succeeded) -> O result(pay))"
- name: paid-in-every-instance
  scope: instance
  formula: "F execute(pay)"
"""


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def verdict_of(capsys: pytest.CaptureFixture[str], props: Path, name: str, out: Path) -> Any:
    code, text, _ = cli(
        capsys,
        *("verify", APPROVAL, "--properties", str(props), "--property", name),
        *("--counterexamples", str(out), "--json"),
    )
    obj = json.loads(text)
    assert code == (0 if obj["properties"][0]["verdict"] == "holds" else 1)
    return obj["properties"][0]


def smc_of(capsys: pytest.CaptureFixture[str], props: Path, name: str, *budget: str) -> Any:
    code, text, err = cli(
        capsys, "smc", APPROVAL, "--properties", str(props), "--property", name, *budget, "--json"
    )
    assert code == 0, err
    obj = json.loads(text)
    obj["err"] = err
    return obj


def check_of(capsys: pytest.CaptureFixture[str], trace: Path, props: Path, name: str) -> str:
    """``check --property name`` on ``trace``: the property's report line."""
    code, text, _ = cli(
        capsys,
        *("check", str(trace), "--scenario", APPROVAL, "--properties", str(props)),
        *("--property", name),
    )
    line = next(x for x in text.splitlines() if x.startswith(name + " "))
    assert code == (1 if "VIOLATED" in line else 0), text
    return line


@pytest.fixture
def props(tmp_path: Path) -> Path:
    path = tmp_path / "props.yaml"
    path.write_text(PROPERTIES)
    return path


def test_a_proved_formula_is_estimated_1_and_no_simulated_run_violates_it(
    capsys: pytest.CaptureFixture[str], props: Path, tmp_path: Path
) -> None:
    name = "paid-when-succeeded"
    proved = verdict_of(capsys, props, name, tmp_path / "cx")
    assert proved["verdict"] == "holds" and proved["states"] > 1
    est = smc_of(capsys, props, name, "--width", "0.05")
    assert (est["estimate"], est["satisfied"], est["first_violation"]) == (1.0, est["runs"], None)
    lo, hi = est["interval"]
    assert hi == 1.0 and 1.0 - 2 * 0.05 <= lo < 1.0 and est["stopped"] == "width"
    code, _, err = cli(
        capsys, "run", APPROVAL, "--replications", "8", "--out", str(tmp_path / "runs"), "--quiet"
    )
    assert code == 0, err
    traces = sorted((tmp_path / "runs").glob("*/rep-*/trace.jsonl"))
    assert len(traces) == 8
    for trace in traces:
        assert "VIOLATED" not in check_of(capsys, trace, props, name)


def test_a_violated_formula_is_confirmed_by_check_and_estimated_below_1(
    capsys: pytest.CaptureFixture[str], props: Path, tmp_path: Path
) -> None:
    name = "paid-in-every-instance"
    found = verdict_of(capsys, props, name, tmp_path / "cx")
    assert found["verdict"] == "violated"
    cx = Path(found["counterexample"])
    labels = [json.loads(x)["label"] for x in cx.read_text().splitlines()]
    # shortest: the discovery times out (a denial takes one transition more)
    assert labels[-1] == "wf_end" and "execute" not in labels
    assert "VIOLATED" in check_of(capsys, cx, props, name)
    est = smc_of(capsys, props, name, "--max-runs", "40")
    assert est["estimate"] < 1.0 and est["interval"][0] < 0.7 < est["interval"][1]
    k = est["first_violation"]
    assert isinstance(k, int) and f"rep-{k}/trace.jsonl" in est["err"]
    # the run smc names as the first violation, reproduced by `run`, violates it too
    replications = re.search(r"--replications (\d+)", est["err"])
    assert replications is not None and int(replications.group(1)) == k + 1
    out = tmp_path / "runs"
    code, _, err = cli(
        capsys, "run", APPROVAL, "--replications", str(k + 1), "--out", str(out), "--quiet"
    )
    assert code == 0, err
    trace = next(out.glob(f"*/rep-{k}/trace.jsonl"))
    assert "VIOLATED" in check_of(capsys, trace, props, name)
