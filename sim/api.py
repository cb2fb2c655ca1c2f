"""The Python API of the experiments, for notebooks and scripts: :func:`compare`,
:func:`smc` and :func:`verify`, beside ``load_scenario``, ``run_replication`` and
``check_trace`` (all re-exported by :mod:`sim`; docs/api.md). Each takes a scenario file or
a loaded :class:`~sim.scenario.Scenario`, prints nothing and returns what the command's
``--json`` prints, as Python objects; bad input raises the command's error
(:class:`~sim.scenario.ScenarioError`, ``ValueError``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.scenario.model import Scenario


def compare(
    scenario: Scenario | str | Path,
    routers: Sequence[str] | None = None,
    replications: int | None = None,
    out: str | Path | None = None,
    *,
    jobs: int = 1,
    plots: bool = False,
) -> dict[str, Any]:
    """Run ``routers`` (default: the scenario's) on the same seeds, ``replications`` each
    (default: the scenario's), into ``out`` (default ``results/<scenario>``) as ``compare``
    does (finished runs reused; ``plots`` off by default) and return ``summary.json`` as a
    dict (per router and metric the mean and 95 % interval, ``failure_reasons``,
    ``verdict``). A scenario with a ``sweep:`` block needs its file."""
    from sim.admission import admitted
    from sim.experiments.compare import run_compare
    from sim.experiments.rundir import results_base
    from sim.experiments.runner import make_executor
    from sim.experiments.sweep import expand, load_points
    from sim.mesh.registry import chosen_routers

    loaded = admitted(scenario)
    names = chosen_routers(loaded, routers)
    points = expand(loaded, [])
    if isinstance(scenario, str | Path):
        pairs, _ = load_points(scenario, loaded, points)
    elif loaded.sweep is None:
        pairs = [(points[0], loaded)]
    else:
        raise ValueError("a scenario with a sweep: block: give its file")
    base = Path(out) if out is not None else results_base(loaded.name, [])
    handle = make_executor("local", jobs)
    try:
        outcome = run_compare(
            loaded, pairs, names, replications or loaded.replications, base, handle, plots=plots
        )
    finally:
        handle.close()
    return outcome.summary.to_json()


def smc(
    scenario: Scenario | str | Path,
    properties: Sequence[str],
    routers: Sequence[str] | None = None,
    *,
    width: float = 0.01,
    confidence: float = 0.95,
    threshold: float | None = None,
    max_runs: int | None = None,
    jobs: int = 1,
) -> list[dict[str, Any]]:
    """Estimate Pr[a run satisfies each property] (named: the scenario's ``properties:`` or
    one of the seven checks) per router (default: the scenario's first), as ``smc`` does:
    Clopper–Pearson to ``width`` at ``confidence``, or Wald's SPRT against ``threshold``;
    one ``smc --json`` object per (property, router)."""

    from sim.admission import admitted
    from sim.conformance.checks.families import CHECK_NAMES
    from sim.experiments.runner import make_executor
    from sim.experiments.smc_job import job_key, job_level, unseen
    from sim.experiments.smc_runner import MAX_RUNS, Rule, SmcJob, estimate
    from sim.mesh.registry import chosen_routers
    from sim.scenario.properties import select_properties

    loaded = admitted(scenario)
    names = chosen_routers(loaded, routers or loaded.router_names[:1])
    chosen = select_properties(loaded, [], list(properties), CHECK_NAMES, every_check=False)
    props = [p for _, p in chosen if p is not None]
    checks = [n for n, p in chosen if p is None]
    if not props and not checks:
        raise ValueError("no property to check")
    rule = Rule(confidence, width, max_runs or MAX_RUNS, threshold)
    rule.start()  # ValueError on bad parameters
    level = job_level(loaded, props, checks, None)
    missing = unseen(level, checks)
    if missing:
        raise ValueError(f"trace level {level}: {missing}")
    key = job_key(loaded, level, props, checks)
    job = SmcJob(loaded, tuple(props), level, key, checks=tuple(checks))
    handle = make_executor("local", jobs)
    try:
        return [o.to_json() for o in estimate(job, names, rule, handle)]
    finally:
        handle.close()


def verify(
    scenario: Scenario | str | Path,
    router: str | None = None,
    properties: Sequence[str] | None = None,
    workflows: Sequence[str] | None = None,
    engine: str = "explicit",
    symbolic: bool = False,
    probability: bool = False,
) -> list[dict[str, Any]]:
    """:func:`sim.verify.decisions.verify`, imported when called (the model checker
    takes a second to import)."""
    from sim.verify.decisions import verify as decide_all

    return decide_all(scenario, router, properties, workflows, engine, symbolic, probability)
