"""The semantic router of SPEC §3: capability matching, ranked candidates, failover."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sim.mesh.errors import NoRoute
from sim.mesh.route import NO_DOWN, DownSet, Route
from sim.mesh.routing import Router


@dataclass(frozen=True, slots=True)
class Candidate:
    """A semantic router's candidate: score = sim × Γ(a, p) / (1 + cost(π*))."""

    agent: str
    score: float
    similarity: float
    affinity: float
    route: Route = field(compare=False)


class SemanticRouter(Router):
    """Capability matching: rank candidates, route to the best live one (SPEC §3).

    ``need`` is a capability (matched by token cosine against caps(a)) or a tool name
    (its hosts are the candidates, with similarity 1). Γ is taken for the protocol in
    which the route arrives. Failover: ``down`` removes candidates and states.
    """

    name = "semantic"
    static = False

    def similarity(self, need: str, agent_id: str) -> float:
        """sim(need, caps(a)): 1 for a host of tool ``need``, else the token cosine."""
        agent = self.graph.agent(agent_id)
        if need in agent.tools:
            return 1.0
        return self.graph.matches(need).get(agent_id, 0.0)

    def rank(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        target_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> list[Candidate]:
        """Live, reachable candidates for ``need``, best first (ties: graph order)."""
        self._check(source, source, source_protocol, target_protocol)
        hosts = self.graph.hosts(need)
        pool = hosts or [a.id for a in self.graph.agents if a.id != source]
        ranked: list[tuple[float, int, Candidate]] = []
        for order, agent_id in enumerate(pool):
            sim = self.similarity(need, agent_id)
            if sim <= 0 or agent_id in down.nodes:
                continue
            try:
                route = self._shortest(
                    source, agent_id, source_protocol, target_protocol, down, bool(hosts)
                )
            except NoRoute:
                continue
            arrival = target_protocol or (
                route.protocols[-1] if route.protocols else source_protocol
            )
            affinity = (
                self.graph.affinity(agent_id, arrival)
                if arrival
                else max(self.graph.agent(agent_id).protocols.values())
            )
            score = sim * affinity / (1.0 + route.cost)
            semantic = Route(self.name, route.path, route.protocols, route.translations, route.cost)
            ranked.append((-score, order, Candidate(agent_id, score, sim, affinity, semantic)))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [item[2] for item in ranked]

    def resolve(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        target_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> Route:
        """The route to the best live candidate for ``need``; :class:`NoRoute` if none."""
        ranked = self.rank(
            source,
            need,
            source_protocol=source_protocol,
            target_protocol=target_protocol,
            down=down,
        )
        if ranked:
            return ranked[0].route
        if source in down.nodes:
            raise NoRoute(f"the source '{source}' is down")
        pool = self.graph.hosts(need) or [
            a.id for a in self.graph.agents if a.id != source and self.similarity(need, a.id) > 0
        ]
        if not pool:
            raise NoRoute(f"no agent's capabilities match '{need}'")
        if all(a in down.nodes for a in pool):
            raise NoRoute(f"all candidates for '{need}' are down ({', '.join(pool)})")
        around = f" around the down nodes and links ({down.describe()})" if down else ""
        raise NoRoute(
            f"no candidate for '{need}' ({', '.join(pool)}) is reachable from '{source}'{around}"
        )

    def serve(
        self,
        source: str,
        need: str,
        *,
        source_protocol: str | None = None,
        down: DownSet = NO_DOWN,
    ) -> Route:
        """The route to the best live candidate for ``need`` (:meth:`resolve`)."""
        return self.resolve(source, need, source_protocol=source_protocol, down=down)

    def suspects(self, path: Sequence[str]) -> tuple[list[str], list[frozenset[str]]]:
        """As every dynamic router, and the target too: the next timeout fails over to
        the next candidate."""
        nodes, links = super().suspects(path)
        nodes.append(path[-1])
        return nodes, links

    def _compute(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> Route:
        route = self._shortest(source, target, source_protocol, target_protocol, down)
        return Route(self.name, route.path, route.protocols, route.translations, route.cost)
