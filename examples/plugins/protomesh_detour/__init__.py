"""An example router plug-in for protomesh (docs/reference/routing.md#router-plug-ins): dijkstra that never enters the
agents named in ``avoid`` and adds ``surcharge`` seconds to every translation.

In a scenario::

    routers:
      - dijkstra
      - {name: detour, plugin: "protomesh_detour:Detour", options: {avoid: [gw1]}}
"""

from __future__ import annotations

from collections.abc import Iterable

from sim import DijkstraRouter, ProtocolGraph


class Detour(DijkstraRouter):
    """Exact minimum-cost routes that avoid some agents; dynamic like ``resilient``."""

    #: suspect and reroute after a timeout (False), not retry the same route (True)
    static = False

    def __init__(
        self, graph: ProtocolGraph, avoid: Iterable[str] = (), surcharge: float = 0.0
    ) -> None:
        super().__init__(graph)
        self.avoid = frozenset(avoid)
        self.surcharge = float(surcharge)

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None:
        """Hide every hop into an avoided agent; others cost their latency."""
        return None if v in self.avoid else latency

    def translation_cost(
        self, node: str, from_protocol: str, to_protocol: str, tau: float
    ) -> float | None:
        """τ plus the surcharge (seconds-equivalent)."""
        return tau + self.surcharge
