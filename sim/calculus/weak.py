"""Weak bisimulation without the τ-closure (paper §4.4 ``≈``; issue 36).

The systems are read side by side (no union LTS is built), their τ-strongly-connected
components contracted (Tarjan: the states of a τ-cycle reach each other by τ*, so they
are weakly bisimilar), and every component whose only move is one τ merged into its
target (``τ.P ≈ P``). What is left is a τ-DAG of *nodes*, numbered so that a node's
τ-successors come before it.

:meth:`WeakSystem.refine` is signature refinement on the saturated system (``s ⇒a⇒ t``
iff ``s τ* a τ* t``; ``s ⇒τ⇒ t`` iff ``s τ* t``, reflexive) without saturating: in each
round, against the blocks of the last one, a node's signature is ``R(x)``, the blocks
it reaches by τ*, and ``A(x)``, per visible label ``a``, the blocks of ``τ* a τ*``,
both bit sets computed in one pass each over the DAG in its order:
``R(x) = {block(x)} ∪ ⋃ R(y)`` over the τ-successors ``y``, ``A_a(x) = ⋃ R(z)`` over
``x -a-> z`` ``∪ ⋃ A_a(y)``. Rounds are synchronous and a block that splits keeps its id
for its largest part, so the history has the meaning :func:`~sim.calculus.refinement.
refine_history` gives it (after round ``k`` the partition is the ``k``-step weak
bisimilarity) and :mod:`sim.calculus.witness` reads formulas from it.

Where the saturation of the nodes is small, :meth:`WeakSystem.saturation` builds it
within a budget (``sim.calculus.bisim`` then refines it incrementally, the faster way);
past the budget it is abandoned and the rounds run.

Cost: a round is linear in the transitions, each step an operation on bit sets as wide
as the number of blocks (in C); the rounds are as many as the refinement's depth. On
τ-chains, τ-rings, chains of τ-2-cycles and random systems with 80 % τ of 256k states
it stays under 10 s (BENCHMARKS.md); the worst case is the number of weak classes times
the transitions per round, where the saturation was the square of the states.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from sim.calculus.lts import LTS, TAU
from sim.calculus.refinement import Adjacency, Quotient, components

__all__ = ["SaturatedMoves", "WeakSystem", "acyclic"]


@contextmanager
def acyclic() -> Iterator[None]:
    """The cyclic garbage collector paused (restored after) while weak bisimilarity is
    computed (paper §4.4): building the τ-DAG and refining allocate millions of lists,
    sets and ints and no reference cycle, so its passes over them are pure cost (at 256k
    states they made the time grow as n^1.4)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class WeakSystem:
    """LTSs side by side (paper §4.4; state ``s`` of system ``i`` is ``offset[i] + s``),
    contracted to the τ-DAG of the module. ``node[s]`` is the node of state ``s``, ``members[x]``
    the states of node ``x`` (ascending), ``tau[x]`` its τ-successors and ``visible[x]``
    its visible moves ``(label id, node)``, both sorted; labels numbered by
    ``label_ids`` (extended; τ included)."""

    def __init__(self, systems: Sequence[LTS], label_ids: dict[str, int]) -> None:
        self.tau_id = label_ids.setdefault(TAU, len(label_ids))
        offsets: list[int] = []
        n = 0
        for lts in systems:
            offsets.append(n)
            n += lts.n_states
        self.offsets = tuple(offsets)
        tau_out: list[list[int]] = [[] for _ in range(n)]
        moves: list[tuple[int, int, int]] = []
        for off, lts in zip(offsets, systems, strict=True):
            for t in lts.transitions:
                if t.label == TAU:
                    tau_out[t.src + off].append(t.dst + off)
                else:
                    lid = label_ids.setdefault(t.label, len(label_ids))
                    moves.append((t.src + off, lid, t.dst + off))
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
        for s, lid, d in moves:
            vis[node_of[comp[s]]].add((lid, node_of[comp[d]]))
        self.tau: list[tuple[int, ...]] = [tuple(sorted(x)) for x in succ]
        self.visible: list[tuple[tuple[int, int], ...]] = [tuple(sorted(x)) for x in vis]
        self.node: tuple[int, ...] = tuple(node_of[c] for c in comp)
        members: list[list[int]] = [[] for _ in range(m)]
        for s, x in enumerate(self.node):
            members[x].append(s)
        self.members: tuple[tuple[int, ...], ...] = tuple(tuple(ms) for ms in members)
        self._tau_pred: list[list[int]] | None = None
        self._by_label: list[dict[int, list[int]]] | None = None
        #: the saturated moves of every node, when built (:meth:`saturation`)
        self.saturated: Adjacency | None = None

    def refine(self) -> tuple[list[int], list[int], list[int]]:
        """The largest weak bisimulation on the nodes, with its history: the final block
        of each node and, per block, the block it split off from (``-1`` for the first)
        and the round it was born in (as :func:`~sim.calculus.refinement.refine_history`
        on the saturated system)."""
        k = len(self.tau)
        tau, visible = self.tau, self.visible
        block = [0] * k
        parent = [-1]
        born = [0]
        rounds = 0
        while True:
            rounds += 1
            width = len(parent)
            reach = [0] * k
            for x in range(k):
                r = 1 << block[x]
                for y in tau[x]:
                    r |= reach[y]
                reach[x] = r
            after = [0] * k
            for x in range(k):
                acc = 0
                for y in tau[x]:
                    acc |= after[y]
                for a, z in visible[x]:
                    acc |= reach[z] << (a * width)
                after[x] = acc
            groups: dict[tuple[int, int, int], list[int]] = {}
            for x in range(k):
                groups.setdefault((block[x], reach[x], after[x]), []).append(x)
            if len(groups) == width:
                return block, parent, born
            parts: dict[int, list[list[int]]] = {}
            for (b, _, _), xs in groups.items():
                parts.setdefault(b, []).append(xs)
            for b, split in parts.items():
                if len(split) == 1:
                    continue
                keep = max(split, key=len)  # the first largest: groups are in node order
                for xs in split:
                    if xs is keep:
                        continue
                    nb = len(parent)
                    parent.append(b)
                    born.append(rounds)
                    for x in xs:
                        block[x] = nb

    def saturation(self, budget: int) -> Adjacency | None:
        """The saturated moves of every node (``(τ, y)`` for ``y`` in τ*(x), reflexive;
        ``(a, z)`` for ``z`` in τ* a τ*(x)) if building them takes at most ``budget``
        steps, else None (abandoned at the budget: the closure is never built past it)."""
        k = len(self.tau)
        spent = 0
        closure: list[frozenset[int]] = []
        for x in range(k):  # successors first
            acc = {x}
            for y in self.tau[x]:
                acc |= closure[y]
                spent += len(closure[y])
            if spent > budget:
                return None
            closure.append(frozenset(acc))
        after: list[set[tuple[int, int]]] = []
        for x in range(k):
            moves: set[tuple[int, int]] = set()
            for a, z in self.visible[x]:
                moves.update((a, w) for w in closure[z])
                spent += len(closure[z])
            if spent > budget:
                return None
            after.append(moves)
        adj: Adjacency = []
        for x in range(k):
            sat = {(self.tau_id, w) for w in closure[x]}
            for u in closure[x]:
                sat |= after[u]
                spent += len(after[u]) + 1
            if spent > budget:
                return None
            adj.append(list(sat))
        return adj

    def quotient(self) -> Quotient:
        """The nodes as a :class:`~sim.calculus.refinement.Quotient` with their saturated
        moves: :attr:`saturated` when it was built, else computed when asked (one node at
        a time, for the witnesses)."""
        moves = self.saturated if self.saturated is not None else SaturatedMoves(self)
        return Quotient(self.node, self.members, moves)

    # -- the saturated moves of sets of nodes, computed on demand (the witnesses) --

    def closure(self, nodes: Iterable[int]) -> frozenset[int]:
        """τ*(nodes): every node the given ones reach by τ steps (themselves included)."""
        seen = set(nodes)
        todo = list(seen)
        while todo:
            for y in self.tau[todo.pop()]:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return frozenset(seen)

    def labels(self, nodes: Iterable[int]) -> set[int]:
        """The visible labels some node of the τ-closed set ``nodes`` moves by."""
        table = self._table()
        return {a for x in nodes for a in table[x]}

    def after(self, nodes: Iterable[int], a: int) -> frozenset[int]:
        """τ* a τ* of the τ-closed set ``nodes`` (``a`` visible)."""
        table = self._table()
        return self.closure(z for x in nodes for z in table[x].get(a, ()))

    def _table(self) -> list[dict[int, list[int]]]:
        if self._by_label is None:
            self._by_label = []
            for moves in self.visible:
                by: dict[int, list[int]] = {}
                for a, z in moves:
                    by.setdefault(a, []).append(z)
                self._by_label.append(by)
        return self._by_label

    def able(self, nodes: frozenset[int], a: int) -> frozenset[int]:
        """The nodes of ``nodes`` that can do ``τ* a`` (backward from the ``a`` moves)."""
        if self._tau_pred is None:
            self._tau_pred = [[] for _ in self.tau]
            for x, ys in enumerate(self.tau):
                for y in ys:
                    self._tau_pred[y].append(x)
        preds = self._tau_pred
        table = self._table()
        seen = {x for x in range(len(self.tau)) if a in table[x]}
        todo = list(seen)
        while todo:
            for p in preds[todo.pop()]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return nodes & seen


class SaturatedMoves:
    """The saturated moves (paper §4.4 weak transitions) of each node of a
    :class:`WeakSystem`, computed when first asked: ``(τ, y)`` for every ``y`` of τ*(x),
    ``(a, z)`` for every ``z`` of τ* a τ*(x)."""

    def __init__(self, system: WeakSystem) -> None:
        self.system = system
        self._cache: dict[int, list[tuple[int, int]]] = {}

    def __len__(self) -> int:
        return len(self.system.tau)

    def __getitem__(self, x: int) -> list[tuple[int, int]]:
        hit = self._cache.get(x)
        if hit is None:
            sys_ = self.system
            reach = sys_.closure((x,))
            hit = [(sys_.tau_id, y) for y in sorted(reach)]
            for a in sorted(sys_.labels(reach)):
                hit.extend((a, z) for z in sorted(sys_.after(reach, a)))
            self._cache[x] = hit
        return hit
