"""The rules on the names a scenario chooses from the registry (:mod:`sim.plugins`):
``routers:`` (listed once, built in or a plug-in under a name of its own) and
``approval.policy`` (``module:Class`` or a registered name). Whether a plug-in's class
is a router or a policy taking its options is the mesh's and approval's rule."""

from __future__ import annotations

from collections.abc import Iterator

from sim.plugins import BUILTIN_ROUTERS, approval_names, policy_reference
from sim.scenario.findings import Finding, KnownNames
from sim.scenario.model import Scenario
from sim.spelling import did_you_mean


def router_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """Router names listed once and known (``known.routers``, given by the registry
    above), a plug-in not named as a built-in (SPEC §12). Whether a plug-in is a router
    class taking its options is the mesh's rule (:func:`sim.mesh.rules.router_findings`)."""
    seen: set[str] = set()
    for i, router in enumerate(scn.routers):
        name = router.name
        if name in seen:
            yield Finding(("routers", i), f"router '{name}' is listed twice")
        seen.add(name)
        if router.plugin is None and name not in known.routers:
            choices = ", ".join(known.routers)
            yield Finding(
                ("routers", i),
                f"must be one of {choices}, or {{name, plugin: package.module:Class}} "
                f"(got '{name}'){did_you_mean(name, known.routers)}",
            )
        elif router.plugin is not None and name in BUILTIN_ROUTERS:
            yield Finding(
                ("routers", i, "name"),
                f"'{name}' is a built-in router: give the plug-in another name",
            )


def approval_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """An ``approval.policy`` plug-in: ``module:Class`` or a name an installed package
    registers (SPEC §12). Whether the class is an approval policy taking its options is
    :func:`sim.approval.policy_findings`'s rule."""
    entry = scn.approval.policy
    if entry is None or policy_reference(entry.plugin) is not None:
        return
    names = approval_names()
    yield Finding(
        ("approval", "policy", "plugin"),
        f"unknown approval policy '{entry.plugin}'{did_you_mean(entry.plugin, names)}: "
        "give package.module:Class, or a name an installed package registers under "
        f"protomesh.approval (installed: {', '.join(names) or 'none'})",
    )
