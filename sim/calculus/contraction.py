"""The τ-DAG of LTSs (paper §4.4 ``≈``; issue 36): what :class:`~sim.calculus.weak.
WeakSystem` refines on. The τ-strongly-connected components are contracted (the states
of a τ-cycle reach each other by τ*, so they are weakly bisimilar), and every component
whose only move is one τ merged into its target (``τ.P ≈ P``); the nodes left are
numbered so that a node's τ-successors come before it.

Small systems are contracted in Python (Tarjan's components,
:func:`~sim.calculus.refinement.components`), larger ones with NumPy and SciPy's
components: the same nodes (tested), possibly numbered in another topological order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from sim.calculus.refinement import components

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints: TypeAlias = npt.NDArray[np.int64]

__all__ = ["ARRAYS_FROM", "Nodes", "contract", "topological"]

Nodes = tuple[
    list[tuple[int, ...]],
    list[tuple[tuple[int, int], ...]],
    tuple[int, ...],
    tuple[tuple[int, ...], ...],
]
"""Per node its τ-successors and visible moves ``(label, node)``, both sorted; per state
its node; per node its states, ascending (what :class:`~sim.calculus.weak.WeakSystem`
keeps)."""


#: Systems of at most this many states and transitions are contracted in Python
#: (:func:`contract`), larger ones with NumPy and SciPy: about where the two cost the
#: same (0.3 ms at 600, measured; the arrays' fixed cost per call is SciPy's).
ARRAYS_FROM = 1_000


def contract(
    n: int, src: list[int], lab: list[int], dst: list[int], tau: int, labels: int
) -> Nodes:
    """The τ-DAG (paper §4.4 τ-contraction) of the ``n`` states with transitions
    ``src[i] -lab[i]-> dst[i]`` (label ids below ``labels``, ``tau`` the silent one):
    the τ-strongly-connected components, numbered so that a component's τ-successors
    come first; each component whose only move is one τ merged into its target
    (``τ.P ≈ P``); the rest numbered in that order. The same nodes either way (tested);
    their numbers may differ (another topological order)."""
    if n + len(src) <= ARRAYS_FROM:
        return _contract_lists(n, src, lab, dst, tau)
    return _contract_arrays(n, src, lab, dst, tau, labels)


def _contract_lists(n: int, src: list[int], lab: list[int], dst: list[int], tau: int) -> Nodes:
    """:func:`contract` in Python (Tarjan's components)."""
    tau_out: list[list[int]] = [[] for _ in range(n)]
    moves: list[tuple[int, int, int]] = []
    for s, a, d in zip(src, lab, dst, strict=True):
        if a == tau:
            tau_out[s].append(d)
        else:
            moves.append((s, a, d))
    comp, comps = components(tau_out)
    k = len(comps)
    tau_succ: list[set[int]] = [set() for _ in range(k)]
    for s, out in enumerate(tau_out):
        c = comp[s]
        for d in out:
            if comp[d] != c:
                tau_succ[c].add(comp[d])
    seen_moves = [False] * k
    for s, _, _ in moves:
        seen_moves[comp[s]] = True
    # reverse topological: a component's successors have smaller numbers, so their
    # representative is final when the component is reached
    rep = list(range(k))
    for c in range(k):
        if not seen_moves[c] and len(tau_succ[c]) == 1:
            rep[c] = rep[next(iter(tau_succ[c]))]
    number: dict[int, int] = {}
    for c in range(k):
        if rep[c] == c:
            number[c] = len(number)
    m = len(number)
    node_of = [number[rep[c]] for c in range(k)]
    succ: list[set[int]] = [set() for _ in range(m)]
    vis: list[set[tuple[int, int]]] = [set() for _ in range(m)]
    for c, x in number.items():
        succ[x] = {node_of[d] for d in tau_succ[c]}
    for s, a, d in moves:
        vis[node_of[comp[s]]].add((a, node_of[comp[d]]))
    node = tuple(node_of[c] for c in comp)
    members: list[list[int]] = [[] for _ in range(m)]
    for s, x in enumerate(node):
        members[x].append(s)
    return (
        [tuple(sorted(x)) for x in succ],
        [tuple(sorted(x)) for x in vis],
        node,
        tuple(tuple(ms) for ms in members),
    )


def _contract_arrays(
    n: int, src: list[int], lab: list[int], dst: list[int], tau: int, labels: int
) -> Nodes:
    """:func:`contract` with NumPy, SciPy's components (Pearce's: numbered as they are
    completed, so a component's τ-successors first; checked, else renumbered by
    :func:`topological`). Linear in states and transitions but for the sorts, in C."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    s, a, d = (np.array(v, dtype=np.int64) for v in (src, lab, dst))
    silent = a == tau
    ts, td = s[silent], d[silent]
    graph = csr_matrix((np.ones(len(ts), dtype=np.int8), (ts, td)), shape=(n, n))
    count, labelling = connected_components(graph, directed=True, connection="strong")
    k = int(count)
    comp: Ints = labelling.astype(np.int64)
    code = _distinct(comp[ts] * k + comp[td])
    cs, cd = code // k, code % k
    across = cs != cd
    cs, cd = cs[across], cd[across]
    if np.any(cd > cs):
        comp = topological(comp, cs, cd, k)
        code = _distinct(comp[ts] * k + comp[td])
        cs, cd = code // k, code % k
        across = cs != cd
        cs, cd = cs[across], cd[across]
    vs, va, vd = comp[s[~silent]], a[~silent], comp[d[~silent]]
    moving = np.zeros(k, dtype=bool)
    moving[vs] = True
    merged = ~moving & (np.bincount(cs, minlength=k) == 1)
    rep = np.arange(k)
    one = merged[cs]
    rep[cs[one]] = cd[one]
    while True:  # pointer jumping: targets come first, so the chains end
        nxt = rep[rep]
        if np.array_equal(nxt, rep):
            break
        rep = nxt
    kept = rep == np.arange(k)
    node_of = (np.cumsum(kept) - 1)[rep]
    m = int(np.count_nonzero(kept))
    own = kept[cs]
    tcode = _distinct(node_of[cs[own]] * m + node_of[cd[own]])
    vcode = _distinct((node_of[vs] * labels + va) * m + node_of[vd])
    starts = np.arange(m + 1)
    tp = np.searchsorted(tcode // m, starts).tolist()
    ys = (tcode % m).tolist()
    vp = np.searchsorted(vcode // (labels * m), starts).tolist()
    moves = list(zip(((vcode // m) % labels).tolist(), (vcode % m).tolist(), strict=True))
    node = node_of[comp]
    order = np.argsort(node, kind="stable")
    mp = np.searchsorted(node[order], starts).tolist()
    states = order.tolist()
    return (
        [tuple(ys[tp[x] : tp[x + 1]]) for x in range(m)],
        [tuple(moves[vp[x] : vp[x + 1]]) for x in range(m)],
        tuple(node.tolist()),
        tuple(tuple(states[mp[x] : mp[x + 1]]) for x in range(m)),
    )


def _distinct(values: Ints) -> Ints:
    """The distinct values, ascending (a sort: NumPy's ``unique`` hashes, slower here)."""
    import numpy as np

    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def topological(comp: Ints, src: Ints, dst: Ints, k: int) -> Ints:
    """The components ``comp`` of the states (paper §4.4 τ-contraction) renumbered so
    that every edge ``src[i] -> dst[i]`` between components (of the acyclic graph they
    form) goes to a smaller number: sinks first, then each component when its
    successors are numbered (Kahn), the smallest old number first."""
    import heapq

    import numpy as np

    waiting = np.bincount(src, minlength=k).tolist()
    preds: list[list[int]] = [[] for _ in range(k)]
    for a, b in zip(src.tolist(), dst.tolist(), strict=True):
        preds[b].append(a)
    ready = [c for c in range(k) if waiting[c] == 0]
    new = [0] * k
    done = 0
    while ready:
        c = heapq.heappop(ready)
        new[c] = done
        done += 1
        for p in preds[c]:
            waiting[p] -= 1
            if waiting[p] == 0:
                heapq.heappush(ready, p)
    if done != k:
        raise ValueError("the components' graph has a cycle")
    renumbered: Ints = np.array(new, dtype=np.int64)[comp]
    return renumbered
