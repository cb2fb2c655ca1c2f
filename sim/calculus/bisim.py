"""Strong and weak bisimulation by partition refinement (paper §4.4, Definition of ``S ~ M``).

Strong bisimilarity is the coarsest stable partition, computed by incremental signature
refinement (:func:`~sim.calculus.refinement.refine_history`): a state's signature is the set of
``(label, block of successor)``; a state is re-examined only when a successor changed block,
so a chain of ``n`` states costs ``O(n)``, not ``O(n²)``. Weak bisimilarity is strong
bisimilarity of the *saturated* system (``s ⇒a⇒ t`` iff ``s τ* a τ* t`` for visible ``a``,
``s ⇒τ⇒ t`` iff ``s τ* t``), computed on the quotient by the τ-strongly-connected components
(Tarjan): the states of one τ-cycle are weakly bisimilar, so they are contracted before
saturating, and a τ-ring costs linear time and memory. When two systems differ,
:mod:`sim.calculus.witness` gives a distinguishing trace or a Hennessy–Milner formula.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sim.calculus.lts import LTS, TAU
from sim.calculus.refinement import Quotient, canonical, refine_history, saturate
from sim.calculus.witness import Distinction, Formula, branching_witness, trace_witness

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


def _partition(q: Quotient) -> list[int]:
    block = refine_history(q.adj)[0]
    return canonical([block[c] for c in q.node])


def strong_partition(lts: LTS) -> list[int]:
    """The largest strong bisimulation on ``lts`` as a block number per state (paper §4.4)."""
    return _partition(Quotient.strong(lts, {}))


def weak_partition(lts: LTS) -> list[int]:
    """The largest weak bisimulation on ``lts`` (paper §4.4 ``~``) as a block number per state."""
    return _partition(Quotient.weak(lts, {}))


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
    q = Quotient.weak(union, label_ids) if weak else Quotient.strong(union, label_ids)
    history = refine_history(q.adj)
    block = canonical([history[0][c] for c in q.node])
    off = left.n_states
    start_l, start_r = q.node[left.initial], q.node[right.initial + off]
    equivalent = history[0][start_l] == history[0][start_r]
    distinction = None
    if not equivalent:
        names = {i: lab for lab, i in label_ids.items()}
        tau_id = label_ids.get(TAU) if weak else None
        found = trace_witness(q, start_l, start_r, off, names, tau_id, weak)
        if isinstance(found, Distinction):
            distinction = found
        else:
            distinction = branching_witness(q, history, start_l, start_r, off, names, weak, found)
    return BisimResult(equivalent, weak, off, tuple(block), distinction)
