"""Exact against sampled (issue 35): Storm's probability of a violation and ``smc``'s
99 % Clopper–Pearson interval of the same property agree (slow: ``make bench``).

``smc`` estimates Pr[a run satisfies the property] on the timed engine; ``verify``'s
probability is one instance's, between the minimum and the maximum over the untimed
model's schedulers (timeouts are theirs). So the two are compared where a run is one
instance: the shipped ``smc_approval`` (its properties and the decidable checks, and
two instance formulas) and the closed-form scenarios of ``test_verify_storm`` as
runs. The shipped scenarios with Poisson arrivals hold many instances per run, whose
run-level probability is not an instance's. The check: the interval of Pr[violation]
(one minus smc's) meets [min, max].
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cli import main

pytest.importorskip("stormpy")

REPO = Path(__file__).resolve().parents[2]
APPROVAL = REPO / "scenarios" / "smc_approval.yaml"
FORMULAS = """\
- {name: paid-in-every-instance, scope: instance, formula: "F execute(pay)"}
- {name: no-denial, scope: invocation, formula: "G !deny"}
"""
#: the retried read of test_verify_storm's closed forms: Pr[abort] = 0.3^3
RETRIED = """name: retried
seed: 3
duration: 10
replications: 1
routers: [dijkstra]
protocols: ["MCP+"]
approval: {latency: {dist: constant, value: 0.5}, grant_probability: 0.7}
agents:
  - {id: caller, type: LLM_AGENT, protocols: {"MCP+": 1.0}}
  - {id: server, type: TOOL_SERVER, protocols: {"MCP+": 1.0}, tools: [a]}
links:
  - {between: [caller, server], latency: {"MCP+": 0.01}}
tools:
  - name: a
    description: A flaky read.
    side_effects: read
    failure_modes:
      - {error: Conflict, recovery: {retry: 2}}
      - {error: ServiceDown, recovery: {prompt: "down?"}}
    errors: {Conflict: 0.3}
    service_time: {dist: constant, value: 0.1}
workflows:
  - name: w
    initiator: caller
    protocol: "MCP+"
    arrivals: {times: [0]}
    tasks:
      - {id: a, tool: a}
"""


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    found = json.loads(out.out)
    assert isinstance(found, dict)
    return found


def _agree(
    capsys: pytest.CaptureFixture[str], scenario: Path, props: Path, name: str
) -> tuple[float, float, float, float]:
    exact = _json(
        capsys,
        *("verify", str(scenario), "--properties", str(props), "--property", name),
        *("--probability", "--json", "--counterexamples", str(props.parent / "cx")),
    )
    [verdict] = exact["properties"]  # type: ignore[misc]
    lo, hi = verdict["probability_min"], verdict["probability_max"]
    sampled = _json(
        capsys,
        *("smc", str(scenario), "--properties", str(props), "--property", name),
        *("--confidence", "0.99", "--max-runs", "400", "--width", "0.03", "--json"),
    )
    s_lo, s_hi = sampled["interval"]  # type: ignore[misc]
    v_lo, v_hi = 1 - s_hi, 1 - s_lo
    assert v_lo <= hi and lo <= v_hi, (name, (lo, hi), (v_lo, v_hi))
    return lo, hi, v_lo, v_hi


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["approved-writes", "paid-in-every-instance", "no-denial", "write_approval"]
)
def test_smc_approval_exact_lies_in_the_sampled_interval(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    props = tmp_path / "props.yaml"
    props.write_text(FORMULAS, encoding="utf-8")
    lo, hi, v_lo, v_hi = _agree(capsys, APPROVAL, props, name)
    if name == "no-denial":  # denied with 0.3, whatever the scheduler does after
        assert (lo, hi) == (0.0, pytest.approx(0.3))
        assert v_lo < 0.3 < v_hi
    if name == "paid-in-every-instance":  # unpaid: denied (0.3) or timed out (up to 1)
        assert (lo, hi) == (pytest.approx(0.3), 1.0)


@pytest.mark.slow
def test_a_retried_failure_aborts_as_often_as_sampled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "retried.yaml"
    scenario.write_text(RETRIED, encoding="utf-8")
    props = tmp_path / "props.yaml"
    props.write_text('- {name: no-abort, scope: invocation, formula: "G !abort"}\n')
    lo, hi, v_lo, v_hi = _agree(capsys, scenario, props, "no-abort")
    assert (lo, hi) == (0.0, pytest.approx(0.027))
    assert v_lo <= 0.027 <= v_hi
