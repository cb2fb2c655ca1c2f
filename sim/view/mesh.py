"""The mesh the page draws: agents with their type, links with their protocols, laid out
by networkx in Python (coordinates in [0, 1], rounded, seeded: deterministic). The layout
is made at the first reading of :attr:`Mesh.nodes` (the page's): a run's page data
(:mod:`sim.view.fragment`) map events onto nodes and links without it, and so never
import networkx.

Above :data:`AGGREGATE_ABOVE` agents the page shows one node per agent type (its member
count) and one link per pair of types, so a 10,000-agent run stays readable; replay
events are mapped onto those groups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.scenario import Scenario

#: Agents above which the page aggregates by agent type.
AGGREGATE_ABOVE = 300
#: Column order of the layered layout, by agent type.
TYPE_ORDER = ("LLM_AGENT", "COORDINATOR", "GATEWAY", "TOOL_SERVER", "agent")


class Mesh:
    """Drawn nodes and links, and the map from an agent id to its drawn node."""

    def __init__(
        self,
        agents: list[tuple[str, str, list[str]]],
        links: list[tuple[str, str, list[str]]],
    ) -> None:
        self.aggregated = len(agents) > AGGREGATE_ABOVE
        self._nodes: list[dict[str, Any]]
        self._laid_out = False
        self.links: list[dict[str, Any]]
        self.agent_count = len(agents)
        self.link_count = len(links)
        kinds = {a: k for a, k, _ in agents}
        protos = sorted(
            {p for _, _, ps in links for p in ps} | {p for _, _, ps in agents for p in ps}
        )
        self.protocols = protos
        self._proto = {p: i for i, p in enumerate(protos)}
        if self.aggregated:
            counts = Counter(kinds.values())
            types = sorted(counts)
            self._nodes = [{"id": t, "type": t, "members": counts[t]} for t in types]
            rank = {t: i for i, t in enumerate(types)}
            node = self._node = {a: rank[k] for a, k in kinds.items()}
            pairs: dict[tuple[int, int], tuple[list[int], set[str]]] = {}
            for a, b, ps in links:
                ia, ib = node[a], node[b]
                key = (ia, ib) if ia <= ib else (ib, ia)
                pair = pairs.get(key)
                if pair is None:
                    pair = pairs[key] = ([0], set())
                pair[0][0] += 1
                pair[1].update(ps)
            self.links = [
                {"a": ia, "b": ib, "protocols": sorted(s), "members": n[0]}
                for (ia, ib), (n, s) in sorted(pairs.items())
            ]
        else:
            ids = [a for a, _, _ in agents]
            self._node = {a: i for i, a in enumerate(ids)}
            self._nodes = [
                {"id": a, "type": k, "members": 1, "protocols": sorted(ps)} for a, k, ps in agents
            ]
            self.links = [
                {"a": self._node[a], "b": self._node[b], "protocols": sorted(ps), "members": 1}
                for a, b, ps in links
            ]
        self._link: dict[tuple[int, int], int] = {}
        for i, link in enumerate(self.links):
            self._link.setdefault((link["a"], link["b"]), i)
            self._link.setdefault((link["b"], link["a"]), i)

    @property
    def nodes(self) -> list[dict[str, Any]]:
        """The drawn nodes, laid out (``x``, ``y``: :meth:`lay_out`)."""
        self.lay_out()
        return self._nodes

    def lay_out(self) -> None:
        """Set the nodes' ``x``, ``y`` (once)."""
        if not self._laid_out:
            _lay_out(self._nodes, self.links)
            self._laid_out = True

    @property
    def node_count(self) -> int:
        """The number of drawn nodes (none laid out: what the replay's keys are packed by)."""
        return len(self._nodes)

    @property
    def laid_out(self) -> bool:
        """Whether the nodes are laid out yet (:attr:`nodes` read)."""
        return self._laid_out

    def node_of(self, agent: object) -> int | None:
        return self._node.get(str(agent)) if agent is not None else None

    def link_of(self, a: object, b: object) -> int | None:
        ia, ib = self.node_of(a), self.node_of(b)
        if ia is None or ib is None:
            return None
        return self._link.get((ia, ib))

    def proto_index(self, proto: object) -> int:
        return self._proto.get(str(proto), -1)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "links": self.links,
            "protocols": self.protocols,
            "aggregated": self.aggregated,
            "agents": self.agent_count,
            "link_count": self.link_count,
            "agent_node": dict(sorted(self._node.items())) if not self.aggregated else {},
        }


def _lay_out(nodes: list[dict[str, Any]], links: list[dict[str, Any]]) -> None:
    """Set ``x``, ``y`` in [0, 1] on each node: layered by type for small meshes (callers
    left, gateways between, tool servers right), a circle for the aggregated view, a
    seeded spring layout otherwise."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(len(nodes)))
    g.add_edges_from((link["a"], link["b"]) for link in links)
    if len(nodes) <= 40 and not any(n["members"] > 1 for n in nodes):
        rank = {t: i for i, t in enumerate(TYPE_ORDER)}
        for i, n in enumerate(nodes):
            g.nodes[i]["layer"] = rank.get(n["type"], len(TYPE_ORDER))
        pos = nx.multipartite_layout(g, subset_key="layer") if nodes else {}
    elif len(nodes) <= 40:  # aggregated: one node per type, on a circle
        pos = nx.circular_layout(g)
    else:
        pos = nx.spring_layout(g, seed=0)
    xs = [float(pos[i][0]) for i in range(len(nodes))] or [0.0]
    ys = [float(pos[i][1]) for i in range(len(nodes))] or [0.0]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0
    for i, n in enumerate(nodes):
        n["x"] = round((xs[i] - min(xs)) / span_x, 4) if len(set(xs)) > 1 else 0.5
        n["y"] = round((ys[i] - min(ys)) / span_y, 4) if len(set(ys)) > 1 else 0.5


def mesh_from_scenario(scenario: Scenario) -> Mesh:
    """The scenario's agents (id, type, protocols) and links (ends, Φ(e))."""
    agents = [
        (a.id, str(getattr(a.type, "value", a.type)), sorted(a.protocols)) for a in scenario.agents
    ]
    links = [(lk.between[0], lk.between[1], sorted(lk.latency)) for lk in scenario.links]
    return Mesh(agents, links)


def mesh_from_trace(traces: Iterable[Path]) -> Mesh:
    """Without a scenario: the agents and links the traces' ``hop`` events name (type
    unknown: ``agent``)."""
    from sim.conformance.events import trace_events

    agents: dict[str, set[str]] = {}
    links: dict[tuple[str, str], set[str]] = {}
    for trace in traces:
        for e in trace_events(trace):
            if e.agent is not None:
                agents.setdefault(str(e.agent), set())
            if e.label != "hop":
                continue
            d = e.detail
            a, b, p = str(d.from_), str(d.to), str(d.proto or e.proto)
            agents.setdefault(a, set()).add(p)
            agents.setdefault(b, set()).add(p)
            key = (min(a, b), max(a, b))
            links.setdefault(key, set()).add(p)
    return Mesh(
        [(a, "agent", sorted(ps)) for a, ps in sorted(agents.items())],
        [(a, b, sorted(ps)) for (a, b), ps in sorted(links.items())],
    )
