"""The outages of a live run: every node and link outage the scenario schedules or draws,
in scenario seconds, overlapping outages of one element merged (an element is down
while one outage covers it, as in the engine). Random outages (``mtbf``, ``mttr``) are
drawn from a stream per element, the same for every run with the same seed. No time of
their own; :class:`~sim.live.deploy.Deployment` carries them out."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sim.scenario.model import Scenario

__all__ = ["Fault", "faults"]


@dataclass(frozen=True, slots=True)
class Fault:
    """One outage: of a node (``element`` its id) or a link (two ids), in scenario
    seconds, and whether the node's process is killed rather than stopped."""

    element: tuple[str, ...]
    down: float
    up: float
    kill: bool = False

    @property
    def is_link(self) -> bool:
        return len(self.element) == 2


def faults(scenario: Scenario, seed: int, run: int) -> list[Fault]:
    """Every outage of the run before ``duration`` (random ones drawn from a stream per
    element), overlapping outages of one element merged, in time order."""
    spans: dict[tuple[tuple[str, ...], bool], list[tuple[float, float]]] = {}
    duration = scenario.duration
    #: a link by its two ends, as the scenario's ``links:`` declares it (the engine's order)
    ends = {frozenset(link.between): tuple(link.between) for link in scenario.links}
    for f in scenario.failures:
        if f.random is not None:
            r = f.random
            elements = [(n,) for n in r.nodes] + [ends[frozenset(ln)] for ln in r.links]
            for element in elements:
                rng = random.Random(f"protomesh-live/{seed}/{run}/failures/{'/'.join(element)}")
                t = 0.0
                while True:
                    t += rng.expovariate(1.0 / r.mtbf)
                    if t >= duration:
                        break
                    d = rng.expovariate(1.0 / r.mttr)
                    spans.setdefault((element, f.kill), []).append((t, t + d))
                    t += d
        else:
            element = (f.node,) if f.node is not None else ends[frozenset(f.link or ())]
            at, length = float(f.at or 0.0), float(f.for_ or 0.0)
            if at < duration:
                spans.setdefault((element, f.kill), []).append((at, at + length))
    out: list[Fault] = []
    for (element, kill), intervals in spans.items():
        intervals.sort()
        merged: list[list[float]] = []
        for a, b in intervals:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        out.extend(Fault(element, a, b, kill) for a, b in merged)
    out.sort(key=lambda f: (f.down, f.element))
    return out
