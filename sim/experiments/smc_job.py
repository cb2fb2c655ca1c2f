"""What an smc job monitors and at which trace level: shared by ``python -m sim smc`` and
:func:`sim.smc`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.properties import Formula, Property
    from sim.scenario.model import Scenario


def labels_of(formula: Formula) -> set[str]:
    """The trace labels the atoms of ``formula`` name."""
    from sim.properties.ast import atoms

    return {atom.label for atom in atoms(formula)}


def monitor_level(requested: str | None, scenario_level: str, labels: set[str]) -> str:
    """The trace level the monitor sees: ``requested``, else ``full`` when the scenario
    traces at full or a label needs the transport events, else ``protocol``."""
    from sim.vocabulary import TRANSPORT_LABELS

    if requested is not None:
        return requested
    if scenario_level == "full" or labels & TRANSPORT_LABELS:
        return "full"
    return "protocol"


def unseen(level: str, checks: Sequence[str]) -> str:
    """Why a check cannot be decided at ``level`` ("" when every one can): the transport
    checks read ``send``/``hop``/``deliver``/``drop``, which only level full keeps."""
    from sim.conformance.checks.families import ALL_CHECKS
    from sim.vocabulary import TRANSPORT_LABELS

    if level == "full":
        return ""
    for name in checks:
        needs = sorted(set(ALL_CHECKS[name].labels) & TRANSPORT_LABELS)
        if needs:
            return f"{name} reads {', '.join(needs)} events, which only level full keeps"
    return ""


def job_level(
    scenario: Scenario, props: Sequence[Property], checks: Sequence[str], requested: str | None
) -> str:
    """The level a job of ``props`` and ``checks`` monitors (:func:`monitor_level`)."""
    from sim.conformance.checks.families import ALL_CHECKS

    labels = set().union(*(labels_of(p.formula) for p in props))
    labels |= {lab for name in checks for lab in ALL_CHECKS[name].labels}
    return monitor_level(requested, scenario.trace.value, labels)


def job_key(
    scenario: Scenario, level: str, props: Sequence[Property], checks: Sequence[str]
) -> str:
    """What identifies a job in a worker's cache."""
    from sim.experiments.runner import fingerprint

    key = f"{fingerprint(scenario)}:{level}:" + ";".join(f"{p.name}={p.text}" for p in props)
    return key + ":" + ",".join(checks)
