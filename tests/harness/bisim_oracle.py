"""The bisimulation oracle shared by the calculus' tests (paper §4.4): BisPy's maximum
bisimulation (Paige–Tarjan, an implementation independent of ``sim.calculus``), the
soundness check of a distinction, and random and τ-heavy LTSs."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from sim.calculus.bisim import bisimilar, saturate
from sim.calculus.lts import LTS, TAU, accepts

__all__ = ["bispy_partition", "blocks", "check_sound", "random_lts_of", "tau_heavy_lts", "union_of"]


def blocks(partition: list[int]) -> set[frozenset[int]]:
    """The blocks of a partition given as a block number per state."""
    out: dict[int, set[int]] = {}
    for s, b in enumerate(partition):
        out.setdefault(b, set()).add(s)
    return {frozenset(v) for v in out.values()}


def bispy_partition(lts: LTS) -> set[frozenset[int]]:
    """Maximum strong bisimulation by bispy (Paige–Tarjan) on the standard encoding of an LTS
    as a graph: a node per state, a node per (label, target) pair, labels in the initial
    partition."""
    import bispy  # with networkx: not at collection
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range(lts.n_states))
    mid: dict[tuple[str, int], int] = {}
    for t in lts.transitions:
        m = mid.setdefault((t.label, t.dst), lts.n_states + len(mid))
        graph.add_edge(t.src, m)
        graph.add_edge(m, t.dst)
    by_label: dict[str, list[int]] = {}
    for (lab, _), m in mid.items():
        by_label.setdefault(lab, []).append(m)
    initial = [tuple(range(lts.n_states)), *(tuple(v) for v in by_label.values())]
    result = bispy.compute_maximum_bisimulation(graph, initial)
    return {
        frozenset(s for s in block if s < lts.n_states)
        for block in result
        if any(s < lts.n_states for s in block)
    }


def random_lts_of(rng: random.Random) -> LTS:
    """A random LTS of 1–12 states over a, b, c and τ (fewer labels sometimes)."""
    n = rng.randint(1, 12)
    labels = ["a", "b", "c", TAU][: rng.randint(1, 4)]
    m = rng.randint(0, 3 * n)
    edges = [(rng.randrange(n), rng.choice(labels), rng.randrange(n)) for _ in range(m)]
    return LTS(n, rng.randrange(n), edges)


def check_sound(a: LTS, b: LTS, weak: bool) -> str | None:
    """Check the explanation of ``bisimilar(a, b)`` is a sound refutation; its kind."""
    result = bisimilar(a, b, weak=weak)
    if result.equivalent:
        assert result.distinction is None
        return None
    d = result.distinction
    assert d is not None
    sat_a, sat_b = (saturate(a), saturate(b)) if weak else (a, b)
    can_a = bool(sat_a.successors(d.left_state, d.label))
    can_b = bool(sat_b.successors(d.right_state, d.label))
    assert (can_a, can_b) == ((True, False) if d.left_can else (False, True))
    assert not result.related(d.left_state, d.right_state)
    if d.kind == "trace":
        assert d.trace == (*d.steps, d.label)
        assert (accepts(a, d.trace, weak=weak), accepts(b, d.trace, weak=weak)) == (
            (True, False) if d.left_can else (False, True)
        )
        assert d.formula is None
    else:
        assert d.kind == "branching" and d.trace == ()
        assert d.formula is not None
        assert d.formula.holds(a, weak=weak) and not d.formula.holds(b, weak=weak)
        assert d.trace_equivalent is True
        assert "trace-equivalent" in d.describe() and str(d.formula) in d.describe()
    return d.kind


@st.composite
def tau_heavy_lts(draw: st.DrawFn, max_states: int = 9) -> LTS:
    """A random LTS whose transitions are τ four times in five (τ-cycles, τ-chains)."""
    n = draw(st.integers(1, max_states))
    label = st.sampled_from([TAU, TAU, TAU, TAU, "a", TAU, TAU, TAU, TAU, "b"])
    edges = draw(
        st.lists(st.tuples(st.integers(0, n - 1), label, st.integers(0, n - 1)), max_size=3 * n)
    )
    return LTS(n, draw(st.integers(0, n - 1)), edges)


def union_of(a: LTS, b: LTS) -> LTS:
    """The disjoint union of ``a`` and ``b`` (``b``'s states after ``a``'s), started at
    ``a``'s initial state."""
    off = a.n_states
    edges = [(t.src, t.label, t.dst) for t in a.transitions]
    edges += [(t.src + off, t.label, t.dst + off) for t in b.transitions]
    return LTS(off + b.n_states, a.initial, edges)
