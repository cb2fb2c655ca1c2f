"""Strong and weak bisimulation by partition refinement (paper §4.4, Definition of ``S ~ M``).

Strong bisimilarity is the coarsest stable partition, computed by incremental signature
refinement: a state's signature is the set of ``(label, block of successor)``; a state is
re-examined only when a successor changed block, so a chain of ``n`` states costs ``O(n)``,
not ``O(n²)``. Weak bisimilarity is strong bisimilarity of the *saturated* system (τ-closure):
``s ⇒a⇒ t`` iff ``s τ* a τ* t`` for visible ``a``, and ``s ⇒τ⇒ t`` iff ``s τ* t``
(reflexive). When two systems differ, a product search over non-bisimilar pairs yields a
distinguishing trace: the moves from the initial pair to a pair of states where one side can
take a label the other cannot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sim.calculus.lts import LTS, TAU

__all__ = [
    "BisimResult",
    "Distinction",
    "bisimilar",
    "saturate",
    "strong_partition",
    "weak_partition",
]

# adjacency: per state, a list of (label id, successor)
_Adjacency = list[list[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Distinction:
    """Why two states are not bisimilar (paper §4.4): after ``steps`` (moves of the left or
    right side answered by the other; ``tau`` is a weak internal move), the left state can do
    ``label`` and the right cannot (``left_can``), or the other way round."""

    steps: tuple[str, ...]
    label: str
    left_can: bool
    left_state: int
    right_state: int

    @property
    def trace(self) -> tuple[str, ...]:
        """The visible labels of the steps, then the distinguishing label."""
        return (*(s for s in self.steps if s != TAU), self.label)

    def describe(self) -> str:
        """One line for people: the path and which side can do what."""
        path = " ".join(self.steps) if self.steps else "(start)"
        can, cannot = ("left", "right") if self.left_can else ("right", "left")
        states = {"left": self.left_state, "right": self.right_state}
        return (
            f"after {path}: {can} (state {states[can]}) can do {self.label}, "
            f"{cannot} (state {states[cannot]}) cannot"
        )


@dataclass(frozen=True, slots=True)
class BisimResult:
    """The verdict of :func:`bisimilar` (paper §4.4 ``S ~ M``).

    ``block_of`` numbers the blocks of the largest bisimulation on the disjoint union: left
    state ``i`` is ``i``, right state ``j`` is ``n_left + j``. ``distinction`` is set iff not
    ``equivalent``.
    """

    equivalent: bool
    weak: bool
    n_left: int
    block_of: tuple[int, ...]
    distinction: Distinction | None

    def related(self, left: int, right: int) -> bool:
        """Whether left state ``left`` and right state ``right`` are bisimilar."""
        return self.block_of[left] == self.block_of[self.n_left + right]

    def relation(self) -> Iterator[tuple[int, int]]:
        """The pairs ``(left, right)`` of the largest bisimulation between the two systems."""
        right_by_block: dict[int, list[int]] = {}
        for j, b in enumerate(self.block_of[self.n_left :]):
            right_by_block.setdefault(b, []).append(j)
        for i in range(self.n_left):
            for j in right_by_block.get(self.block_of[i], ()):
                yield i, j


def _adjacency(lts: LTS, label_ids: dict[str, int]) -> _Adjacency:
    adj: _Adjacency = [[] for _ in range(lts.n_states)]
    for t in lts.transitions:
        lid = label_ids.setdefault(t.label, len(label_ids))
        adj[t.src].append((lid, t.dst))
    return adj


def _refine(adj: _Adjacency, n_labels: int) -> list[int]:
    """Coarsest stable partition of ``adj`` (incremental signature refinement)."""
    n = len(adj)
    if n == 0:
        return []
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
    while dirty:
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
                block_sig.append(sig)
                size[b] -= len(states)
                for s in states:
                    block[s] = nb
                moved.extend(states)
        dirty = {p for s in moved for p in preds[s]}
    del n_labels
    return _canonical(block)


def _canonical(block: Sequence[int]) -> list[int]:
    """Renumber blocks in order of first occurrence (so equal partitions are equal lists)."""
    number: dict[int, int] = {}
    return [number.setdefault(b, len(number)) for b in block]


def strong_partition(lts: LTS) -> list[int]:
    """The largest strong bisimulation on ``lts`` as a block number per state (paper §4.4)."""
    label_ids: dict[str, int] = {}
    adj = _adjacency(lts, label_ids)
    return _refine(adj, len(label_ids))


def _tau_closures(lts: LTS) -> list[frozenset[int]]:
    """τ*(s) for every s: Tarjan SCCs of the τ-graph, closures in reverse topological order."""
    n = lts.n_states
    tau_succ: list[list[int]] = [[] for _ in range(n)]
    for t in lts.transitions:
        if t.label == TAU:
            tau_succ[t.src].append(t.dst)
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
            succ = tau_succ[v]
            while i < len(succ):
                w = succ[i]
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
    # Tarjan emits SCCs in reverse topological order: successors' components come first.
    comp_closure: list[frozenset[int]] = []
    for c, members in enumerate(comps):
        acc: set[int] = set(members)
        for v in members:
            for w in tau_succ[v]:
                cw = comp[w]
                if cw != c:
                    acc |= comp_closure[cw]
        comp_closure.append(frozenset(acc))
    return [comp_closure[comp[s]] for s in range(n)]


def _saturated_adjacency(lts: LTS, label_ids: dict[str, int]) -> _Adjacency:
    tau_id = label_ids.setdefault(TAU, len(label_ids))
    closure = _tau_closures(lts)
    # after[u] = {(a, w) : u -a-> v, w ∈ τ*(v), a visible}
    after: list[set[tuple[int, int]]] = [set() for _ in range(lts.n_states)]
    for t in lts.transitions:
        if t.label == TAU:
            continue
        lid = label_ids.setdefault(t.label, len(label_ids))
        after[t.src].update((lid, w) for w in closure[t.dst])
    adj: _Adjacency = []
    for s in range(lts.n_states):
        moves: set[tuple[int, int]] = {(tau_id, w) for w in closure[s]}
        for u in closure[s]:
            moves |= after[u]
        adj.append(list(moves))
    return adj


def saturate(lts: LTS) -> LTS:
    """The saturated LTS (paper §4.4 weak transitions): ``s --a--> t`` iff ``s ⇒a⇒ t``
    (τ* a τ*) for visible ``a``, and ``s --τ--> t`` iff ``s τ* t`` (reflexive)."""
    label_ids: dict[str, int] = {}
    adj = _saturated_adjacency(lts, label_ids)
    names = {i: lab for lab, i in label_ids.items()}
    trans = [(s, names[a], d) for s, succ in enumerate(adj) for a, d in succ]
    return LTS(lts.n_states, lts.initial, trans, lts.names)


def weak_partition(lts: LTS) -> list[int]:
    """The largest weak bisimulation on ``lts`` (paper §4.4 ``~``) as a block number per state."""
    label_ids: dict[str, int] = {}
    adj = _saturated_adjacency(lts, label_ids)
    return _refine(adj, len(label_ids))


def _union(left: LTS, right: LTS) -> LTS:
    off = left.n_states
    trans = [(t.src, t.label, t.dst) for t in left.transitions]
    trans.extend((t.src + off, t.label, t.dst + off) for t in right.transitions)
    return LTS(left.n_states + right.n_states, left.initial, trans)


def bisimilar(left: LTS, right: LTS, *, weak: bool = True) -> BisimResult:
    """Decide ``left ~ right`` (paper §4.4: weak bisimulation; strong with ``weak=False``).

    Returns the largest bisimulation between the two (as blocks of their disjoint union)
    and, when they are not bisimilar, a :class:`Distinction`.
    """
    union = _union(left, right)
    label_ids: dict[str, int] = {}
    adj = _saturated_adjacency(union, label_ids) if weak else _adjacency(union, label_ids)
    block = _refine(adj, len(label_ids))
    off = left.n_states
    start_l, start_r = left.initial, right.initial + off
    equivalent = block[start_l] == block[start_r]
    distinction = None
    if not equivalent:
        names = {i: lab for lab, i in label_ids.items()}
        distinction = _distinguish(adj, block, start_l, start_r, off, names)
    return BisimResult(equivalent, weak, off, tuple(block), distinction)


def _distinguish(
    adj: _Adjacency,
    block: list[int],
    start_l: int,
    start_r: int,
    off: int,
    names: dict[int, str],
) -> Distinction:
    """Breadth-first search over non-bisimilar pairs for the nearest label mismatch (in a
    saturated system every state has a τ move, so a mismatch is on a visible label)."""
    parent: dict[tuple[int, int], tuple[tuple[int, int], int] | None] = {(start_l, start_r): None}
    queue = deque([(start_l, start_r)])

    def path(pair: tuple[int, int]) -> tuple[str, ...]:
        steps: list[str] = []
        link = parent[pair]
        while link is not None:
            pair, lab = link
            steps.append(names[lab])
            link = parent[pair]
        return tuple(reversed(steps))

    while queue:
        pair = queue.popleft()
        p, q = pair
        labels_p = {a for a, _ in adj[p]}
        labels_q = {a for a, _ in adj[q]}
        if labels_p != labels_q:
            only_left = sorted(names[a] for a in labels_p - labels_q)
            only_right = sorted(names[a] for a in labels_q - labels_p)
            lab, left_can = (only_left[0], True) if only_left else (only_right[0], False)
            return Distinction(path(pair), lab, left_can, p, q - off)
        for mover, other, mover_is_left in ((p, q, True), (q, p, False)):
            for a, m2 in adj[mover]:
                answers = [o2 for b, o2 in adj[other] if b == a]
                if any(block[o2] == block[m2] for o2 in answers):
                    continue
                for o2 in answers:
                    nxt = (m2, o2) if mover_is_left else (o2, m2)
                    if nxt not in parent:
                        parent[nxt] = (pair, a)
                        queue.append(nxt)
    raise AssertionError("non-bisimilar states without a distinguishing path")  # pragma: no cover
