"""An abort after ServiceDown where ``Retry(2)`` is declared, on the parts mesh under load.

Investigated (issue 34, suspected engine/check bug): neither is wrong. Over plain MCP the
caller's view comes from ``tools/list``, which does not carry ``failure_modes`` (SPEC §2,
§4: unknown recovery is abort), so the engine aborts at the first ServiceDown; the
``recovery`` and ``lts`` checks hold the trace to the ground truth (SPEC §6 P3) and flag
it — the expressiveness gap made observable. Over SGD, whose wire carries the failure
modes, the same workload retries and every check holds: the engine's retry accounting
is per invocation and right.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

from sim.conformance.checks import check_trace
from sim.engine import run_replication
from sim.scenario import parse_scenario
from tests.harness.engine_parts import MESH

#: five instances at once on a server of concurrency 1 (1.5 s each): the later requests
#: queue past the 5 s timeout, so ServiceDown is certain without any fault
WORKLOAD = """
workflows:
  - name: w
    initiator: a
    protocol: MCP
    arrivals: {times: [0, 0, 0, 0, 0]}
    timeout: 5
    tasks:
      - {id: r, tool: read_it, args: {id: x}}
"""


def run(tmp_path: Path, protocol: str) -> tuple[Counter[str], dict[str, str]]:
    mesh = textwrap.dedent(MESH)
    text = mesh[: mesh.index("workflows:")].replace("duration: 100", "duration: 30")
    text = (text + textwrap.dedent(WORKLOAD)).replace("MCP", protocol)
    scenario, _ = parse_scenario(text, "mesh.yaml")
    run_replication(scenario, "dijkstra", 0, tmp_path, "full")
    trace = tmp_path / "trace.jsonl"
    labels = Counter(json.loads(x)["label"] for x in trace.read_text("utf-8").splitlines())
    report = check_trace(trace, scenario)
    return labels, {v.name: v.message for v in report.verdicts if not v.ok}


def test_a_plain_mcp_caller_aborts_on_servicedown_and_the_checks_flag_it(tmp_path: Path) -> None:
    labels, failed = run(tmp_path, "MCP")
    assert labels["error"] >= 1 and labels["retry"] == 0 and labels["abort"] == labels["error"]
    assert set(failed) == {"recovery", "lts"}
    assert failed["recovery"].startswith(
        "error ServiceDown of invocation 3 of read_it (instance w#2, task r) declares "
        "Retry(2): the next event should be retry, not abort"
    )
    assert "abort(read_it)" in failed["lts"] and "enabled: retry(read_it)" in failed["lts"]


def test_a_caller_that_knows_retry_2_retries_and_every_check_holds(tmp_path: Path) -> None:
    labels, failed = run(tmp_path, "SGD")
    assert labels["error"] >= 1 and labels["retry"] == labels["error"]
    assert labels["abort"] == 0 and labels["result"] == labels["wf_start"] == 5
    assert failed == {}
