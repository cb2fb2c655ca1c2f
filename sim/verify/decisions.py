"""``sim.verify(scenario)``: every property of each workflow decided, as ``verify --json``.

The API function of the model checker (docs/api.md), called through :mod:`sim.verify`
(a callable package) and :func:`sim.api.verify`; it prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sim.admission import admitted
from sim.mesh.registry import chosen_routers
from sim.scenario.model import Scenario
from sim.verify.verdicts import decide, selected


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
    not-decidable). Bad input: :class:`~sim.scenario.ScenarioError` or ``ValueError``."""
    loaded = admitted(scenario)
    [name] = chosen_routers(loaded, [router] if router else loaded.router_names[:1])
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
