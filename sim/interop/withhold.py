"""What a fragment keeps out of the scenario because its rules reject it, for ``export mcp``
to restore: dependencies and fallbacks on tools outside the fragment, and the dependency
that closes each Requires/ProducesInputFor cycle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sim.calculus.mcp import Dependency, FailureMode, Fallback, Relation
from sim.scenario.rules import find_cycle

if TYPE_CHECKING:
    from sim.interop.fragments import ImportedTool

__all__ = ["withhold"]


def withhold(
    servers: Sequence[tuple[str, Sequence[ImportedTool]]],
) -> list[tuple[str, list[ImportedTool]]]:
    """Keep out of the scenario what its rules reject, to be restored by ``export mcp``:
    dependencies and fallbacks on tools outside the fragment, and the dependency that closes
    each Requires/ProducesInputFor cycle (the engine adds them to ≺, which must be acyclic;
    Φ⁺ of the real SGD schema has such cycles, e.g. Homes_1)."""
    names = {t.name for _, ts in servers for t in ts}
    tools = {t.name: t for _, ts in servers for t in ts}
    deps: dict[str, list[Dependency]] = {}
    modes: dict[str, list[FailureMode]] = {}
    held: dict[str, dict[str, list[dict[str, Any]]]] = {n: {} for n in names}
    notes: dict[str, list[str]] = {n: [] for n in names}
    for n, t in tools.items():
        deps[n] = []
        for d in t.descriptor.dependencies or ():
            if d.tool in names:
                deps[n].append(d)
            else:
                held[n].setdefault("dependencies", []).append(
                    {"tool": d.tool, "relation": d.relation.value}
                )
                notes[n].append(f"dependency on {d.tool!r} withheld: no such tool here")
        modes[n] = []
        for fm in t.descriptor.failure_modes or ():
            if isinstance(fm.recovery, Fallback) and fm.recovery.tool not in names:
                held[n].setdefault("failure_modes", []).append(
                    {"error": fm.error, "recovery": {"fallback": fm.recovery.tool}}
                )
                notes[n].append(f"failure mode {fm.error} withheld: no fallback tool here")
            else:
                modes[n].append(fm)
    ordering = (Relation.REQUIRES, Relation.PRODUCES_INPUT_FOR)
    while True:
        edges = {n: [d.tool for d in ds if d.relation in ordering] for n, ds in deps.items()}
        cycle = find_cycle(edges)
        if cycle is None:
            break
        src, dst = cycle[-2], cycle[-1]
        dep = next(d for d in deps[src] if d.tool == dst and d.relation in ordering)
        deps[src].remove(dep)
        held[src].setdefault("dependencies", []).append(
            {"tool": dep.tool, "relation": dep.relation.value}
        )
        notes[src].append(
            f"dependency ({dep.tool}, {dep.relation.value}) withheld: it closes the cycle "
            + " -> ".join(cycle)
            + " (scenario dependencies must be acyclic)"
        )
    out: list[tuple[str, list[ImportedTool]]] = []
    for agent, ts in servers:
        fixed: list[ImportedTool] = []
        for t in ts:
            if not held[t.name]:
                fixed.append(t)
                continue
            kept = replace(
                t.descriptor,
                dependencies=tuple(deps[t.name]),
                failure_modes=tuple(modes[t.name]),
            )
            fixed.append(
                replace(
                    t,
                    descriptor=kept,
                    withheld=held[t.name],
                    notes=(*t.notes, *notes[t.name]),
                )
            )
        out.append((agent, fixed))
    return out
