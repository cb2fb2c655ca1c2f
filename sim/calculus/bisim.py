"""Strong and weak bisimulation by partition refinement (paper §4.4, Definition of ``S ~ M``).

Strong bisimilarity is the coarsest stable partition, computed by incremental signature
refinement (:func:`~sim.calculus.refinement.refine_history`): a state's signature is the set of
``(label, block of successor)``; a state is re-examined only when a successor changed block,
so a chain of ``n`` states costs ``O(n)``, not ``O(n²)``. Weak bisimilarity is strong
bisimilarity of the *saturated* system (``s ⇒a⇒ t`` iff ``s τ* a τ* t`` for visible ``a``,
``s ⇒τ⇒ t`` iff ``s τ* t``), computed without saturating (:mod:`sim.calculus.weak`):
τ-cycles contracted, ``τ.P`` merged into ``P``, then signature refinement whose weak moves
are sets of blocks computed in one pass over the τ-DAG per round (interned when wide).
When two systems differ, :mod:`sim.calculus.witness` gives a distinguishing trace or a
Hennessy–Milner formula.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sim.calculus.lts import LTS
from sim.calculus.refinement import Quotient, adjacency, canonical, refine_history, saturate
from sim.calculus.weak import WeakSystem, acyclic
from sim.calculus.witness import (
    Distinction,
    Formula,
    PlainSteps,
    SaturatedSteps,
    Steps,
    branching_witness,
    trace_witness,
)

__all__ = [
    "BisimResult",
    "Distinction",
    "Formula",
    "bisimilar",
    "saturate",
    "strong_partition",
    "weak_partition",
]


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


def strong_partition(lts: LTS) -> list[int]:
    """The largest strong bisimulation on ``lts`` as a block number per state (paper §4.4)."""
    return canonical(refine_history(adjacency(lts, {}))[0])


def weak_partition(lts: LTS) -> list[int]:
    """The largest weak bisimulation on ``lts`` (paper §4.4 ``~``) as a block number per state."""
    system, history, _ = _weak([lts], {})
    return canonical([history[0][x] for x in system.node])


#: The saturation of the τ-contracted nodes is built while it takes at most this many
#: steps per state and transition of the systems (its incremental refinement is then the
#: faster one); past that it is abandoned and the bit-set rounds run (sim.calculus.weak).
SATURATION_BUDGET = 8


def _weak(
    systems: list[LTS], label_ids: dict[str, int]
) -> tuple[WeakSystem, tuple[list[int], list[int], list[int]], Steps]:
    """The τ-DAG of ``systems``, the weak refinement's history on its nodes, and the
    steps the trace search takes; ``system.quotient`` or the saturation gives the moves."""
    with acyclic():
        system = WeakSystem(systems, label_ids)
        size = sum(lts.n_states + len(lts.transitions) for lts in systems)
        sat = system.saturation(SATURATION_BUDGET * size)
        if sat is None:
            return system, system.refine(), system
        system.saturated = sat
        return system, refine_history(sat), SaturatedSteps(sat, system.tau_id)


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
    label_ids: dict[str, int] = {}
    off = left.n_states
    steps: Steps
    if weak:
        system, history, steps = _weak([left, right], label_ids)
        q = system.quotient()
    else:
        union = _union(left, right)
        adj = adjacency(union, label_ids)
        states = range(union.n_states)
        q = Quotient(tuple(states), tuple((s,) for s in states), adj)
        history = refine_history(adj)
        steps = PlainSteps(adj)
    block = canonical([history[0][c] for c in q.node])
    start_l, start_r = q.node[left.initial], q.node[right.initial + off]
    equivalent = history[0][start_l] == history[0][start_r]
    distinction = None
    if not equivalent:
        names = {i: lab for lab, i in label_ids.items()}
        found = trace_witness(q, steps, start_l, start_r, off, names, weak)
        if isinstance(found, Distinction):
            distinction = found
        else:
            distinction = branching_witness(q, history, start_l, start_r, off, names, weak, found)
    return BisimResult(equivalent, weak, off, tuple(block), distinction)
