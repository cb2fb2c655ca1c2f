"""Seeded random meshes for the benchmarks.

``random_mesh(n, seed=...)`` builds a connected :class:`ProtocolGraph` of ``n`` agents
with average degree ``degree`` (``degree * n / 2`` links) over MCP, MCP+ and A2A:

* about ``gateways`` (10%) of the agents are gateways speaking all three protocols;
  every other agent speaks a uniformly random non-empty subset of them (so some of them
  speak all three too);
* a random spanning tree makes the mesh connected: agent ``i`` (in a random order)
  links to a random earlier agent, or, when the two share no protocol, to a random
  earlier gateway (the first agent is always a gateway);
* extra links join uniformly random pairs of distinct, not yet linked agents; a pair
  that shares no protocol is dropped and another pair is drawn, until the mesh has
  ``degree * n / 2`` links;
* each link carries a uniformly random non-empty subset of the protocols its two ends
  share, each with its own latency uniform in [1, 20] ms;
* the translation table is the default one over the built-in fields (every pair
  allowed, derived losses, the default 2 ms delay).

Every agent can translate between any two protocols it speaks, so every (agent,
protocol) state it speaks reaches every other one. Sampling is vectorised with numpy;
a 100,000-agent mesh takes a few seconds, most of it in ``ProtocolGraph``'s own
``add_agent`` / ``add_link``.
"""

from __future__ import annotations

import numpy as np

from sim.mesh import Agent, Link, Protocol, ProtocolGraph, TranslationTable
from sim.mesh.protocols import BUILTIN_FIELDS

#: The three protocols of the benchmark meshes, in P's order.
PROTOCOLS: tuple[str, ...] = ("MCP", "MCP+", "A2A")
_ALL = (1 << len(PROTOCOLS)) - 1


def default_table(protocols: tuple[str, ...] = PROTOCOLS) -> TranslationTable:
    """The default translation table over the built-in fields of ``protocols``."""
    return TranslationTable([Protocol(p, BUILTIN_FIELDS[p]) for p in protocols])


def _names(mask: int) -> list[str]:
    return [p for j, p in enumerate(PROTOCOLS) if mask >> j & 1]


def _random_submask(rng: np.random.Generator, common: np.ndarray) -> np.ndarray:
    """A uniformly random non-empty submask of each ``common`` (all non-zero)."""
    out = np.zeros(len(common), dtype=np.int64)
    todo = np.arange(len(common))
    while len(todo):
        draw = rng.integers(0, _ALL + 1, size=len(todo)) & common[todo]
        ok = draw != 0
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return out


def random_mesh(
    n: int,
    *,
    seed: int = 0,
    degree: float = 4.0,
    gateways: float = 0.1,
    latency_ms: tuple[float, float] = (1.0, 20.0),
) -> ProtocolGraph:
    """A connected random mesh of ``n`` agents; the same ``seed`` gives the same mesh."""
    if n < 2:
        raise ValueError("a mesh needs at least two agents")
    rng = np.random.default_rng(seed)
    k = len(PROTOCOLS)

    # protocols: bitmasks over PROTOCOLS; gateways speak all of them
    is_gateway = rng.random(n) < gateways
    order = rng.permutation(n)
    is_gateway[order[0]] = True  # the spanning tree's root
    masks = np.where(is_gateway, _ALL, rng.integers(1, _ALL + 1, size=n))

    # a random spanning tree, each edge between agents that share a protocol
    parent = np.empty(n - 1, dtype=np.int64)
    position = np.arange(1, n)
    parent[:] = order[(rng.random(n - 1) * position).astype(np.int64)]
    child = order[1:]
    clash = (masks[child] & masks[parent]) == 0
    if clash.any():
        # re-parent onto a random earlier gateway (the root is one, so one exists)
        gateway_rank = np.cumsum(is_gateway[order])  # gateways among order[0..i]
        gateway_at = order[is_gateway[order]]
        for i in np.flatnonzero(clash):
            earlier = gateway_rank[i]  # gateways among order[0..i] (child is order[i+1])
            parent[i] = gateway_at[rng.integers(0, earlier)]
    ends_a = list(np.minimum(child, parent))
    ends_b = list(np.maximum(child, parent))

    # extra links between random pairs that share a protocol
    want = round(degree * n / 2)
    seen = set(zip(ends_a, ends_b, strict=True))
    while len(seen) < want:
        batch = max(1024, 2 * (want - len(seen)))
        u = rng.integers(0, n, size=batch)
        v = rng.integers(0, n, size=batch)
        keep = (u != v) & ((masks[u] & masks[v]) != 0)
        for a, b in zip(
            np.minimum(u, v)[keep].tolist(), np.maximum(u, v)[keep].tolist(), strict=True
        ):
            if (a, b) not in seen:
                seen.add((a, b))
                ends_a.append(a)
                ends_b.append(b)
                if len(seen) == want:
                    break
    a_arr = np.asarray(ends_a, dtype=np.int64)
    b_arr = np.asarray(ends_b, dtype=np.int64)
    carried = _random_submask(rng, masks[a_arr] & masks[b_arr])
    low, high = latency_ms
    latency = rng.uniform(low, high, size=(len(a_arr), k)) / 1000.0  # seconds
    affinity = rng.uniform(0.5, 1.0, size=(n, k))

    ids = [f"a{i:06d}" for i in range(n)]
    agents = [
        Agent(
            id=ids[i],
            type="GATEWAY" if is_gateway[i] else "LLM_AGENT",
            protocols={
                p: round(float(affinity[i, j]), 3) for j, p in enumerate(PROTOCOLS) if m >> j & 1
            },
        )
        for i, m in enumerate(masks.tolist())
    ]
    latency_rows = latency.tolist()
    links = [
        Link(ids[a], ids[b], {p: latency_rows[e][j] for j, p in enumerate(PROTOCOLS) if m >> j & 1})
        for e, (a, b, m) in enumerate(
            zip(a_arr.tolist(), b_arr.tolist(), carried.tolist(), strict=True)
        )
    ]
    return ProtocolGraph(agents, links, default_table())
