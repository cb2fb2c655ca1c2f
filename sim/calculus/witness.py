"""Why two systems are not bisimilar (paper §4.4 explanations): a distinguishing trace when
there is one, else a Hennessy–Milner formula read from the refinement history.

Both searches run on the nodes of the :class:`~sim.calculus.refinement.Quotient` the verdict
was computed on (τ-contracted when weak): the trace search steps sets of nodes
(:class:`Steps`: weak moves computed on the τ-DAG, never the whole saturation), the formula
reads single nodes' saturated moves, computed when asked; states are mapped back to the
original LTSs through its members.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from sim.calculus.lts import LTS
from sim.calculus.refinement import Adjacency, Quotient, saturate

__all__ = [
    "MAX_FORMULA_DEPTH",
    "MAX_TRACE_PAIRS",
    "Distinction",
    "Formula",
    "PlainSteps",
    "SaturatedSteps",
    "Steps",
    "branching_witness",
    "trace_witness",
]

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
    ``left_states``/``right_states`` are the states each side can be in after ``steps`` (when
    weak, with the states τ-contraction merged with them: weakly bisimilar ones);
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


def _by_label(adj: Adjacency) -> list[dict[int, list[int]]]:
    out: list[dict[int, list[int]]] = []
    for succ in adj:
        table: dict[int, list[int]] = {}
        for a, d in succ:
            table.setdefault(a, []).append(d)
        out.append(table)
    return out


class Steps(Protocol):
    """Moves of sets of nodes (paper §4.4 explanations), what the trace search reads:
    ``closure`` (τ*, the identity when strong), the labels a closed set moves by,
    ``after`` (its ``a``-successors, closed) and which of its nodes can do ``a``
    (:class:`~sim.calculus.weak.WeakSystem` computes them on the τ-DAG,
    :class:`PlainSteps` on an adjacency)."""

    def closure(self, nodes: Iterable[int]) -> frozenset[int]:
        """The nodes reachable from ``nodes`` by τ steps (themselves included)."""
        ...

    def labels(self, nodes: Iterable[int]) -> set[int]:
        """The labels some node of the closed set ``nodes`` moves by."""
        ...

    def after(self, nodes: Iterable[int], a: int) -> frozenset[int]:
        """The closed set of the ``a``-successors of the closed set ``nodes``."""
        ...

    def able(self, nodes: frozenset[int], a: int) -> frozenset[int]:
        """The nodes of ``nodes`` that can do ``a``."""
        ...


class PlainSteps:
    """:class:`Steps` of an adjacency taken as it is (paper §4.4 strong bisimulation: τ is
    a label like the others, no closure)."""

    def __init__(self, adj: Adjacency) -> None:
        self.table = _by_label(adj)

    def closure(self, nodes: Iterable[int]) -> frozenset[int]:
        """``nodes`` themselves."""
        return frozenset(nodes)

    def labels(self, nodes: Iterable[int]) -> set[int]:
        """The labels some node of ``nodes`` moves by."""
        return {a for x in nodes for a in self.table[x]}

    def after(self, nodes: Iterable[int], a: int) -> frozenset[int]:
        """The ``a``-successors of ``nodes``."""
        return frozenset(d for x in nodes for d in self.table[x].get(a, ()))

    def able(self, nodes: frozenset[int], a: int) -> frozenset[int]:
        """The nodes of ``nodes`` with an ``a`` move."""
        return frozenset(x for x in nodes if a in self.table[x])


class SaturatedSteps:
    """:class:`Steps` of a saturated adjacency (paper §4.4 weak transitions: a node's τ
    moves are its τ-closure, reflexive; its ``a`` moves already closed)."""

    def __init__(self, adj: Adjacency, tau_id: int) -> None:
        self.table = _by_label(adj)
        self.tau_id = tau_id

    def closure(self, nodes: Iterable[int]) -> frozenset[int]:
        """τ* of ``nodes``: their saturated τ moves."""
        return frozenset(d for x in nodes for d in self.table[x].get(self.tau_id, (x,)))

    def labels(self, nodes: Iterable[int]) -> set[int]:
        """The visible labels some node of ``nodes`` moves by."""
        return {a for x in nodes for a in self.table[x] if a != self.tau_id}

    def after(self, nodes: Iterable[int], a: int) -> frozenset[int]:
        """The saturated ``a``-successors of ``nodes``."""
        return frozenset(d for x in nodes for d in self.table[x].get(a, ()))

    def able(self, nodes: frozenset[int], a: int) -> frozenset[int]:
        """The nodes of ``nodes`` with a saturated ``a`` move."""
        return frozenset(x for x in nodes if a in self.table[x])


def trace_witness(
    q: Quotient,
    steps: Steps,
    start_l: int,
    start_r: int,
    off: int,
    names: dict[int, str],
    weak: bool,
) -> Distinction | bool | None:
    """A shortest trace one side has and the other has not, by breadth-first search over
    pairs of (τ-closed, when weak) node sets — the subset construction of both systems at
    once, stepped by ``steps``. ``True`` when there is none (the two are
    trace-equivalent), ``None`` when the search gave up after :data:`MAX_TRACE_PAIRS`
    pairs. ``start_l``/``start_r`` are nodes of ``q`` (paper §4.4 explanations)."""
    Pair = tuple[frozenset[int], frozenset[int]]
    first: Pair = (steps.closure((start_l,)), steps.closure((start_r,)))
    parent: dict[Pair, tuple[Pair, int] | None] = {first: None}
    queue = deque([first])
    order = sorted(names, key=names.__getitem__)
    while queue:
        pair = queue.popleft()
        lset, rset = pair
        enabled = steps.labels(lset | rset)
        for a in (a for a in order if a in enabled):
            lnext = steps.after(lset, a)
            rnext = steps.after(rset, a)
            if bool(lnext) != bool(rnext):
                labels: list[str] = []
                link = parent[pair]
                while link is not None:
                    prev, lab = link
                    labels.append(names[lab])
                    link = parent[prev]
                left_can = bool(lnext)
                can_set = lset if left_can else rset
                doer = min(steps.able(can_set, a))
                other = min(rset if left_can else lset)
                ls, rs = (doer, other) if left_can else (other, doer)
                return Distinction(
                    tuple(reversed(labels)),
                    names[a],
                    left_can,
                    q.members[ls][0],
                    q.members[rs][0] - off,
                    kind="trace",
                    weak=weak,
                    trace_equivalent=False,
                    left_states=q.states(lset),
                    right_states=frozenset(s - off for s in q.states(rset)),
                )
            nxt = (lnext, rnext)
            if nxt not in parent:
                if len(parent) >= MAX_TRACE_PAIRS:
                    return None
                parent[nxt] = (pair, a)
                queue.append(nxt)
    return True


def branching_witness(
    q: Quotient,
    history: tuple[list[int], list[int], list[int]],
    start_l: int,
    start_r: int,
    off: int,
    names: dict[int, str],
    weak: bool,
    trace_equivalent: bool | None,
) -> Distinction:
    """A Hennessy–Milner formula (paper §4.4) true of the left initial state and false of the
    right one,
    built from the refinement history (:func:`_refine_history`): if ``p`` and ``q`` first
    differ at round ``k``, some move ``p -a-> p'`` has no answer ``q -a-> q'`` in ``p'``'s
    round-``k-1`` block, and ``⟨a⟩ ∧_{q'} φ(p', q')`` separates them (or the same from ``q``,
    negated). States are nodes of ``q``."""
    adj = q.adj
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
                q.members[ls][0],
                q.members[rs][0] - off,
                kind="branching",
                weak=weak,
                trace_equivalent=trace_equivalent,
                formula=phi,
            )
        steps.append(names[a])
        x, y = d, answers[0]
