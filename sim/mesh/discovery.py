"""Where a task's call goes by default: from a tool name or a capability to a host.

A task names a tool or a capability (SPEC §1). By default (:meth:`Router.serve`) a
tool is served from the cheapest of its hosts by the router's own route cost (ties:
graph order), and a capability from the agent whose capabilities match it best
(token cosine, ties: graph order). The semantic router overrides this: it ranks
candidates by its score and fails over down the ranking.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sim.mesh.errors import NoRoute
from sim.mesh.route import NO_DOWN, DownSet, Route

if TYPE_CHECKING:
    from sim.mesh.routing import Router


def cheapest_service(
    router: Router,
    source: str,
    need: str,
    *,
    source_protocol: str | None = None,
    down: DownSet = NO_DOWN,
) -> Route:
    """The route ``router`` gives from ``source`` to the cheapest host of ``need``.

    ``need`` is a tool name or a capability. Raises :class:`NoRoute` when no host or
    matching agent is reachable. Once a host's route has searched the source's forward
    tree, the other hosts' costs are read off it (:meth:`Router._host_costs`) and only
    the cheapest is routed: the same answer as routing each host.
    """
    graph = router.graph
    hosts = graph.hosts(need)
    if not hosts:
        best = next((agent for agent in graph.matches(need) if agent != source), None)
        if best is None:
            raise NoRoute(f"no agent hosts or matches '{need}'")
        hosts = (best,)
    walked = router._serve_walk(source, hosts, source_protocol, down)
    if walked is not None:
        return walked
    best_route: Route | None = None
    failed: list[tuple[str, NoRoute]] = []
    by_tree = True
    for i, host in enumerate(hosts):
        if i > 0 and by_tree:  # the first host's route may have searched the source's tree
            rest = hosts[i:]
            costs = router._host_costs(source, rest, source_protocol, down)
            if costs is not None:
                # the first cheapest of the rest, as routing them one by one finds it
                k = min(range(len(rest)), key=costs.__getitem__)
                if costs[k] < (math.inf if best_route is None else best_route.cost):
                    return router.route(source, rest[k], source_protocol=source_protocol, down=down)
                if best_route is not None:
                    return best_route
                by_tree = False  # none is reachable: route them one by one for the reasons
        try:
            candidate = router.route(source, host, source_protocol=source_protocol, down=down)
        except NoRoute as exc:
            failed.append((host, exc))
            continue
        if best_route is None or candidate.cost < best_route.cost:
            best_route = candidate
    if best_route is None:
        raise NoRoute(
            lambda: (
                f"no host of '{need}' is reachable: "
                + "; ".join(f"{host}: {exc.reason}" for host, exc in failed)
            )
        )
    return best_route
