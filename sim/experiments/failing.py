"""A router that failed every instance: counted from its runs, explained by asking it.

A router whose runs started instances and saw none succeed (a plug-in whose costs
overflow, one that hides every route) is a result, not an error: the exit code stays
0, but ``run`` and ``compare`` say it on stderr, ``summary.json`` holds it under
``failed_every_instance`` (only for such a router, so other summaries keep their bytes)
and ``report.md`` names it with the reason (issue 38, item 11). The reason is the
router's own answer for the first task of each workflow, from its first initiator, as
``plan`` prints it.

Counting reads ``metrics.json`` values only (no engine), as the summary does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.scenario.model import Scenario


def _count(metrics: Mapping[str, Any], *path: str) -> int:
    data: Any = metrics
    for part in path:
        data = data.get(part) if isinstance(data, Mapping) else None
    return data if isinstance(data, int) and not isinstance(data, bool) else 0


def failed_every_instance(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``{started, failed, tasks_failed_by_reason}`` summed over the finished runs
    ``runs`` (their ``metrics.json``) when they started instances and none succeeded and
    some failed; None otherwise."""
    started = sum(_count(m, "workflows", "started") for m in runs)
    succeeded = sum(_count(m, "workflows", "succeeded") for m in runs)
    failed = sum(_count(m, "workflows", "failed") for m in runs)
    if not started or succeeded or not failed:
        return None
    reasons: dict[str, int] = {}
    for m in runs:
        by = m.get("tasks_failed_by_reason")
        if isinstance(by, Mapping):
            for reason, n in by.items():
                if isinstance(n, int):
                    reasons[str(reason)] = reasons.get(str(reason), 0) + n
    return {
        "started": started,
        "failed": failed,
        "tasks_failed_by_reason": dict(sorted(reasons.items())),
    }


def why(scenario: Scenario, router: str) -> str | None:
    """Why ``router`` fails: its answer for the first task of each workflow (``initiator
    -> need: reason``), the first that is no route or an error; None when each routes."""
    from sim.mesh import MeshError, NoRoute, ProtocolGraph, make_router

    try:
        built = make_router(router, ProtocolGraph.from_scenario(scenario), scenario)
    except (MeshError, ValueError) as exc:
        return str(exc)
    for wf in scenario.workflows:
        starts = scenario.initiators_of(wf)
        if not starts or not wf.tasks:
            continue
        task = wf.tasks[0]
        need = task.tool or task.capability or ""
        try:
            built.serve(starts[0], need, source_protocol=wf.rho_of(task))
        except NoRoute as exc:
            return f"{starts[0]} -> {need}: {exc.reason}"
        except MeshError as exc:
            return f"{starts[0]} -> {need}: {exc}"
    return None


def sentence(router: str, failed: Mapping[str, Any]) -> str:
    """``router 'r' failed every instance (N started, none succeeded; tasks failed:
    no_route N): why``."""
    reasons = ", ".join(f"{k} {v:,}" for k, v in failed.get("tasks_failed_by_reason", {}).items())
    text = (
        f"router '{router}' failed every instance ({failed['started']:,} started, none "
        f"succeeded{'; tasks failed: ' + reasons if reasons else ''})"
    )
    reason = failed.get("why")
    return f"{text}: {reason}" if reason else text
