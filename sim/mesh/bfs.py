"""The minimum-hop router of SPEC §3: one protocol, no translation."""

from __future__ import annotations

import heapq

from sim.mesh.errors import NoRoute
from sim.mesh.route import DownSet, Route
from sim.mesh.routing import Router


class BfsRouter(Router):
    """Minimum-hop route on one protocol (no translation); ties by cost, then node ids.

    ``source_protocol`` is the one protocol; without it, every protocol that both ends
    speak is tried and the fewest hops (then lowest cost, then P's order) wins.
    Static: ignores failures.
    """

    name = "bfs"

    def _compute(
        self,
        source: str,
        target: str,
        source_protocol: str | None,
        target_protocol: str | None,
        down: DownSet,
    ) -> Route:
        if target_protocol is not None and source_protocol not in (None, target_protocol):
            raise NoRoute(f"bfs uses one protocol; {source_protocol} and {target_protocol} differ")
        wanted = source_protocol or target_protocol
        candidates = (
            [wanted]
            if wanted is not None
            else [
                p
                for p in self.graph.protocols
                if p in self.graph.agent(source).protocols
                and p in self.graph.agent(target).protocols
            ]
        )
        best: tuple[int, float, int, Route] | None = None
        for rank, protocol in enumerate(candidates):
            found = self._on_protocol(source, target, protocol, down)
            if found is not None:
                key = (found.hops, found.cost, rank)
                if best is None or key < best[:3]:
                    best = (*key, found)
        if best is None:
            if wanted is None and not candidates:
                raise NoRoute(f"'{source}' and '{target}' speak no protocol in common")
            if (
                wanted is None
                and len(candidates) > 1
                and self._connected(source, target, down, None)
            ):
                raise NoRoute(
                    f"no chain of links in one protocol ({', '.join(candidates)}) joins "
                    f"'{source}' to '{target}' (bfs does not translate; try --router dijkstra)"
                )
            raise NoRoute(
                self._explain(
                    source, target, wanted, wanted, down, protocol_only=wanted or candidates[0]
                )
            )
        return best[3]

    def _on_protocol(self, source: str, target: str, protocol: str, down: DownSet) -> Route | None:
        """Lexicographic Dijkstra on (hops, cost, path of node ids) over one protocol."""
        graph = self.graph
        if protocol not in graph.agent(source).protocols or source in down.nodes:
            return None
        heap: list[tuple[int, float, tuple[str, ...]]] = [(0, 0.0, (source,))]
        settled: set[str] = set()
        while heap:
            hops, cost, path = heapq.heappop(heap)
            node = path[-1]
            if node in settled:
                continue
            settled.add(node)
            if node == target:
                return Route(self.name, path, (protocol,) * hops, (), cost)
            for link in graph.incident(node):
                latency = link.latency.get(protocol)
                other = link.other(node)
                if (
                    latency is None
                    or other in settled
                    or other in down.nodes
                    or link.ends in down.links
                ):
                    continue
                heapq.heappush(heap, (hops + 1, cost + latency, (*path, other)))
        return None
