"""Which agents share a process, and the error of a live run that cannot start.

By default every agent is its own process; a machine hosts at most
:data:`~sim.live.DEFAULT_MAX_PROCESSES` of them unless told otherwise. With
``--processes N`` agents are packed, except that an agent with a node outage keeps a
process of its own: stopping its process must stop nothing else. A scenario with
``faults:`` entries (message faults) does not run live."""

from __future__ import annotations

from sim.scenario.model import Scenario

__all__ = ["LiveError", "layout"]


class LiveError(Exception):
    """A live run that cannot start or go on: one line naming the agent (exit 2)."""


def layout(scenario: Scenario, max_processes: int, processes: int | None = None) -> list[list[str]]:
    """The agents of each process. Without ``processes``, one process per agent (more
    agents than ``max_processes`` is a :class:`LiveError` naming the count). With
    ``processes`` N, an agent with a node outage keeps a process of its own (stopping
    it must not stop others) and the other agents are packed round-robin into the rest.
    A scenario with ``faults:`` entries is a :class:`LiveError` (the live mesh carries
    out outages only)."""
    if scenario.faults:  # a run that cannot start: before any process
        kinds = ", ".join(sorted({f.kind for f in scenario.faults}))
        raise LiveError(
            f"{scenario.name}: the live mesh injects outages (failures:) only, not the "
            f"faults: entries ({kinds}); run the scenario in the engine"
        )
    ids = [a.id for a in scenario.agents]
    if processes is None:
        if len(ids) > max_processes:
            raise LiveError(
                f"{scenario.name}: {len(ids)} agents need {len(ids)} processes, more than "
                f"this machine hosts (--max-processes {max_processes}); pack them with "
                f"--processes N"
            )
        return [[a] for a in ids]
    fallible = [a for a in ids if a in _outaged(scenario)]
    rest = [a for a in ids if a not in fallible]
    need = len(fallible) + (1 if rest else 0)
    if processes < need:
        raise LiveError(
            f"{scenario.name}: --processes {processes} is too few: {len(fallible)} agents "
            f"with node outages need a process each ({', '.join(fallible)}), and the "
            f"{len(rest)} others at least one more"
        )
    packs = max(1, min(processes - len(fallible), len(rest)))
    groups = [[a] for a in fallible] + [rest[k::packs] for k in range(packs) if rest[k::packs]]
    return groups


def _outaged(scenario: Scenario) -> set[str]:
    out: set[str] = set()
    for f in scenario.failures:
        if f.node is not None:
            out.add(f.node)
        if f.random is not None:
            out.update(f.random.nodes)
    return out
