"""Weak bisimulation without the τ-closure (paper §4.4 ``≈``; issue 36).

The systems are read side by side (no union LTS is built) and contracted to their τ-DAG
(:mod:`sim.calculus.contraction`: τ-cycles to one node, ``τ.P`` merged into ``P``; a
node's τ-successors are numbered before it).

:meth:`WeakSystem.refine` is signature refinement on the saturated system (``s ⇒a⇒ t``
iff ``s τ* a τ* t``; ``s ⇒τ⇒ t`` iff ``s τ* t``, reflexive) without saturating: in each
round, against the blocks of the last one, a node's signature is ``R(x)``, the blocks
it reaches by τ*, and ``A(x)``, per visible label ``a``, the blocks of ``τ* a τ*``,
both computed in one pass each over the DAG in its order:
``R(x) = {block(x)} ∪ ⋃ R(y)`` over the τ-successors ``y``, ``A_a(x) = ⋃ R(z)`` over
``x -a-> z`` ``∪ ⋃ A_a(y)``. Narrow rounds keep them as bit sets; wide ones (past
:data:`DIRECT_BITS`) intern them: each node gets the number of its set among the
distinct ones, and a set is computed once per distinct combination of its inputs, of
which there are a few per block, not one per node. Rounds are synchronous and a block
that splits keeps its id for its largest part, so the history has the meaning
:func:`~sim.calculus.refinement.refine_history` gives it (after round ``k`` the
partition is the ``k``-step weak bisimilarity) and :mod:`sim.calculus.witness` reads
formulas from it.

Where the saturation of the nodes is small, :meth:`WeakSystem.saturation` builds it
within a budget (``sim.calculus.bisim`` then refines it incrementally, the faster way);
past the budget it is abandoned and the rounds run.

Cost: a round is one dictionary look-up per node and transition, plus one bit-set
operation (as wide as the blocks times the labels, in C) per distinct input; the rounds
are as many as the refinement's depth. On τ-chains, τ-rings, chains of τ-2-cycles and
random systems with 80 % τ of 256k states it stays under 3 s, growing as states^1.1 to
^1.25 (BENCHMARKS.md); where every node's inputs are distinct, the worst case is
still the blocks times the transitions per round (not the square of the states the
saturation was).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from sim.calculus.contraction import contract
from sim.calculus.lts import LTS, TAU
from sim.calculus.refinement import Adjacency, Quotient

__all__ = ["DIRECT_BITS", "SaturatedMoves", "WeakSystem", "acyclic"]


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


#: Rounds whose bit sets (blocks times labels) are at most this many bits wide compute
#: them directly; wider ones intern them (:meth:`WeakSystem._interned`).
DIRECT_BITS = 240


class WeakSystem:
    """LTSs side by side (paper §4.4; state ``s`` of system ``i`` is ``offset[i] + s``),
    contracted to the τ-DAG of the module. ``node[s]`` is the node of state ``s``, ``members[x]``
    the states of node ``x`` (ascending), ``tau[x]`` its τ-successors and ``visible[x]``
    its visible moves ``(label id, node)``, both sorted; labels numbered by
    ``label_ids`` (extended; τ included)."""

    def __init__(self, systems: Sequence[LTS], label_ids: dict[str, int]) -> None:
        self.tau_id = label_ids.setdefault(TAU, len(label_ids))
        offsets: list[int] = []
        src: list[int] = []
        lab: list[int] = []
        dst: list[int] = []
        n = 0
        for lts in systems:
            offsets.append(n)
            names = [t.label for t in lts.transitions]
            for name in dict.fromkeys(names):  # numbered in order of first appearance
                label_ids.setdefault(name, len(label_ids))
            lab.extend([label_ids[name] for name in names])
            src.extend([t.src + n for t in lts.transitions])
            dst.extend([t.dst + n for t in lts.transitions])
            n += lts.n_states
        self.offsets = tuple(offsets)
        dag = contract(n, src, lab, dst, self.tau_id, len(label_ids))
        self.tau, self.visible, self.node, self.members = dag
        #: the saturated moves of every node, when built (:meth:`saturation`)
        self.saturated: Adjacency | None = None

    def refine(self) -> tuple[list[int], list[int], list[int]]:
        """The largest weak bisimulation on the nodes, with its history: the final block
        of each node and, per block, the block it split off from (``-1`` for the first)
        and the round it was born in (as :func:`~sim.calculus.refinement.refine_history`
        on the saturated system)."""
        k = len(self.tau)
        labels = 1 + max((a for moves in self.visible for a, _ in moves), default=0)
        block = [0] * k
        parent = [-1]
        born = [0]
        rounds = 0
        while True:
            rounds += 1
            width = len(parent)
            if width * labels <= DIRECT_BITS:
                reach, after = self._direct(block, width)
            else:
                reach, after = self._interned(block, width, labels)
            groups: dict[tuple[int, int, int], list[int]] = {}
            for x, sig in enumerate(zip(block, reach, after, strict=True)):
                groups.setdefault(sig, []).append(x)
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

    def _direct(self, block: list[int], width: int) -> tuple[list[int], list[int]]:
        """``R(x)`` and ``A(x)`` of every node as bit sets (``A``'s label ``a`` at bits
        ``a·width`` on): the narrow rounds, where an operation on a bit set is one on a
        machine word or two."""
        tau, visible = self.tau, self.visible
        k = len(tau)
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
        return reach, after

    def _interned(self, block: list[int], width: int, labels: int) -> tuple[list[int], list[int]]:
        """``R(x)`` and ``A(x)`` of every node as the number of its value among the
        distinct ones (equal sets, equal numbers): the wide rounds. A value is computed
        (bit sets, as :meth:`_direct`) once per distinct combination of a node's inputs
        (its block and its successors' numbers), so the wide operations are as many as
        the distinct inputs, a few times the blocks, not one per node and transition."""
        tau, visible = self.tau, self.visible
        k = len(tau)
        span = k + 1  # numbers are below it: (b, r) is b·span + r
        reach = [0] * k
        value: list[int] = []
        number: dict[int, int] = {}
        known: dict[object, int] = {}
        key: object
        for x, ys, b in zip(range(k), tau, block, strict=True):
            if not ys:
                key = -1 - b
            elif len(ys) == 1:
                key = b * span + reach[ys[0]]
            else:
                key = (b, *sorted({reach[y] for y in ys}))
            r = known.get(key)
            if r is None:
                v = 1 << b
                for y in ys:
                    v |= value[reach[y]]
                r = number.setdefault(v, len(value))
                if r == len(value):
                    value.append(v)
                known[key] = r
            reach[x] = r
        after = [0] * k  # 0: the empty set
        avalue = [0]
        anumber = {0: 0}
        aknown: dict[object, int] = {}
        for x, ys, vis in zip(range(k), tau, visible, strict=True):
            if not vis:
                if not ys:
                    continue
                if len(ys) == 1:
                    after[x] = after[ys[0]]
                    continue
                key = tuple(sorted({after[y] for y in ys}))
            elif len(vis) == 1:  # the move as a negative number, τ-successors' A their own
                move = -1 - reach[vis[0][1]] * labels - vis[0][0]
                if not ys:
                    key = move
                elif len(ys) == 1:
                    key = (move, after[ys[0]])
                else:
                    key = (move, *sorted({after[y] for y in ys}))
            else:
                moves = {-1 - reach[z] * labels - a for a, z in vis}
                key = tuple(sorted(moves.union([after[y] for y in ys])))
            r = aknown.get(key)
            if r is None:
                acc = 0
                for y in ys:
                    acc |= avalue[after[y]]
                for a, z in vis:
                    acc |= value[reach[z]] << (a * width)
                r = anumber.setdefault(acc, len(avalue))
                if r == len(avalue):
                    avalue.append(acc)
                aknown[key] = r
            after[x] = r
        return reach, after

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
        visible = self.visible
        return {a for x in nodes for a, _ in visible[x]}

    def after(self, nodes: Iterable[int], a: int) -> frozenset[int]:
        """τ* a τ* of the τ-closed set ``nodes`` (``a`` visible)."""
        visible = self.visible
        return self.closure(z for x in nodes for b, z in visible[x] if b == a)

    def able(self, nodes: frozenset[int], a: int) -> frozenset[int]:
        """The nodes of ``nodes`` that can do ``τ* a``: forward over their τ-closure in the
        DAG's order (a node's τ-successors first), so only that closure is read."""
        can: set[int] = set()
        for x in sorted(self.closure(nodes)):
            if any(b == a for b, _ in self.visible[x]) or any(y in can for y in self.tau[x]):
                can.add(x)
        return nodes & can


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
