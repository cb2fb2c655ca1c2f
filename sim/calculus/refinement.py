"""Partition refinement and τ-contraction, the machinery of :mod:`sim.calculus.bisim`
(paper §4.4).

* :func:`refine_history`: the coarsest stable partition of an adjacency by incremental
  signature refinement, with the history the distinguishing formulas are read from;
* :func:`components`, :func:`tau_components`: strongly connected components (Tarjan,
  iterative: no recursion limit), in reverse topological order;
* :func:`saturate`: the saturated LTS (τ* a τ*), quadratic by nature: the reference weak
  bisimilarity is checked against (BisPy on it), never what :mod:`sim.calculus.bisim`
  computes on (:mod:`sim.calculus.weak` refines without it);
* :class:`Quotient`: an LTS seen through nodes (its states, or the τ-contracted nodes of
  :class:`~sim.calculus.weak.WeakSystem`) with their moves, what the witnesses read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sim.calculus.lts import LTS, TAU

__all__ = [
    "Adjacency",
    "Quotient",
    "adjacency",
    "canonical",
    "components",
    "refine_history",
    "saturate",
    "tau_closures",
    "tau_components",
]

Adjacency = list[list[tuple[int, int]]]
"""Per state (or quotient node), its moves ``(label id, successor)``."""


class Moves(Protocol):
    """Per node, its moves ``(label id, successor)`` (paper §4.4): an :data:`Adjacency`, or
    one that computes a node's when asked (:class:`~sim.calculus.weak.SaturatedMoves`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, node: int, /) -> list[tuple[int, int]]: ...


def adjacency(lts: LTS, label_ids: dict[str, int]) -> Adjacency:
    """The moves of every state of ``lts`` (paper §3.3 ``→``), labels numbered by
    ``label_ids`` (extended with new labels)."""
    adj: Adjacency = [[] for _ in range(lts.n_states)]
    for t in lts.transitions:
        lid = label_ids.setdefault(t.label, len(label_ids))
        adj[t.src].append((lid, t.dst))
    return adj


def refine_history(adj: Adjacency) -> tuple[list[int], list[int], list[int]]:
    """The coarsest stable partition of ``adj`` (paper §4.4 bisimulation) by incremental
    signature refinement, with its history: the final block of each state and,
    per block, the block it split off from (``-1`` for the first) and the round it was born in.

    Rounds are synchronous (signatures are computed against the previous round's blocks), so
    after round ``k`` the partition is ``~k``, the ``k``-step bisimilarity; a block that keeps
    its id keeps its part, so the block of ``s`` after round ``k`` is the nearest ancestor of
    its final block born in round ``k`` or earlier.
    """
    n = len(adj)
    parent = [-1]
    born = [0]
    if n == 0:
        return [], parent, born
    width = n + 1
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, succ in enumerate(adj):
        for _, d in succ:
            preds[d].append(s)
    preds = [list(set(p)) for p in preds]
    block = [0] * n
    size = [n]
    block_sig: list[frozenset[int] | None] = [None]
    dirty: set[int] = set(range(n))
    rounds = 0
    while dirty:
        rounds += 1
        by_block: dict[int, dict[frozenset[int], list[int]]] = {}
        for s in dirty:
            sig = frozenset([a * width + block[d] for a, d in adj[s]])
            by_block.setdefault(block[s], {}).setdefault(sig, []).append(s)
        moved: list[int] = []
        for b, groups in by_block.items():
            n_dirty = sum(len(g) for g in groups.values())
            old = block_sig[b]
            if n_dirty < size[b] or (old is not None and old in groups):
                keep = old
            else:
                keep = max(groups, key=lambda g: len(groups[g]))
            block_sig[b] = keep
            for sig, states in groups.items():
                if sig == keep:
                    continue
                nb = len(size)
                size.append(len(states))
                parent.append(b)
                born.append(rounds)
                block_sig.append(sig)
                size[b] -= len(states)
                for s in states:
                    block[s] = nb
                moved.extend(states)
        dirty = {p for s in moved for p in preds[s]}
    return block, parent, born


def canonical(block: Sequence[int]) -> list[int]:
    """Blocks renumbered in order of first occurrence (so equal partitions are equal lists;
    paper §4.4)."""
    number: dict[int, int] = {}
    return [number.setdefault(b, len(number)) for b in block]


def tau_components(lts: LTS) -> tuple[list[int], list[list[int]]]:
    """The strongly connected components of the τ-graph of ``lts`` (paper §3.3 τ): the
    component of each state and the members of each component, in reverse topological order
    (a component's τ-successors come before it)."""
    tau_succ: list[list[int]] = [[] for _ in range(lts.n_states)]
    for t in lts.transitions:
        if t.label == TAU:
            tau_succ[t.src].append(t.dst)
    return components(tau_succ)


def components(succ: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """The strongly connected components of the graph ``succ`` (per vertex, its
    successors; paper §4.4 τ-contraction): the component of each vertex and the members
    of each, in reverse topological order. Tarjan's algorithm with an explicit stack (no
    recursion limit)."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comp = [-1] * n
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            recurse = False
            out = succ[v]
            while i < len(out):
                w = out[i]
                i += 1
                if index[w] == -1:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                members: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = len(comps)
                    members.append(w)
                    if w == v:
                        break
                comps.append(members)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return comp, comps


def tau_closures(lts: LTS) -> list[frozenset[int]]:
    """τ*(s) for every state ``s`` (paper §4.4 weak transitions, reflexive), from the
    τ-components in reverse topological order."""
    comp, comps = tau_components(lts)
    tau_succ: list[set[int]] = [set() for _ in comps]
    for t in lts.transitions:
        if t.label == TAU and comp[t.src] != comp[t.dst]:
            tau_succ[comp[t.src]].add(comp[t.dst])
    closure: list[frozenset[int]] = []
    for c, members in enumerate(comps):
        acc: set[int] = set(members)
        for d in tau_succ[c]:
            acc |= closure[d]
        closure.append(frozenset(acc))
    return [closure[comp[s]] for s in range(lts.n_states)]


def saturate(lts: LTS) -> LTS:
    """The saturated LTS (paper §4.4 weak transitions): ``s --a--> t`` iff ``s ⇒a⇒ t``
    (τ* a τ*) for visible ``a``, and ``s --τ--> t`` iff ``s τ* t`` (reflexive). Quadratic in
    the τ-closures by nature; :func:`sim.calculus.bisim.bisimilar` never builds it."""
    closure = tau_closures(lts)
    after: list[set[tuple[str, int]]] = [set() for _ in range(lts.n_states)]
    for t in lts.transitions:
        if t.label != TAU:
            after[t.src].update((t.label, w) for w in closure[t.dst])
    trans: list[tuple[int, str, int]] = []
    for s in range(lts.n_states):
        moves: set[tuple[str, int]] = {(TAU, w) for w in closure[s]}
        for u in closure[s]:
            moves |= after[u]
        trans.extend((s, a, d) for a, d in sorted(moves))
    return LTS(lts.n_states, lts.initial, trans, lts.names)


@dataclass(frozen=True, slots=True)
class Quotient:
    """An LTS seen through nodes (paper §4.4): ``node[s]`` is the node of state ``s``,
    ``members[c]`` the states of node ``c`` (ascending), ``adj`` the moves between nodes:
    the saturated ones (τ* a τ*, and reflexive τ*) of the τ-contracted nodes of a
    :class:`~sim.calculus.weak.WeakSystem`, or the plain ones of every state its own node
    (strong)."""

    node: tuple[int, ...]
    members: tuple[tuple[int, ...], ...]
    adj: Moves

    def states(self, nodes: Sequence[int] | frozenset[int]) -> frozenset[int]:
        """The states of ``nodes``."""
        return frozenset(s for c in nodes for s in self.members[c])
