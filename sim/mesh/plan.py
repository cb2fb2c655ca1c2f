"""Each workflow task's route under a router, as ``plan`` prints it and ``validate`` checks
it: from the workflow's first initiator, in the task's protocol, to the agent the router's
``serve`` picks for the task's tool or capability, with nothing down."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim.mesh.errors import NoRoute
from sim.mesh.route import Route

if TYPE_CHECKING:
    from sim.mesh.routing import Router
    from sim.scenario.model import Scenario


@dataclass(frozen=True)
class TaskRoute:
    """Task ``task`` (index ``task_index``) of workflow ``workflow`` (``workflow_index``):
    the call from ``initiator`` in ``protocol`` for ``need``; ``route`` when there is one,
    else ``reason`` (the router's sentence)."""

    workflow_index: int
    task_index: int
    workflow: str
    task: str
    need: str
    initiator: str
    protocol: str
    route: Route | None
    reason: str | None


def task_routes(router: Router, scenario: Scenario) -> Iterator[TaskRoute]:
    """Every task of every workflow with an initiator, in scenario order. A
    :class:`~sim.mesh.errors.MeshError` other than no route propagates."""
    for w, wf in enumerate(scenario.workflows):
        starts = scenario.initiators_of(wf)
        if not starts:
            continue
        for t, task in enumerate(wf.tasks):
            need = task.tool or task.capability or ""
            protocol = wf.rho_of(task)
            route: Route | None = None
            reason: str | None = None
            try:
                route = router.serve(starts[0], need, source_protocol=protocol)
            except NoRoute as exc:
                reason = exc.reason
            yield TaskRoute(w, t, wf.name, task.id, need, starts[0], protocol, route, reason)
