"""Where a task's call goes: from a tool name or a capability to a routed target agent.

A task names a tool or a capability (SPEC §1). The semantic router ranks candidates by
its score and fails over down the ranking. The other routers serve a tool from the
cheapest of its hosts by their own route cost (ties: graph order), and a capability
from the agent whose capabilities match it best (token cosine, ties: graph order).
"""

from __future__ import annotations

from sim.mesh.errors import NoRoute
from sim.mesh.routing import NO_DOWN, DownSet, Route, Router, SemanticRouter


def route_to_service(
    router: Router,
    source: str,
    need: str,
    *,
    source_protocol: str | None = None,
    down: DownSet = NO_DOWN,
) -> Route:
    """The route ``router`` gives from ``source`` to an agent that serves ``need``.

    ``need`` is a tool name or a capability. Raises :class:`NoRoute` when no host or
    matching agent is reachable.
    """
    if isinstance(router, SemanticRouter):
        return router.resolve(source, need, source_protocol=source_protocol, down=down)
    graph = router.graph
    hosts = graph.hosts(need)
    if not hosts:
        matcher = SemanticRouter(graph)
        scored = [(matcher.similarity(need, a.id), -i, a.id) for i, a in enumerate(graph.agents)]
        best = max((s for s in scored if s[2] != source), default=(0.0, 0, ""))
        if best[0] <= 0:
            raise NoRoute(f"no agent hosts or matches '{need}'")
        hosts = (best[2],)
    best_route: Route | None = None
    reasons: list[str] = []
    for host in hosts:
        try:
            candidate = router.route(source, host, source_protocol=source_protocol, down=down)
        except NoRoute as exc:
            reasons.append(f"{host}: {exc.reason}")
            continue
        if best_route is None or candidate.cost < best_route.cost:
            best_route = candidate
    if best_route is None:
        raise NoRoute(f"no host of '{need}' is reachable: " + "; ".join(reasons))
    return best_route
