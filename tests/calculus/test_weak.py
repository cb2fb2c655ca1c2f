"""Weak bisimulation without the τ-closure (paper §4.4 ``≈``; issue 36 item 3): every way
:mod:`sim.calculus.weak` takes is BisPy's on the saturation, and the ways agree."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bisim_families import FAMILIES, random_tau, tau_chain
from sim.calculus import bisim, contraction, weak
from sim.calculus.bisim import bisimilar, saturate, weak_partition
from sim.calculus.contraction import topological
from sim.calculus.lts import LTS, TAU
from sim.calculus.refinement import components
from sim.calculus.weak import WeakSystem
from tests.harness.bisim_oracle import (
    bispy_partition,
    blocks,
    check_sound,
    random_lts_of,
    tau_heavy_lts,
    union_of,
)

A_ZERO = LTS(2, 0, [(0, "a", 1)])


@contextmanager
def refined(path: str) -> Iterator[None]:
    """Weak bisimulation by the rounds (``rounds``: the saturation budget 0, as past it on
    large systems), by the rounds as wide systems take them (``wide``: contracted with
    NumPy, signatures interned, as past ``ARRAYS_FROM`` and ``DIRECT_BITS``) or as small
    systems are (``saturation``: built, refined)."""
    saved = bisim.SATURATION_BUDGET, contraction.ARRAYS_FROM, weak.DIRECT_BITS
    bisim.SATURATION_BUDGET = max(saved[0], 8) if path == "saturation" else 0
    if path == "wide":
        contraction.ARRAYS_FROM, weak.DIRECT_BITS = 0, 0
    try:
        yield
    finally:
        bisim.SATURATION_BUDGET, contraction.ARRAYS_FROM, weak.DIRECT_BITS = saved


PATHS = ["rounds", "wide", "saturation"]


# ``wide`` is left out here: its DAG is the list contraction's and its history the direct
# rounds' (both tested below on the same LTSs), so its partition is this one
@pytest.mark.parametrize("path", ["rounds", "saturation"])
@given(lts=tau_heavy_lts())
@settings(max_examples=60, deadline=None)
def test_weak_partition_is_bispys_on_the_saturation_of_tau_heavy_lts(path: str, lts: LTS) -> None:
    with refined(path):
        assert blocks(weak_partition(lts)) == bispy_partition(saturate(lts))


@pytest.mark.parametrize("path", PATHS)
@given(a=tau_heavy_lts(), b=tau_heavy_lts())
@settings(max_examples=50, deadline=None)
def test_weak_verdict_is_bispys_on_pairs_and_its_distinction_is_real(
    path: str, a: LTS, b: LTS
) -> None:
    union = union_of(a, b)
    theirs = bispy_partition(saturate(union))
    together = any(a.initial in blk and a.n_states + b.initial in blk for blk in theirs)
    with refined(path):
        assert bisimilar(a, b).equivalent == together
        check_sound(a, b, True)


@pytest.mark.parametrize("seed", range(2))
def test_the_rounds_agree_with_bispy_on_random_lts_and_explain_soundly(seed: int) -> None:
    rng = random.Random(300 + seed)
    with refined("rounds"):
        for _ in range(60):
            lts, other = random_lts_of(rng), random_lts_of(rng)
            assert blocks(weak_partition(lts)) == bispy_partition(saturate(lts))
            check_sound(lts, other, True)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("n", [9, 40])
def test_the_benchmark_families_agree_with_bispy_when_small(path: str, family: str, n: int) -> None:
    make, spec, equivalent = FAMILIES[family]
    lts = make(n)
    with refined(path):
        assert blocks(weak_partition(lts)) == bispy_partition(saturate(lts))
        assert bisimilar(lts, spec).equivalent is equivalent
        kind = check_sound(lts, spec, True)
    assert kind == (None if equivalent else "trace")


def test_a_long_tau_chain_with_exits_everywhere_is_never_saturated() -> None:
    """10,000 chain states, each τ-closure the rest of the chain: 5·10⁷ saturated pairs the
    old method built; the refinement reads each transition once per round (2 rounds)."""
    chain = tau_chain(10_000)
    result = bisimilar(chain, A_ZERO)
    assert result.equivalent and result.related(0, 0) and result.related(9_999, 1)
    assert not bisimilar(chain, LTS(2, 0, [(0, "b", 1)])).equivalent


@pytest.mark.parametrize("path", PATHS)
def test_a_move_matched_only_through_a_tau_after_it_is_matched(path: str) -> None:
    """a.v + a.w against a.w, where w = τ.v + c.0: the left's a into v is answered by
    a τ (into w, then τ to v): weakly bisimilar, though no single a-successor of the
    right is bisimilar to v (the trailing τ* of τ* a τ* matters)."""
    v, w, end = 1, 2, 3
    left = LTS(4, 0, [(0, "a", v), (0, "a", w), (w, TAU, v), (w, "c", end), (v, "b", end)])
    right = LTS(4, 0, [(0, "a", w), (w, TAU, v), (w, "c", end), (v, "b", end)])
    with refined(path):
        assert bisimilar(left, right).equivalent
        assert not bisimilar(left, right, weak=False).equivalent


# --- the two contractions, the two kinds of rounds ----------------------------------


def _system(lts: LTS, arrays: bool) -> WeakSystem:
    saved = contraction.ARRAYS_FROM
    contraction.ARRAYS_FROM = 0 if arrays else 10**9
    try:
        return WeakSystem([lts], {})
    finally:
        contraction.ARRAYS_FROM = saved


def _dag(system: WeakSystem) -> tuple[object, ...]:
    """The τ-DAG with each node named by its first state (numbering-free)."""
    first = [ms[0] for ms in system.members]
    tau = {(first[x], first[y]) for x, ys in enumerate(system.tau) for y in ys}
    vis = {(first[x], a, first[z]) for x, ms in enumerate(system.visible) for a, z in ms}
    return frozenset(system.members), frozenset(tau), frozenset(vis)


@given(lts=tau_heavy_lts(max_states=12))
@settings(max_examples=40, deadline=None)
def test_the_array_contraction_builds_the_list_ones_dag(lts: LTS) -> None:
    lists, arrays = _system(lts, False), _system(lts, True)
    assert _dag(arrays) == _dag(lists)
    for system in (lists, arrays):  # a node's τ-successors come before it
        assert all(y < x for x, ys in enumerate(system.tau) for y in ys)
        assert all(system.node[s] == x for x, ms in enumerate(system.members) for s in ms)


@given(lts=tau_heavy_lts(max_states=12))
@settings(max_examples=40, deadline=None)
def test_the_interned_rounds_give_the_direct_rounds_history(lts: LTS) -> None:
    system = _system(lts, True)
    direct = system.refine()
    saved = weak.DIRECT_BITS
    weak.DIRECT_BITS = 0
    try:
        assert system.refine() == direct
    finally:
        weak.DIRECT_BITS = saved


def test_a_random_tau_system_takes_the_wide_rounds_and_they_agree() -> None:
    """4,000 states of the benchmark's random family: past ``DIRECT_BITS`` after a few
    rounds (so the default path interns), and the same history as every round direct."""
    system = WeakSystem([random_tau(4_000)], {})
    interned = system.refine()
    labels = 1 + max(a for ms in system.visible for a, _ in ms)
    assert len(interned[1]) * labels > weak.DIRECT_BITS
    saved = weak.DIRECT_BITS
    weak.DIRECT_BITS = 10**9
    try:
        assert system.refine() == interned
    finally:
        weak.DIRECT_BITS = saved


@given(
    order=st.permutations(range(6)),
    edges=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12),
)
def test_topological_numbers_successors_first(
    order: list[int], edges: list[tuple[int, int]]
) -> None:
    """Any acyclic graph of components, numbered at random: renumbered so every edge goes
    down, each component keeping its states."""
    down = sorted({(max(a, b), min(a, b)) for a, b in edges if a != b})  # acyclic
    comp = np.array([order[c] for c in range(6) for _ in range(2)], dtype=np.int64)
    src = np.array([order[a] for a, _ in down], dtype=np.int64)
    dst = np.array([order[b] for _, b in down], dtype=np.int64)
    new = topological(comp, src, dst, 6)
    rename = {int(o): int(n) for o, n in zip(comp, new, strict=True)}
    assert sorted(rename.values()) == list(range(6))
    assert all(rename[int(a)] > rename[int(b)] for a, b in zip(src, dst, strict=True))


def test_topological_refuses_a_cycle() -> None:
    comp = np.array([0, 1, 2], dtype=np.int64)
    src, dst = np.array([0, 1, 2], dtype=np.int64), np.array([1, 2, 0], dtype=np.int64)
    with pytest.raises(ValueError, match="the components' graph has a cycle"):
        topological(comp, src, dst, 3)


def test_tarjan_on_a_long_chain_needs_no_recursion() -> None:
    """The list contraction's components (and the reference saturation's): 3,000 states
    deep, three times the recursion limit; one component each, successors first."""
    comp, comps = components([[i + 1] for i in range(2_999)] + [[]])
    assert len(comps) == 3_000 and all(comp[i + 1] < comp[i] for i in range(2_999))
