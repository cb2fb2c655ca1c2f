"""The route service: compiled paths from a caller to a server of a tool or capability.

Inputs: the router (``sim.mesh``), the run-time topology, and per request the source,
the need (a tool or a capability), the protocol ρ the request is issued in and the set
of elements the caller suspects (``DownSet``). Outputs: a compiled
:class:`~sim.engine.paths.Path` (routes cached per (source, need, ρ) and suspect set;
compiled paths per (route, start protocol), so a path's identity is stable), or
:class:`~sim.mesh.errors.NoRoute`. The router's run-time policy is read here and only
here, by asking the router (never by its name): ``static`` (the router ignores
failures: no suspects, no reroute), what a caller suspects after a timeout on a path
(:meth:`sim.mesh.Router.suspects`) and how a need resolves to a target
(:meth:`sim.mesh.Router.serve`). Timing:
none; routes are computed at once when asked.
"""

from __future__ import annotations

from typing import Any

from sim.engine.paths import Path
from sim.engine.topology import Topology
from sim.mesh.errors import NoRoute
from sim.mesh.graph import served_tool
from sim.mesh.routing import NO_DOWN, DownSet, Route, Router

#: Cached routes kept before the cache is cleared (memory bound on huge meshes).
ROUTE_CACHE = 200_000


class RouteService:
    """Routes of one replication for every caller, and the router's run-time policy."""

    __slots__ = ("_paths", "_routes", "name", "router", "static", "topology")

    def __init__(self, topology: Topology, router: Router, name: str) -> None:
        self.topology = topology
        self.router = router
        self.name = name
        #: the router ignores failures (routes over the full topology, never reroutes)
        self.static = router.static
        self._paths: dict[Any, Path] = {}
        self._routes: dict[Any, Path] = {}

    def compiled(self, route: Route, start: str) -> Path:
        """The compiled :class:`Path` of ``route`` starting in protocol ``start``."""
        key = (route.path, route.protocols, route.translations, start)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = Path(self.topology, route, start)
        return path

    def path_to(self, source: str, need: str, rho: str, down: DownSet) -> Path:
        """The router's path from ``source`` to a server of ``need`` issued in ``rho``."""
        key: Any = (source, need, rho) if down is NO_DOWN else (source, need, rho, down)
        path = self._routes.get(key)
        if path is None:
            route = self.router.serve(source, need, source_protocol=rho, down=down)
            path = self.compiled(route, rho)
            if len(self._routes) > ROUTE_CACHE:
                self._routes.clear()
            self._routes[key] = path
        return path

    def current(self, source: str, need: str, rho: str, down: DownSet) -> Path:
        """The path avoiding ``down`` (the caller's suspects), or over the full topology
        when nothing avoids them (raises :class:`NoRoute` when neither exists)."""
        try:
            return self.path_to(source, need, rho, down)
        except NoRoute:
            if not down:
                raise
            return self.path_to(source, need, rho, NO_DOWN)

    def suspects(self, path: Path) -> tuple[list[str], list[frozenset[str]]]:
        """What a caller suspects after a timeout on ``path`` (nodes, links).

        The router's policy (:meth:`sim.mesh.Router.suspects`); static routers
        suspect nothing."""
        if self.static:
            return [], []
        return self.router.suspects(path.route.path)

    def hosts(self, path: Path, tool: str) -> bool:
        """Whether the end of ``path`` is a tool server hosting ``tool``."""
        end = path.nodes[-1]
        return end.server is not None and tool in self.topology.hosted[end.id]

    def tool_at(self, tool: str | None, capability: str | None, path: Path) -> str | None:
        """The tool a task calls at the end of ``path``: ``tool`` if hosted there, else
        for a ``capability`` the hosted tool whose name best matches its tokens."""
        return served_tool(path.hosted, tool, capability)
