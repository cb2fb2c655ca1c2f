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
    engine: str = "explicit",
    symbolic: bool = False,
    probability: bool = False,
) -> list[dict[str, Any]]:
    """Explore every execution of one instance of each workflow (or of ``workflows``)
    under ``router`` (default: the scenario's first) and decide each property (default:
    all), as ``verify`` does; one ``verify --json`` object per workflow (each property
    holds, violated with its shortest counterexample's ``events``, undecided or
    not-decidable). ``engine``: ``explicit`` (the breadth-first search) or ``storm``
    (:mod:`sim.verify.engines`; ``symbolic`` its decision-diagram engine,
    ``probability`` the minimum and maximum probability of a violation), as
    ``verify --engine``. Bad input: :class:`~sim.scenario.ScenarioError` or
    ``ValueError``; Storm without the extra: :class:`~sim.verify.storm.StormMissing`."""
    if engine not in ("explicit", "storm"):
        raise ValueError(f"unknown engine {engine!r} (known: explicit, storm)")
    if engine == "explicit" and (symbolic or probability):
        raise ValueError("symbolic and probability need engine='storm'")
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
        if engine == "storm":
            from sim.verify.engines import decide_storm

            verdict = decide_storm(
                loaded, w, name, props, symbolic=symbolic, probability=probability
            )
        else:
            verdict = decide(loaded, w, name, props)
        shown = verdict.to_json()
        for entry, pv in zip(shown["properties"], verdict.properties, strict=True):
            entry["events"] = pv.events
        out.append(shown)
    return out
