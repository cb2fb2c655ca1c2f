"""The rule on ``sweep:``: each parameter a field path a point can set (not ``name``
or ``sweep`` itself)."""

from __future__ import annotations

from collections.abc import Iterator

from sim.scenario.findings import Finding, KnownNames
from sim.scenario.model import Scenario


def sweep_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    sweep = scn.sweep
    if sweep is None:
        return
    named = [(("sweep", "parameters", k), k) for k in sweep.parameters] + [
        (("sweep", "points", i, k), k) for i, point in enumerate(sweep.points) for k in point
    ]
    for path, name in named:
        parts = name.split(".")
        if parts[0] in ("sweep", "name") or any(not part for part in parts):
            yield Finding(
                path,
                f"cannot sweep '{name}': give a field path like routing.loss_penalty "
                "(not `name` or `sweep`)",
                at_key=True,
            )
