"""sim.experiments.smc_runner: in-process monitored replications are `run`'s replications,
the stopping rules read the ordered prefix, several routers share the seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.engine import run_replication
from sim.engine.simulation import Replication
from sim.engine.trace import TraceWriter
from sim.experiments.runner import fingerprint, make_executor
from sim.experiments.smc import clopper_pearson, planned_runs
from sim.experiments.smc_runner import (
    MonitorSink,
    Rule,
    SmcJob,
    compiled,
    estimate,
    replicate,
    run_batch,
)
from sim.properties import Monitor
from sim.scenario import load_scenario
from sim.scenario.model import Scenario
from sim.scenario.properties import compile_properties, tool_attributes

ROOT = Path(__file__).resolve().parents[2]
APPROVAL = ROOT / "scenarios" / "smc_approval.yaml"
TRAIN = ROOT / "scenarios" / "train_booking.yaml"


def _job(scenario: Scenario, level: str = "protocol") -> SmcJob:
    props = tuple(compile_properties(scenario.properties, scenario))
    return SmcJob(scenario, props, level, f"{fingerprint(scenario)}:{level}")


@pytest.fixture(scope="module")
def approval() -> Scenario:
    return load_scenario(APPROVAL)


@pytest.mark.parametrize("router", ["resilient", "semantic"])
def test_the_sink_receives_exactly_the_lines_run_writes(tmp_path: Path, router: str) -> None:
    """Through the gw1 outage (reroutes), replication after replication on the router
    and graph compiled once: byte for byte the lines `run` writes."""
    scenario = load_scenario(TRAIN).model_copy(update={"duration": 1000.0})
    c = compiled(_job(scenario, "full"))
    shared = c.router(router)
    assert shared is not None
    for rep in (3, 4):
        out = tmp_path / f"rep-{rep}"
        run_replication(scenario, router, rep, out, "full")
        written = (out / "trace.jsonl").read_bytes().splitlines()
        got: list[bytes] = []
        sink = MonitorSink(lambda ev, raw, got=got: got.append(raw), lambda b: b)
        trace = TraceWriter(sink, rep, "full")
        Replication(scenario, router, rep, trace, c.graph, shared).run()
        trace.flush()
        assert len(got) > 1000
        assert b'"label":"reroute"' in b"".join(got) or router != "resilient"
        assert got == written
    assert c.router(router) is shared  # built once per worker


def test_a_monitored_replication_gives_the_verdicts_of_check_on_runs_trace(
    tmp_path: Path,
) -> None:
    """Replication k in process == `run` replication k's trace checked by the monitor."""
    from sim.conformance import check_trace

    scenario = load_scenario(TRAIN).model_copy(update={"duration": 200.0})
    scenario = scenario.model_copy(
        update={"properties": load_scenario(APPROVAL).properties[1:]}  # approved-writes
    )
    job = _job(scenario)
    c = compiled(job)
    for rep in range(3):
        out = tmp_path / f"rep-{rep}"
        run_replication(scenario, "dijkstra", rep, out, "protocol")
        monitor = Monitor(job.properties, tool_attributes(scenario))
        check_trace(out / "trace.jsonl", scenario, consumers=[monitor])
        expected = tuple(v.violations == 0 for v in monitor.finish())
        assert replicate(c, "dijkstra", rep) == expected


def test_one_write_behind_approval_executes_in_the_replications_that_run_grants(
    approval: Scenario, tmp_path: Path
) -> None:
    c = compiled(_job(approval))
    for rep in range(12):
        out = tmp_path / f"rep-{rep}"
        run_replication(approval, "dijkstra", rep, out)
        executed = b'"label":"execute"' in (out / "trace.jsonl").read_bytes()
        paid, _approved = replicate(c, "dijkstra", rep)
        assert paid is executed


def test_estimation_stops_at_the_first_prefix_whose_interval_is_narrow_enough(
    approval: Scenario,
) -> None:
    job = _job(approval)
    rule = Rule(confidence=0.99, width=0.08)  # about 230 runs (test_cli_smc: width 0.05)
    (paid, _) = estimate(job, ["dijkstra"], rule, make_executor("local", 1))
    verdicts = [v[0] for v in run_batch(job, ("dijkstra",), 0, paid.runs)["dijkstra"]]
    k = 0
    for n, ok in enumerate(verdicts, start=1):
        k += ok
        lo, hi = clopper_pearson(k, n, 0.99)
        if n >= 2 and n < paid.runs:
            assert (hi - lo) / 2 > 0.08, f"should have stopped at {n}"
    assert k == paid.satisfied
    lo, hi = paid.interval
    assert (hi - lo) / 2 <= 0.08 and lo <= 0.7 <= hi
    assert paid.stopped == "width"
    assert abs(paid.runs - planned_runs(0.7, 0.08, 0.99)) < 0.15 * paid.runs
    assert paid.first_violation == verdicts.index(False)


def test_sprt_accepts_above_0_6_and_below_0_8_with_fewer_runs_than_estimation(
    approval: Scenario,
) -> None:
    job = _job(approval)
    inline = make_executor("local", 1)
    above = estimate(job, ["dijkstra"], Rule(threshold=0.6), inline)[0]
    below = estimate(job, ["dijkstra"], Rule(threshold=0.8), inline)[0]
    assert (above.stopped, above.to_json()["decision"]) == ("sprt", "above")
    assert (below.stopped, below.to_json()["decision"]) == ("sprt", "below")
    needed = planned_runs(0.7, 0.02, 0.99)
    assert above.runs < needed / 3 and below.runs < needed / 3


def test_max_runs_stops_and_says_so(approval: Scenario) -> None:
    job = _job(approval)
    inline = make_executor("local", 1)
    o = estimate(job, ["dijkstra"], Rule(width=0.001, max_runs=70), inline)[0]
    assert (o.runs, o.stopped) == (70, "max-runs")
    s = estimate(job, ["dijkstra"], Rule(threshold=0.7, max_runs=30), inline)[0]
    assert (s.runs, s.stopped, s.to_json()["decision"]) == (30, "max-runs", None)


def test_routers_share_the_seeds(approval: Scenario) -> None:
    """Routing does not touch the approval stream: the same seeds give the same counts."""
    job = _job(approval)
    a, b = estimate(job, ["dijkstra", "bfs"], Rule(width=0.08), make_executor("local", 1))[:2]
    assert (a.router, b.router) == ("dijkstra", "bfs")
    assert (a.runs, a.satisfied, a.first_violation) == (b.runs, b.satisfied, b.first_violation)


def test_the_result_does_not_depend_on_jobs_or_batch(approval: Scenario) -> None:
    job = _job(approval)
    rule = Rule(width=0.1)  # about 90 runs: 13 batches of 7, 2 of 64
    one = estimate(job, ["dijkstra"], rule, make_executor("local", 1), batch=7)
    pool = make_executor("local", 2)
    try:
        two = estimate(job, ["dijkstra"], rule, pool, batch=64)
    finally:
        pool.close()
    assert [o.to_json() for o in one] == [o.to_json() for o in two]
