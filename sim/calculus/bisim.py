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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sim.calculus.lts import LTS, TAU

__all__ = [
    "BisimResult",
    "Distinction",
    "Formula",
    "bisimilar",
    "saturate",
    "strong_partition",
    "weak_partition",
]

# adjacency: per state, a list of (label id, successor)
_Adjacency = list[list[tuple[int, int]]]


MAX_FORMULA_DEPTH = 150
"""Distinguishing formulas are not built for states that separate only after more refinement
rounds than this (the formula would nest that deep); the line of play is still given."""

MAX_TRACE_PAIRS = 200_000
"""How many pairs of state sets the distinguishing-trace search explores before it gives up
(the subset construction is finite but can be exponential)."""


@dataclass(frozen=True, slots=True)
class Formula:
    """A Hennessy–Milner formula (paper §4.4 explanations): ``tt``, ``ff``, ``<a>f`` (some
    ``a`` move leads to a state satisfying ``f``), ``[a]f`` (every ``a`` move does), ``&``,
    ``|``. Under weak bisimulation the modalities are weak: ``a`` means ``τ* a τ*`` and
    ``tau`` means ``τ*``."""

    op: str
    label: str = ""
    args: tuple[Formula, ...] = ()

    @staticmethod
    def diamond(lab: str, sub: Formula) -> Formula:
        """``<lab>sub``."""
        return Formula("dia", lab, (sub,))

    @staticmethod
    def conjunction(subs: Iterable[Formula]) -> Formula:
        """``sub1 & sub2 & ...`` (``tt`` when empty), flattened and deduplicated."""
        return Formula._junction("and", subs)

    @staticmethod
    def _junction(op: str, subs: Iterable[Formula]) -> Formula:
        unit, zero = ("tt", "ff") if op == "and" else ("ff", "tt")
        items: list[Formula] = []
        for f in subs:
            for g in f.args if f.op == op else (f,):
                if g.op == zero:
                    return g
                if g.op != unit and g not in items:
                    items.append(g)
        if not items:
            return Formula(unit)
        return items[0] if len(items) == 1 else Formula(op, "", tuple(items))

    def negated(self) -> Formula:
        """``¬self`` in negation normal form."""
        dual = {"tt": "ff", "ff": "tt", "dia": "box", "box": "dia", "and": "or", "or": "and"}
        return Formula(dual[self.op], self.label, tuple(a.negated() for a in self.args))

    def __str__(self) -> str:
        if self.op in ("tt", "ff"):
            return self.op
        if self.op in ("dia", "box"):
            lab = f"<{self.label}>" if self.op == "dia" else f"[{self.label}]"
            return lab + str(self.args[0])
        sep = " & " if self.op == "and" else " | "
        return "(" + sep.join(str(a) for a in self.args) + ")"

    def holds(self, lts: LTS, state: int | None = None, *, weak: bool = True) -> bool:
        """Whether ``state`` (default the initial state) of ``lts`` satisfies the formula."""
        system = saturate(lts) if weak else lts
        memo: dict[Formula, frozenset[int]] = {}
        everything = frozenset(range(system.n_states))

        def sat(f: Formula) -> frozenset[int]:
            if f not in memo:
                if f.op == "tt":
                    out = everything
                elif f.op == "ff":
                    out = frozenset()
                elif f.op in ("and", "or"):
                    parts = [sat(a) for a in f.args]
                    out = (
                        frozenset.intersection(*parts) if f.op == "and" else frozenset.union(*parts)
                    )
                else:
                    inner = sat(f.args[0])
                    pick = any if f.op == "dia" else all
                    out = frozenset(
                        s
                        for s in everything
                        if pick(d in inner for d in system.successors(s, f.label))
                    )
                memo[f] = out
            return memo[f]

        return (system.initial if state is None else state) in sat(self)


@dataclass(frozen=True, slots=True)
class Distinction:
    """Why two systems are not bisimilar (paper §4.4), always a sound refutation.

    ``kind == "trace"``: after the visible labels ``steps`` (all labels, τ included, when
    strong) the left side can do ``label`` and the right cannot (``left_can``), or the other
    way round — ``trace`` (``steps`` then ``label``) is accepted by exactly one side.
    ``left_states``/``right_states`` are the states each side can be in after ``steps``;
    ``left_state``/``right_state`` one of them each, the first able to do ``label``.

    ``kind == "branching"``: no trace tells them apart (``trace_equivalent`` is ``True``, or
    ``None`` when the trace search gave up) and ``trace`` is empty; ``formula`` holds in the
    left initial state and not in the right one (``None`` if deeper than
    :data:`MAX_FORMULA_DEPTH`). ``steps``/``label``/``left_state``/
    ``right_state`` are one line of play along the formula (the first answer of the
    defender at each move), ending where one state can do ``label`` and the other cannot —
    a line both systems may share as a trace.
    """

    steps: tuple[str, ...]
    label: str
    left_can: bool
    left_state: int
    right_state: int
    kind: str = "trace"
    weak: bool = True
    trace_equivalent: bool | None = False
    formula: Formula | None = None
    left_states: frozenset[int] = frozenset()
    right_states: frozenset[int] = frozenset()

    @property
    def trace(self) -> tuple[str, ...]:
        """The distinguishing trace (``steps`` then ``label``); empty for ``"branching"``."""
        return (*self.steps, self.label) if self.kind == "trace" else ()

    def describe(self) -> str:
        """One line for people: which side can do what, or the formula."""
        mode = "weakly" if self.weak else "strongly"
        if self.kind == "branching":
            if self.trace_equivalent:
                head = f"{mode} trace-equivalent (no trace tells left and right apart)"
            else:
                head = f"no distinguishing trace found within {MAX_TRACE_PAIRS} state-set pairs"
            modal = "tau* a tau*" if self.weak else "a"
            if self.formula is None:
                path = " ".join(self.steps) if self.steps else "(start)"
                return (
                    f"{head}, but they branch differently; the distinguishing formula nests "
                    f"deeper than {MAX_FORMULA_DEPTH} moves (one line of play: {path} {self.label})"
                )
            return (
                f"{head}, but they branch differently: the left initial state satisfies "
                f"{self.formula} and the right one does not (<a>f: some {modal} move "
                f"reaches a state satisfying f; [a]f: every such move does)"
            )
        path = " ".join(self.steps) if self.steps else "(start)"
        can, cannot = ("left", "right") if self.left_can else ("right", "left")
        states = {"left": self.left_state, "right": self.right_state}
        sets = {"left": self.left_states, "right": self.right_states}
        reached = ", ".join(str(s) for s in sorted(sets[cannot])) or str(states[cannot])
        return (
            f"after {path}: {can} (state {states[can]}) can do {self.label}, "
            f"{cannot} cannot from any state it can be in ({reached})"
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
    del n_labels
    return _canonical(_refine_history(adj)[0])


def _refine_history(adj: _Adjacency) -> tuple[list[int], list[int], list[int]]:
    """Incremental signature refinement with its history: the final block of each state and,
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
    and, when they are not bisimilar, a :class:`Distinction`: a shortest trace one side has
    and the other has not when there is one (``kind == "trace"``), else a Hennessy–Milner
    formula one initial state satisfies and the other does not (``kind == "branching"``).
    """
    union = _union(left, right)
    label_ids: dict[str, int] = {}
    adj = _saturated_adjacency(union, label_ids) if weak else _adjacency(union, label_ids)
    history = _refine_history(adj)
    block = _canonical(history[0])
    off = left.n_states
    start_l, start_r = left.initial, right.initial + off
    equivalent = block[start_l] == block[start_r]
    distinction = None
    if not equivalent:
        names = {i: lab for lab, i in label_ids.items()}
        tau_id = label_ids.get(TAU) if weak else None
        found = _trace_witness(adj, start_l, start_r, off, names, tau_id, weak)
        if isinstance(found, Distinction):
            distinction = found
        else:
            distinction = _branching_witness(
                adj, history, start_l, start_r, off, names, weak, found
            )
    return BisimResult(equivalent, weak, off, tuple(block), distinction)


def _by_label(adj: _Adjacency) -> list[dict[int, list[int]]]:
    out: list[dict[int, list[int]]] = []
    for succ in adj:
        table: dict[int, list[int]] = {}
        for a, d in succ:
            table.setdefault(a, []).append(d)
        out.append(table)
    return out


def _trace_witness(
    adj: _Adjacency,
    start_l: int,
    start_r: int,
    off: int,
    names: dict[int, str],
    tau_id: int | None,
    weak: bool,
) -> Distinction | bool | None:
    """A shortest trace one side has and the other has not, by breadth-first search over
    pairs of (τ-closed, when weak) state sets — the subset construction of both systems at
    once. ``True`` when there is none (the two are trace-equivalent), ``None`` when the
    search gave up after :data:`MAX_TRACE_PAIRS` pairs."""
    table = _by_label(adj)

    def start(s: int) -> frozenset[int]:
        return frozenset(table[s].get(tau_id, (s,))) if tau_id is not None else frozenset((s,))

    Pair = tuple[frozenset[int], frozenset[int]]
    first: Pair = (start(start_l), start(start_r))
    parent: dict[Pair, tuple[Pair, int] | None] = {first: None}
    queue = deque([first])
    order = sorted(names, key=names.__getitem__)
    while queue:
        pair = queue.popleft()
        lset, rset = pair
        enabled = {a for s in lset | rset for a in table[s] if a != tau_id}
        for a in (a for a in order if a in enabled):
            lnext = frozenset(d for s in lset for d in table[s].get(a, ()))
            rnext = frozenset(d for s in rset for d in table[s].get(a, ()))
            if bool(lnext) != bool(rnext):
                steps: list[str] = []
                link = parent[pair]
                while link is not None:
                    prev, lab = link
                    steps.append(names[lab])
                    link = parent[prev]
                left_can = bool(lnext)
                can_set = lset if left_can else rset
                doer = min(s for s in can_set if a in table[s])
                other = min(rset if left_can else lset)
                ls, rs = (doer, other) if left_can else (other, doer)
                return Distinction(
                    tuple(reversed(steps)),
                    names[a],
                    left_can,
                    ls,
                    rs - off,
                    kind="trace",
                    weak=weak,
                    trace_equivalent=False,
                    left_states=frozenset(lset),
                    right_states=frozenset(s - off for s in rset),
                )
            nxt = (lnext, rnext)
            if nxt not in parent:
                if len(parent) >= MAX_TRACE_PAIRS:
                    return None
                parent[nxt] = (pair, a)
                queue.append(nxt)
    return True


def _branching_witness(
    adj: _Adjacency,
    history: tuple[list[int], list[int], list[int]],
    start_l: int,
    start_r: int,
    off: int,
    names: dict[int, str],
    weak: bool,
    trace_equivalent: bool | None,
) -> Distinction:
    """A Hennessy–Milner formula true of the left initial state and false of the right one,
    built from the refinement history (:func:`_refine_history`): if ``p`` and ``q`` first
    differ at round ``k``, some move ``p -a-> p'`` has no answer ``q -a-> q'`` in ``p'``'s
    round-``k-1`` block, and ``⟨a⟩ ∧_{q'} φ(p', q')`` separates them (or the same from ``q``,
    negated)."""
    final, parent, born = history

    def chain(s: int) -> list[int]:
        out = [final[s]]
        while parent[out[-1]] != -1:
            out.append(parent[out[-1]])
        return out[::-1]

    def at(s: int, k: int) -> int:
        b = final[s]
        while born[b] > k:
            b = parent[b]
        return b

    def separation(p: int, q: int) -> int:
        cp, cq = chain(p), chain(q)
        i = 0
        while i < len(cp) and i < len(cq) and cp[i] == cq[i]:
            i += 1
        # The first block on either chain below the common one is where they part (a block
        # that keeps its id keeps the part that did not split off).
        parted = [born[c[i]] for c in (cp, cq) if i < len(c)]
        assert parted, "bisimilar states have no distinguishing formula"
        return min(parted)

    Move = tuple[int, int, tuple[int, ...]]
    moves: dict[tuple[int, int], Move | None] = {}

    def unmatched(p: int, q: int) -> Move | None:
        """A move of ``p`` with no answer of ``q`` in its block one round before they split;
        the one with fewest answers (then first by label name)."""
        key = (p, q)
        if key not in moves:
            k = separation(p, q) - 1
            q_blocks = {(a, at(d, k)) for a, d in adj[q]}
            best: Move | None = None
            for a, d in sorted(adj[p], key=lambda m: (names[m[0]], m[1])):
                if (a, at(d, k)) in q_blocks:
                    continue
                answers = tuple(sorted({d2 for b, d2 in adj[q] if b == a}))
                if best is None or len(answers) < len(best[2]):
                    best = (a, d, answers)
            moves[key] = best
        return moves[key]

    memo: dict[tuple[int, int], Formula] = {}

    def formula(p: int, q: int) -> Formula:
        key = (p, q)
        if key not in memo:
            move = unmatched(p, q)
            if move is None:
                memo[key] = formula(q, p).negated()
            else:
                a, d, answers = move
                subs = [formula(d, d2) for d2 in answers]
                memo[key] = Formula.diamond(names[a], Formula.conjunction(subs))
        return memo[key]

    deep = separation(start_l, start_r) > MAX_FORMULA_DEPTH
    phi = None if deep else formula(start_l, start_r)
    # The line of play: the attacker's moves along the formula, the defender's first answer.
    steps: list[str] = []
    x, y, left_is_x = start_l, start_r, True
    while True:
        move = unmatched(x, y)
        if move is None:
            x, y, left_is_x = y, x, not left_is_x
            continue
        a, d, answers = move
        if not answers:
            left_can = left_is_x
            ls, rs = (x, y) if left_is_x else (y, x)
            return Distinction(
                tuple(steps),
                names[a],
                left_can,
                ls,
                rs - off,
                kind="branching",
                weak=weak,
                trace_equivalent=trace_equivalent,
                formula=phi,
            )
        steps.append(names[a])
        x, y = d, answers[0]
