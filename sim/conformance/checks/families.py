"""The seven checks of SPEC §6 by name, in report order (the one list of them)."""

from __future__ import annotations

from collections.abc import Callable

from sim.conformance.checks.base import Check, Core
from sim.conformance.checks.conservation import Conservation
from sim.conformance.checks.lts import LtsReplay
from sim.conformance.checks.order import Exclusive, RequiresOrder
from sim.conformance.checks.recovery import Recovery
from sim.conformance.checks.route_validity import RouteValidity
from sim.conformance.checks.write_approval import WriteApproval
from sim.conformance.truth import Truth

ALL_CHECKS: dict[str, type[Check]] = {
    "write_approval": WriteApproval,
    "requires_order": RequiresOrder,
    "exclusive": Exclusive,
    "recovery": Recovery,
    "lts": LtsReplay,
    "conservation": Conservation,
    "route_validity": RouteValidity,
}
CHECK_NAMES: tuple[str, ...] = tuple(ALL_CHECKS)
#: The checks that apply to SGD dialogues (no workflows, no transport).
SGD_CHECKS: tuple[str, ...] = ("write_approval", "lts", "recovery")
#: The checks whose rule is a pure core (:class:`~.base.Core`), by name: each one's core
#: on a ground truth (``verify`` steps it in its search state; the class streams it).
CORES: dict[str, Callable[[Truth], Core]] = {
    "write_approval": WriteApproval.core_of,
    "requires_order": RequiresOrder.core_of,
    "exclusive": Exclusive.core_of,
}
