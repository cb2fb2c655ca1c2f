"""A live caller's routes: the router's choice, the caller's suspicions, reroutes.

The same router as the simulation (:func:`sim.mesh.registry.make_router`: built-in or
plug-in) chooses each route; its run-time policy is read from it, never from its name:
``static`` routers route on the full topology and never reroute, dynamic ones route
around what the caller suspects. After a timeout on a route the caller suspects what
:meth:`sim.mesh.Router.suspects` says (every node strictly between it and the target,
or the link of a one-hop route) for ``routing.suspect_ttl`` scenario seconds. Routes
are cached per (need, ρ, suspects); no time of their own.
"""

from __future__ import annotations

from typing import Any

from sim.mesh.errors import NoRoute
from sim.mesh.graph import ProtocolGraph, served_tool
from sim.mesh.route import NO_DOWN, DownSet, Route
from sim.mesh.routing import Router

__all__ = ["Routes"]


class Routes:
    """One caller's routes and failure detector (see the module)."""

    def __init__(
        self, agent: str, router: Router, graph: ProtocolGraph, suspect_ttl: float
    ) -> None:
        self.agent = agent
        self.router = router
        self.graph = graph
        self.static = router.static
        self.ttl = suspect_ttl
        self._nodes: dict[str, float] = {}  # suspect → until (scenario seconds)
        self._links: dict[frozenset[str], float] = {}
        self._cache: dict[Any, Route] = {}

    def down(self, now: float) -> DownSet:
        """What the caller suspects at ``now``."""
        if self.static:
            return NO_DOWN
        nodes = [n for n, until in self._nodes.items() if until > now]
        links = [ln for ln, until in self._links.items() if until > now]
        return DownSet.of(nodes, links) if nodes or links else NO_DOWN

    def route(self, need: str, rho: str, now: float) -> Route:
        """The route to a server of ``need`` issued in ``rho``: around the suspects for a
        dynamic router (over the full topology when nothing avoids them). Raises
        :class:`NoRoute`."""
        down = self.down(now)
        try:
            return self._route(need, rho, down)
        except NoRoute:
            if not down:
                raise
            return self._route(need, rho, NO_DOWN)

    def _route(self, need: str, rho: str, down: DownSet) -> Route:
        key = (need, rho, down)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self.router.serve(
                self.agent, need, source_protocol=rho, down=down
            )
        return hit

    def suspect(self, route: Route, now: float) -> None:
        """A timeout on ``route``: suspect what the router's policy says (dynamic only)."""
        if self.static:
            return
        nodes, links = self.router.suspects(route.path)
        for n in nodes:
            self._nodes[n] = now + self.ttl
        for ln in links:
            self._links[frozenset(ln)] = now + self.ttl

    def avoided(self, now: float) -> list[str]:
        """The nodes suspected at ``now``, sorted (``reroute``'s ``avoid``)."""
        return sorted(self.down(now).nodes)

    def tool_at(self, tool: str | None, capability: str | None, route: Route) -> str | None:
        """The tool a task calls at the end of ``route``."""
        return served_tool(self.graph.agent(route.target).tools, tool, capability)

    def hosts(self, route: Route, tool: str) -> bool:
        """Whether the end of ``route`` hosts ``tool``."""
        return tool in self.graph.agent(route.target).tools
