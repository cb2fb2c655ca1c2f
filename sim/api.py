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


def _scenario(scenario: Scenario | str | Path) -> Scenario:
    if isinstance(scenario, str | Path):
        from sim.admission import load_scenario

        return load_scenario(scenario)
    return scenario


def _routers(scenario: Scenario, routers: Sequence[str] | None) -> list[str]:
    from sim.mesh.registry import unknown_router

    names = list(dict.fromkeys(routers or scenario.router_names))
    for name in names:
        problem = unknown_router(name, scenario)
        if problem is not None:
            raise ValueError(problem)
    return names


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
    from sim.experiments.compare import run_compare
    from sim.experiments.rundir import results_base
    from sim.experiments.runner import make_executor
    from sim.experiments.sweep import expand, load_points

    loaded = _scenario(scenario)
    names = _routers(loaded, routers)
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
    summary: dict[str, Any] = outcome.summary
    return summary


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
    import tempfile

    from sim.conformance.checks.families import CHECK_NAMES
    from sim.experiments.runner import make_executor
    from sim.experiments.smc_job import job_key, job_level, unseen
    from sim.experiments.smc_runner import MAX_RUNS, Rule, SmcJob, estimate
    from sim.scenario.properties_rules import select_properties

    loaded = _scenario(scenario)
    names = _routers(loaded, routers or loaded.router_names[:1])
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
    scratch = tempfile.TemporaryDirectory(prefix="protomesh-smc-") if checks else None
    job = SmcJob(
        loaded,
        tuple(props),
        level,
        key,
        checks=tuple(checks),
        scratch=None if scratch is None else scratch.name,
    )
    handle = make_executor("local", jobs)
    try:
        return [o.to_json() for o in estimate(job, names, rule, handle)]
    finally:
        handle.close()
        if scratch is not None:
            scratch.cleanup()


def verify(
    scenario: Scenario | str | Path,
    router: str | None = None,
    properties: Sequence[str] | None = None,
    workflows: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Explore every execution of one instance of each workflow (or of ``workflows``)
    under ``router`` (default: the scenario's first) and decide each property (default:
    all), as ``verify`` does; one ``verify --json`` object per workflow (each property
    holds, violated with its shortest counterexample's ``events``, undecided or
    not-decidable)."""
    from sim.verify import decide, selected

    loaded = _scenario(scenario)
    [name] = _routers(loaded, [router] if router else loaded.router_names[:1])
    known = [w.name for w in loaded.workflows]
    wanted = list(dict.fromkeys(workflows or known))
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(f"unknown workflow {', '.join(unknown)} (known: {', '.join(known)})")
    props = selected(loaded, [], list(properties) if properties else None)
    out = []
    for w in wanted:
        verdict = decide(loaded, w, name, props)
        shown = verdict.to_json()
        for entry, pv in zip(shown["properties"], verdict.properties, strict=True):
            entry["events"] = pv.events
        out.append(shown)
    return out
