"""Strong and weak bisimulation: agreement with bispy, equivalence laws, hand-made pairs
(the weak refinement's own ways: ``test_weak``)."""

from __future__ import annotations

import random
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bisim_families import tau_ring
from sim.calculus.bisim import bisimilar, saturate, strong_partition, weak_partition
from sim.calculus.lts import LTS, TAU, accepts, relabel, traces
from sim.calculus.mcp import Tool, tool_lts
from sim.calculus.theorems import action_equivalence
from tests.harness.bisim_oracle import bispy_partition, blocks, check_sound, random_lts_of


@cache
def _edges(n: int) -> st.SearchStrategy[list[tuple[int, str, int]]]:
    """Up to 3n transitions over n states (built once per n: a strategy built in each
    drawing is validated again each time; the drawings are the same)."""
    return st.lists(
        st.tuples(
            st.integers(0, n - 1), st.sampled_from(["a", "b", "c", TAU]), st.integers(0, n - 1)
        ),
        max_size=3 * n,
    )


@st.composite
def random_lts(draw: st.DrawFn, max_states: int = 8) -> LTS:
    """A random LTS over a, b, c and τ."""
    n = draw(st.integers(1, max_states))
    edges = draw(_edges(n))
    return LTS(n, draw(st.integers(0, n - 1)), edges)


@pytest.mark.parametrize("seed", range(4))
def test_strong_partition_agrees_with_bispy_on_random_lts(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        lts = random_lts_of(rng)
        assert blocks(strong_partition(lts)) == bispy_partition(lts)


@pytest.mark.parametrize("seed", range(4))
def test_weak_partition_agrees_with_bispy_on_saturated_random_lts(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(60):
        lts = random_lts_of(rng)
        assert blocks(weak_partition(lts)) == bispy_partition(saturate(lts))


def test_saturation_is_tau_star_a_tau_star() -> None:
    lts = LTS(4, 0, [(0, TAU, 1), (1, "a", 2), (2, TAU, 3)])
    sat = saturate(lts)
    assert set(sat.successors(0, "a")) == {2, 3}
    assert set(sat.successors(0, TAU)) == {0, 1}
    assert sat.successors(3, TAU) == (3,)


@given(random_lts())
@settings(max_examples=60, deadline=None)
def test_bisimilarity_is_reflexive(lts: LTS) -> None:
    assert bisimilar(lts, lts, weak=False).equivalent
    assert bisimilar(lts, lts).equivalent


@given(random_lts(), random_lts())
@settings(max_examples=80, deadline=None)
def test_bisimilarity_is_symmetric_and_strong_implies_weak(a: LTS, b: LTS) -> None:
    for weak in (False, True):
        assert bisimilar(a, b, weak=weak).equivalent == bisimilar(b, a, weak=weak).equivalent
    if bisimilar(a, b, weak=False).equivalent:
        assert bisimilar(a, b).equivalent


@given(random_lts())
@settings(max_examples=60, deadline=None)
def test_tau_self_loops_do_not_matter_weakly(lts: LTS) -> None:
    without = LTS(
        lts.n_states,
        lts.initial,
        [
            (t.src, t.label, t.dst)
            for t in lts.transitions
            if not (t.label == TAU and t.src == t.dst)
        ],
    )
    assert bisimilar(lts, without).equivalent


@given(random_lts(), random_lts())
@settings(max_examples=80, deadline=None)
def test_a_distinction_is_a_real_difference(a: LTS, b: LTS) -> None:
    """Every explanation is sound: a trace exactly one side accepts, or a formula exactly one
    initial state satisfies; both name two states that really differ on ``label``."""
    for weak in (True, False):
        check_sound(a, b, weak)


@pytest.mark.parametrize("weak", [True, False])
def test_witnesses_are_sound_on_200_random_non_bisimilar_pairs(weak: bool) -> None:
    """On at least 200 random non-bisimilar pairs, a trace witness is accepted (weakly, when
    weak) by exactly one side and a branching witness's formula holds on exactly one side."""
    rng = random.Random(7 if weak else 8)
    kinds: dict[str, int] = {"trace": 0, "branching": 0}
    while sum(kinds.values()) < 250:
        kind = check_sound(random_lts_of(rng), random_lts_of(rng), weak)
        if kind is not None:
            kinds[kind] += 1
    assert kinds["trace"] >= 200


def test_trace_witness_is_shortest() -> None:
    """The witness is a shortest trace one side lacks (breadth-first on state sets)."""
    a = LTS(4, 0, [(0, "a", 1), (1, "b", 2), (2, "c", 3)])
    b = LTS(5, 0, [(0, "a", 1), (1, "b", 2), (2, "d", 3), (0, "a", 4), (4, "b", 3)])
    result = bisimilar(a, b)
    assert result.distinction is not None and result.distinction.kind == "trace"
    assert result.distinction.trace == ("a", "b", "c") and result.distinction.left_can
    assert result.distinction.right_states == frozenset({2, 3})


def test_strong_trace_witness_counts_tau() -> None:
    """Strongly, τ is a label: ``a`` against ``τ.a`` is told apart by the trace ``tau``."""
    a = LTS(2, 0, [(0, "a", 1)])
    b = LTS(3, 0, [(0, TAU, 1), (1, "a", 2)])
    assert bisimilar(a, b).equivalent
    d = bisimilar(a, b, weak=False).distinction
    assert d is not None and d.kind == "trace" and d.trace == ("a",) and d.left_can
    assert accepts(a, d.trace, weak=False) and not accepts(b, d.trace, weak=False)


def _booking_tool_ltss() -> tuple[LTS, LTS]:
    """``book_train`` of scenarios/train_booking.yaml as its caller sees it through the
    scenario's protocol and through MCP, built the way ``python -m sim lts`` builds it."""
    from sim.calculus.mcp import caller_view, tool_plus_from_mapping
    from sim.cli.calculus import _protocol_fields, _value
    from sim.scenario import load_scenario

    path = "scenarios/train_booking.yaml"
    scenario = load_scenario(path)
    spec = {t.name: t for t in scenario.tools}["book_train"]
    data = spec.model_dump(by_alias=True, exclude_none=True)
    truth = tool_plus_from_mapping(data, "tools[book_train]")
    policy = str(_value(getattr(getattr(scenario, "approval", None), "mcp_policy", "hints")))
    errors = (*(str(e) for e in data.get("errors", {})), "ServiceDown")
    out = []
    for protocol in ("SGD", "MCP"):
        fields = _protocol_fields(scenario, protocol, path)
        out.append(tool_lts(caller_view(truth, fields, policy), error_types=errors))
    return out[0], out[1]


@pytest.mark.parametrize("weak", [True, False])
def test_reviewer_case_retry_versus_abort_is_a_real_trace(weak: bool) -> None:
    """The reviewer's case: the old search printed ``call error(ValidationError)``, which both
    sides have. The witness is now a trace exactly one side accepts (the tool retries or
    prompts after a failure of the service, the MCP view aborts)."""
    sgd, mcp = _booking_tool_ltss()
    assert accepts(sgd, ["call(book_train)", "error(book_train,ValidationError)"])
    assert accepts(mcp, ["call(book_train)", "error(book_train,ValidationError)"])
    result = bisimilar(sgd, mcp, weak=weak)
    d = result.distinction
    assert d is not None and d.kind == "trace"
    assert d.trace[-1] in ("abort(book_train)", "retry(book_train)", "prompt(book_train)")
    assert "ValidationError" not in " ".join(d.trace)
    assert accepts(sgd, d.trace, weak=weak) != accepts(mcp, d.trace, weak=weak)
    assert check_sound(sgd, mcp, weak) == "trace"


def test_relation_contains_the_initial_pair_when_equivalent() -> None:
    a = LTS(3, 0, [(0, "a", 1), (1, TAU, 2), (2, "b", 0)])
    b = LTS(2, 0, [(0, "a", 1), (1, "b", 0)])
    result = bisimilar(a, b)
    assert result.equivalent and (0, 0) in set(result.relation())
    assert not bisimilar(a, b, weak=False).equivalent


def test_classic_pair_a_bc_versus_ab_ac() -> None:
    """a.(b+c) and a.b + a.c: same traces, not bisimilar; no trace separates them, a formula
    does: a.(b+c) can do a then both b and c."""
    left = LTS(4, 0, [(0, "a", 1), (1, "b", 2), (1, "c", 3)])
    right = LTS(5, 0, [(0, "a", 1), (1, "b", 2), (0, "a", 3), (3, "c", 4)])
    for weak in (False, True):
        result = bisimilar(left, right, weak=weak)
        assert not result.equivalent
        d = result.distinction
        assert d is not None and d.kind == "branching" and d.trace == ()
        assert d.trace_equivalent is True and d.steps == ("a",) and d.left_can
        assert str(d.formula) == "<a>(<c>tt & <b>tt)"
        kind = "weakly" if weak else "strongly"
        assert d.describe().startswith(f"{kind} trace-equivalent")
        assert check_sound(left, right, weak) == "branching"
        assert check_sound(right, left, weak) == "branching"


def test_trace_equivalent_but_not_weakly_bisimilar_sgd_versus_mcp() -> None:
    """An SGD intent that can still collect slots after validation has started (it decides
    between executing and failing only after the collect) against the MCP tool that validates
    once (its τ commits): weakly trace-equivalent, not weakly bisimilar."""
    n = "book"
    lazy_sgd = LTS(
        6,
        0,
        [
            (0, f"invoke({n})", 1),
            (1, "collect(date)", 2),
            (2, "collect(date)", 2),  # can still collect after validation started
            (2, f"error({n},MissingSlots)", 3),
            (3, f"abort({n})", 5),
            (2, f"execute({n})", 4),
            (4, f"result({n})", 5),
        ],
    )
    tool = Tool(n, "Books", {"type": "object", "required": ["date"], "properties": {}})
    mcp = tool_lts(tool, error_types=())
    sgd = relabel(lazy_sgd, action_equivalence)
    assert traces(sgd, 5) == traces(mcp, 5)
    assert accepts(sgd, ["call(book)", "error(book,ValidationError)", "abort(book)"])
    result = bisimilar(sgd, mcp)
    assert not result.equivalent
    d = result.distinction
    assert d is not None
    assert d.kind == "branching" and d.trace_equivalent is True and d.trace == ()
    assert "weakly trace-equivalent" in d.describe()
    # the line of play: the SGD side can still fail after the MCP side has validated
    assert d.steps == ("call(book)",) and d.label == "error(book,ValidationError)"
    assert d.left_can
    assert d.formula is not None and str(d.formula) in d.describe()
    assert d.formula.holds(sgd) and not d.formula.holds(mcp)
    assert check_sound(sgd, mcp, True) == "branching"
    assert check_sound(mcp, sgd, True) == "branching"


A_ZERO = LTS(2, 0, [(0, "a", 1)])


@pytest.mark.parametrize(
    "n",
    # 20,000 runs in make bench (slow): 3,000 takes the same path, three times deeper than
    # the recursion limit; the 30,000-state chain below guards the contraction by default
    [2, 3, 50, 3_000, pytest.param(20_000, marks=pytest.mark.slow)],
)
def test_tau_ring_is_weakly_a_then_stop(n: int) -> None:
    """Thousands of τ-cycle states: Tarjan is iterative (no recursion limit) and the cycle
    is contracted to one node (saturating 20,000 uncontracted would take 4·10⁸ pairs)."""
    result = bisimilar(tau_ring(n), A_ZERO)
    assert result.equivalent
    assert all(result.related(s, 0) for s in range(n - 1)) and result.related(n - 1, 1)
    assert not bisimilar(tau_ring(n), A_ZERO, weak=False).equivalent  # strongly τ is seen


def test_tau_ring_with_a_second_exit_label_is_told_apart() -> None:
    ring = tau_ring(40)
    extra = LTS(40, 0, [*((t.src, t.label, t.dst) for t in ring.transitions), (7, "b", 39)])
    result = bisimilar(extra, A_ZERO)
    assert not result.equivalent and result.distinction is not None
    assert result.distinction.trace == ("b",) and result.distinction.left_can
    # every ring state is a place the left side can be in before any visible move
    assert result.distinction.left_states == frozenset(range(39))
    assert result.distinction.left_state in range(39)


def test_long_tau_chain_into_a_ring_needs_no_recursion() -> None:
    n = 30_000
    trans = [(i, TAU, i + 1) for i in range(n - 1)] + [(n - 1, TAU, n - 100), (n - 50, "a", n)]
    assert bisimilar(LTS(n + 1, 0, trans), A_ZERO).equivalent


def test_ten_thousand_state_chain_refines_to_ten_thousandblocks() -> None:
    n = 10_000
    chain = LTS(n, 0, [(i, "a", i + 1) for i in range(n - 1)])
    assert len(set(strong_partition(chain))) == n
