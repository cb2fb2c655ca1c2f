"""The mesh's rules on a loaded scenario (SPEC §1, §3, §12), run in the loader's pass.

The mesh owns router classes and capability matching, so it owns the rules that need
them: a router plug-in (or a built-in router given options) is a router class taking
its options; a task's capability is matched by some agent. The scenario layer cannot
import the mesh; :mod:`sim.admission` hands these rules to the loader, which locates
their findings like its own.
"""

from __future__ import annotations

from collections.abc import Iterator

from sim.mesh.capabilities import similarity
from sim.mesh.registry import router_class
from sim.plugins import BUILTIN_ROUTERS, PluginError, router_reference
from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import Finding, KnownNames
from sim.scenario.model import Scenario


def router_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """A router plug-in importable, a router, and taking its options; a built-in router
    taking the options it is given. Names (unknown, twice, a built-in's) are the
    scenario's rules."""
    for i, router in enumerate(scn.routers):
        reference = router.plugin
        where: FieldPath
        if reference is None:
            if router.name not in known.routers or not router.options:
                continue
            reference = router_reference(router.name) or router.name
            where = ("routers", i, "options")
        elif router.name in BUILTIN_ROUTERS:
            continue
        else:
            where = ("routers", i, "plugin")
        try:
            router_class(reference, router.options)
        except PluginError as exc:
            yield Finding(where, f"router plug-in '{reference}': {exc}")


def capability_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """A warning on a task whose capability no agent offers (no tool of that name, no
    capability of positive similarity): every call of it fails with no route."""
    for i, wf in enumerate(scn.workflows):
        for j, task in enumerate(wf.tasks):
            if task.capability is None or any(
                task.capability in agent.tools
                or similarity(task.capability, agent.capabilities) > 0
                for agent in scn.agents
            ):
                continue
            yield Finding(
                ("workflows", i, "tasks", j, "capability"),
                f"no agent's capabilities match '{task.capability}': every call of this "
                "task fails with no route",
                warning=True,
            )
