"""Property: a scenario that validates always runs, under every router, and the engine
never loses a message unrecorded nor routes over a protocol its link lacks.

Hypothesis draws small random scenarios (agents, protocols, links, tools with failure
modes, dependencies and error rates, input schemas and service times of every shape,
some past the loader's bounds, workflows, outages). Drawings the loader rejects
are discarded; every accepted one must run to completion for each router, and its trace
must pass the checks that hold for every run whatever the callers know
(`conservation`, `route_validity`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from sim.conformance import check_trace
from sim.engine import run_replication
from sim.scenario import ScenarioError, parse_scenario
from tests.harness.scenario_strategies import scenario_text, scenarios


def validates_and_runs(examples: int) -> Any:
    """Hypothesis settings of the validate-then-run property: 30 examples in the default
    suite, 100 in its slow variant (``..._exhaustively``, run by make bench)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@validates_and_runs(30)
@given(doc=scenarios())
def test_a_scenario_that_validates_always_runs(tmp_path_factory: Any, doc: dict[str, Any]) -> None:
    try:
        scenario, _ = parse_scenario(scenario_text(doc), "fuzz.yaml")
    except ScenarioError:
        assume(False)
        return
    out: Path = tmp_path_factory.mktemp("run")
    for router in scenario.router_names:
        run_replication(scenario, router, 0, out / router, "full")
        report = check_trace(out / router / "trace.jsonl", scenario)
        verdicts = {v.name: v for v in report.verdicts}
        for name in ("conservation", "route_validity"):
            assert verdicts[name].violations == 0, (router, name, verdicts[name].message)


test_a_scenario_that_validates_always_runs_exhaustively = pytest.mark.slow(
    validates_and_runs(100)(
        given(doc=scenarios())(test_a_scenario_that_validates_always_runs.hypothesis.inner_test)
    )
)
