"""A router that failed every instance: counted from its runs, explained by asking it.

A router whose runs started instances and saw none succeed (a plug-in whose costs
overflow, one that hides every route) is a result, not an error: the exit code stays
0, but ``run`` and ``compare`` say it on stderr, ``summary.json`` holds it under
``failed_every_instance`` (only for such a router, so other summaries keep their bytes)
and ``report.md`` names it with the reason (issue 38, item 11). The failed tasks' reasons
are :mod:`sim.experiments.reasons`'s; the why is the router's own answer for the first
task it cannot route, as ``plan`` prints it (:func:`sim.mesh.plan.task_routes`).

Counting reads ``metrics.json`` values only (no engine), as the summary does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sim.experiments.reasons import FailureReason, leading_text

if TYPE_CHECKING:
    from sim.scenario.model import Scenario


def _count(metrics: Mapping[str, Any], *path: str) -> int:
    data: Any = metrics
    for part in path:
        data = data.get(part) if isinstance(data, Mapping) else None
    return data if isinstance(data, int) and not isinstance(data, bool) else 0


@dataclass(frozen=True, slots=True)
class FailedEveryInstance:
    """A router's runs that started instances and saw none succeed: the instances
    ``started`` and ``failed`` over its finished runs (``failed`` ≤ ``started``), and
    ``why`` (:func:`why`, None until asked or when it routes every task);
    ``summary.json``'s ``{started, failed, why}``."""

    started: int
    failed: int
    why: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"started": self.started, "failed": self.failed, "why": self.why}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> FailedEveryInstance:
        return FailedEveryInstance(data["started"], data["failed"], data.get("why"))


def failed_every_instance(runs: Sequence[Mapping[str, Any]]) -> FailedEveryInstance | None:
    """The instances started and failed, summed over the finished runs ``runs`` (their
    ``metrics.json``), when they started instances, none succeeded and some failed; None
    otherwise."""
    started = sum(_count(m, "workflows", "started") for m in runs)
    succeeded = sum(_count(m, "workflows", "succeeded") for m in runs)
    failed = sum(_count(m, "workflows", "failed") for m in runs)
    if not started or succeeded or not failed:
        return None
    return FailedEveryInstance(started, failed)


def why(scenario: Scenario, router: str) -> str | None:
    """Why ``router`` fails: ``initiator -> need: reason`` of the first task it cannot
    route, or the error building or asking it; None when it routes every task."""
    from sim.mesh import MeshError, ProtocolGraph, make_router
    from sim.mesh.plan import task_routes

    try:
        built = make_router(router, ProtocolGraph.from_scenario(scenario), scenario)
        for planned in task_routes(built, scenario):
            if planned.route is None:
                return f"{planned.initiator} -> {planned.need}: {planned.reason}"
    except (MeshError, ValueError) as exc:
        return str(exc)
    return None


def sentence(router: str, failed: FailedEveryInstance, reasons: Sequence[FailureReason]) -> str:
    """``router 'r' failed every instance (N started, none succeeded; tasks failed:
    no_route N (100 %)): why``; ``reasons``: :func:`~sim.experiments.reasons.failure_reasons`."""
    text = (
        f"router '{router}' failed every instance ({failed.started:,} started, none "
        f"succeeded; tasks failed: {leading_text(reasons)})"
    )
    return f"{text}: {failed.why}" if failed.why else text
