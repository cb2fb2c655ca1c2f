"""Calibration recovers the law it was run with (slow, ``make bench``): a tool whose
service time is lognormal (and, in a second case, gamma), about 2,000 executions per
run, ten seeds; the fitted parameters within 5 % of the truth in every seed, the true
family chosen in at least 9 of 10."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.calibrate.calibration import calibrate, load
from sim.engine import run_replication

SCENARIO = """\
name: recovery
seed: {seed}
duration: 1000
protocols: [MCP]
agents:
  - {{id: planner, type: LLM_AGENT, protocols: {{MCP: 1.0}}}}
  - {{id: server, type: TOOL_SERVER, protocols: {{MCP: 1.0}}, tools: [work], concurrency: 64}}
links:
  - {{between: [planner, server], latency: {{MCP: 0.002}}}}
tools:
  - {{name: work, side_effects: read, service_time: {law}}}
workflows:
  - name: jobs
    initiator: planner
    protocol: MCP
    arrivals: {{process: poisson, rate: 2}}
    tasks: [{{id: w, tool: work}}]
"""

CASES = {
    "lognormal": ("{dist: lognormal, median: 0.1, sigma: 0.5}", {"median": 0.1, "sigma": 0.5}),
    "gamma": ("{dist: gamma, mean: 0.1, sd: 0.05}", {"mean": 0.1, "sd": 0.05}),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(CASES))
def test_the_service_time_s_law_is_recovered(family: str, tmp_path: Path) -> None:
    law, truth = CASES[family]
    chosen: list[str] = []
    for seed in range(10):
        file = tmp_path / f"s{seed}.yaml"
        file.write_text(SCENARIO.format(seed=seed, law=law), encoding="utf-8")
        source = load(file)
        run = tmp_path / f"run{seed}"
        run_replication(source.scenario, "dijkstra", 0, run, "full")
        cal = calibrate([run / "trace.jsonl"], source)
        (service,) = (r for r in cal.results if r.key == "service work")
        assert service.fit is not None and 1800 < service.n < 2200
        fitted = next(f for f in service.fit.families if f.family == family)
        for key, value in truth.items():
            assert fitted.params[key] == pytest.approx(value, rel=0.05), (seed, key)
        chosen.append(service.fit.chosen)
    assert chosen.count(family) >= 9, chosen
