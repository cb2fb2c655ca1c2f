"""Protocol field sets, derived loss, kinds, τ and the composition of transformers (SPEC §2)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.mesh import (
    BUILTIN_FIELDS,
    SEMANTIC_FIELDS,
    PairRule,
    Protocol,
    Transformer,
    TranslationKind,
    TranslationTable,
    derived_loss,
)

# The SPEC §2 table, written out again here (not imported) so the test checks the code.
EIGHT = (
    "name",
    "description",
    "input_schema",
    "side_effects",
    "requires_approval",
    "failure_modes",
    "dependencies",
    "summary",
)
SPEC_TABLE = {
    "MCP+": set(EIGHT) | {"annotations"},
    "SGD": set(EIGHT),
    "MCP": {"name", "description", "input_schema", "annotations"},
    "ANP": {"name", "description", "input_schema", "requires_approval"},
    "A2A": {"name", "description"},
}

# Loss of p → p' counted by hand: the semantic fields p has and p' lacks, out of 8.
HAND_LOSS = {
    ("MCP+", "SGD"): 0,
    ("MCP+", "MCP"): 5,  # side_effects, requires_approval, failure_modes, dependencies, summary
    ("MCP+", "ANP"): 4,  # side_effects, failure_modes, dependencies, summary
    ("MCP+", "A2A"): 6,
    ("SGD", "MCP+"): 0,
    ("SGD", "MCP"): 5,
    ("SGD", "ANP"): 4,
    ("SGD", "A2A"): 6,
    ("MCP", "MCP+"): 0,
    ("MCP", "SGD"): 0,
    ("MCP", "ANP"): 0,
    ("MCP", "A2A"): 1,  # input_schema
    ("ANP", "MCP+"): 0,
    ("ANP", "SGD"): 0,
    ("ANP", "MCP"): 1,  # requires_approval
    ("ANP", "A2A"): 2,  # input_schema, requires_approval
    ("A2A", "MCP+"): 0,
    ("A2A", "SGD"): 0,
    ("A2A", "MCP"): 0,
    ("A2A", "ANP"): 0,
}

BUILTINS = ("MCP+", "SGD", "MCP", "ANP", "A2A")


def builtin_table(rules: list[PairRule] | None = None, **kw: float) -> TranslationTable:
    protocols = [Protocol(n, BUILTIN_FIELDS[n]) for n in BUILTINS]
    return TranslationTable(protocols, rules or [], **kw)


def test_builtin_field_sets_match_spec() -> None:
    assert set(SEMANTIC_FIELDS) == set(EIGHT)
    assert {k: set(v) for k, v in BUILTIN_FIELDS.items()} == SPEC_TABLE


@pytest.mark.parametrize(("pair", "eighths"), sorted(HAND_LOSS.items()))
def test_derived_loss_of_every_builtin_pair(pair: tuple[str, str], eighths: int) -> None:
    p, q = pair
    assert derived_loss(BUILTIN_FIELDS[p], BUILTIN_FIELDS[q]) == eighths / 8
    step = builtin_table().direct(p, q)
    assert step is not None
    assert step.loss == eighths / 8
    assert step.chain == (p, q)
    assert step.dropped == frozenset(SPEC_TABLE[p] - SPEC_TABLE[q])


def test_named_examples() -> None:
    table = builtin_table()

    def loss(p: str, q: str) -> float:
        step = table.direct(p, q)
        assert step is not None
        return step.loss

    assert loss("MCP+", "MCP") == 5 / 8
    assert loss("MCP+", "A2A") == 6 / 8
    assert loss("MCP", "A2A") == 1 / 8
    assert loss("A2A", "MCP") == 0
    assert loss("SGD", "MCP+") == 0


def test_kinds() -> None:
    table = builtin_table([PairRule("ANP", "A2A", destructive=True, fail=0.3)])
    lossless = table.direct("A2A", "MCP")
    lossy = table.direct("MCP+", "MCP")
    annotations_only = table.direct("MCP+", "SGD")  # drops annotations, no semantic loss
    destructive = table.direct("ANP", "A2A")
    assert lossless is not None and lossless.kind is TranslationKind.LOSSLESS
    assert lossless.dropped == frozenset() and lossless.fail == 0.0
    assert lossy is not None and lossy.kind is TranslationKind.LOSSY
    assert annotations_only is not None and annotations_only.loss == 0
    assert annotations_only.kind is TranslationKind.LOSSY
    assert annotations_only.dropped == {"annotations"}
    assert destructive is not None and destructive.kind is TranslationKind.DESTRUCTIVE
    assert destructive.fail == 0.3
    assert destructive.loss == 2 / 8
    assert TranslationKind.LOSSLESS < TranslationKind.LOSSY < TranslationKind.DESTRUCTIVE
    assert TranslationKind.DESTRUCTIVE.label == "destructive"


def test_fail_only_counts_for_destructive_pairs() -> None:
    table = builtin_table([PairRule("ANP", "A2A", fail=0.5)])
    step = table.direct("ANP", "A2A")
    assert step is not None and step.fail == 0.0 and step.kind is TranslationKind.LOSSY


def test_user_defined_protocols() -> None:
    protocols = [
        Protocol("MCP", BUILTIN_FIELDS["MCP"]),
        Protocol("X", frozenset({"name", "description", "summary", "side_effects"})),
        Protocol("Y", frozenset({"name", "annotations"})),
    ]
    table = TranslationTable(protocols)
    assert table.fields("X") == {"name", "description", "summary", "side_effects"}
    with pytest.raises(KeyError):
        table.fields("Z")
    x_mcp = table.direct("X", "MCP")
    mcp_x = table.direct("MCP", "X")
    x_y = table.direct("X", "Y")
    y_mcp = table.direct("Y", "MCP")
    assert x_mcp is not None and x_mcp.loss == 2 / 8  # summary, side_effects
    assert mcp_x is not None and mcp_x.loss == 1 / 8  # input_schema
    assert mcp_x.dropped == {"input_schema", "annotations"}
    assert x_y is not None and x_y.loss == 3 / 8
    assert y_mcp is not None and y_mcp.loss == 0 and y_mcp.kind is TranslationKind.LOSSLESS


def test_forbidden_pair_is_absent_but_reverse_stays() -> None:
    table = builtin_table([PairRule("A2A", "ANP", allowed=False)])
    assert table.direct("A2A", "ANP") is None
    assert table.direct("ANP", "A2A") is not None
    # at a node speaking only the two, there is no chain either
    assert table.tau("A2A", "ANP", frozenset({"A2A", "ANP"})) is None
    # but through a third spoken protocol there is (A2A → MCP → ANP, both lossless)
    tau = table.tau("A2A", "ANP", frozenset({"A2A", "ANP", "MCP"}))
    assert tau == pytest.approx(2 * 0.002)


def test_calibrated_pair_overrides_loss_and_delay() -> None:
    table = builtin_table([PairRule("A2A", "MCP", loss=0.1, delay=0.1)], loss_penalty=2.0)
    step = table.direct("A2A", "MCP")
    assert step is not None
    assert step.loss == 0.1 and step.delay == 0.1
    assert step.kind is TranslationKind.LOSSY  # nothing dropped but a measured loss
    speaks = frozenset({"A2A", "MCP"})
    assert table.tau("A2A", "MCP", speaks) == pytest.approx(0.1 + 2.0 * 0.1)
    # calibrated loss 0 on a pair that drops fields
    table = builtin_table([PairRule("MCP+", "MCP", loss=0.0)])
    assert table.tau("MCP+", "MCP", frozenset({"MCP+", "MCP"})) == pytest.approx(0.002)


def test_delay_precedence_node_then_calibrated_then_default() -> None:
    table = builtin_table([PairRule("A2A", "MCP", delay=0.05)], default_delay=0.003)
    speaks = frozenset({"A2A", "MCP"})
    assert table.tau("A2A", "MCP", speaks, 0.007) == pytest.approx(0.007)  # node wins
    assert table.tau("A2A", "MCP", speaks, 0.0) == pytest.approx(0.0)  # even a zero one
    assert table.tau("A2A", "MCP", speaks) == pytest.approx(0.05)  # then calibrated
    assert table.tau("MCP", "A2A", speaks) == pytest.approx(0.003 + 1 / 8)  # then default
    step = table.direct("A2A", "MCP")
    assert step is not None
    assert table.step_delay(step, None) == 0.05
    assert table.step_delay(step, 0.001) == 0.001


def test_tau_same_protocol_is_zero() -> None:
    table = builtin_table()
    for p in BUILTINS:
        assert table.tau(p, p, frozenset({p})) == 0.0
        assert table.tau(p, p, frozenset(BUILTINS), 5.0) == 0.0


def test_tau_needs_both_ends_spoken() -> None:
    table = builtin_table()
    assert table.tau("A2A", "MCP", frozenset({"A2A"})) is None
    assert ("A2A", "MCP") not in table.chains_at(frozenset({"A2A"}), None)


def test_chain_beats_calibrated_direct_pair_only_through_a_spoken_protocol() -> None:
    protocols = [Protocol(n, frozenset({"name"})) for n in ("A", "B", "C")]
    rules = [
        PairRule("A", "C", loss=0.9, delay=0.5),
        PairRule("A", "B", loss=0.0, delay=0.01),
        PairRule("B", "C", loss=0.05, delay=0.01),
    ]
    table = TranslationTable(protocols, rules, loss_penalty=1.0, default_delay=0.002)
    with_b = table.chains_at(frozenset({"A", "B", "C"}), None)
    cost, chain = with_b[("A", "C")]
    assert chain.chain == ("A", "B", "C")
    assert cost == pytest.approx(0.02 + 0.05)
    assert chain.loss == pytest.approx(0.05)
    assert chain.kind is TranslationKind.LOSSY
    without_b = table.chains_at(frozenset({"A", "C"}), None)
    cost, chain = without_b[("A", "C")]
    assert chain.chain == ("A", "C")
    assert cost == pytest.approx(0.5 + 0.9)
    # a large node delay makes each step expensive: the direct pair wins again
    cost, chain = table.chains_at(frozenset({"A", "B", "C"}), 1.0)[("A", "C")]
    assert chain.chain == ("A", "C")
    assert cost == pytest.approx(1.0 + 0.9)


def _t(
    chain: tuple[str, str],
    loss: float,
    delay: float | None,
    kind: TranslationKind,
    fail: float = 0.0,
    dropped: frozenset[str] = frozenset(),
) -> Transformer:
    return Transformer(chain, loss, delay, kind, fail, dropped)


def test_composition() -> None:
    ab = _t(("A", "B"), 0.25, 0.01, TranslationKind.LOSSY, 0.1, frozenset({"x"}))
    bc = _t(("B", "C"), 0.5, 0.02, TranslationKind.DESTRUCTIVE, 0.2, frozenset({"y"}))
    cd = _t(("C", "D"), 0.5, None, TranslationKind.LOSSLESS)
    ac = ab.then(bc)
    assert ac.chain == ("A", "B", "C")
    assert ac.source == "A" and ac.target == "C"
    assert ac.loss == pytest.approx(0.75)
    assert ac.delay == pytest.approx(0.03)
    assert ac.kind is TranslationKind.DESTRUCTIVE
    assert ac.fail == pytest.approx(1 - 0.9 * 0.8)
    assert ac.dropped == {"x", "y"}
    ad = ac.then(cd)
    assert ad.loss == 1.0  # 1.25 capped
    assert ad.delay == pytest.approx(0.03)
    assert ad.kind is TranslationKind.DESTRUCTIVE
    assert ad.chain == ("A", "B", "C", "D")
    none = _t(("C", "D"), 0.0, None, TranslationKind.LOSSLESS).then(
        _t(("D", "E"), 0.0, None, TranslationKind.LOSSLESS)
    )
    assert none.delay is None and none.kind is TranslationKind.LOSSLESS
    # associativity on what matters
    left = ab.then(bc).then(cd)
    right = ab.then(bc.then(cd))
    assert (left.chain, left.loss, left.kind, left.dropped) == (
        right.chain,
        right.loss,
        right.kind,
        right.dropped,
    )
    assert left.fail == pytest.approx(right.fail)
    with pytest.raises(ValueError):
        ab.then(cd)


def test_chain_loss_is_capped_in_tau() -> None:
    protocols = [Protocol(n, frozenset({"name"})) for n in ("A", "B", "C")]
    rules = [
        PairRule("A", "B", loss=0.8, delay=0.0),
        PairRule("B", "C", loss=0.8, delay=0.0),
        PairRule("A", "C", allowed=False),
    ]
    table = TranslationTable(protocols, rules, loss_penalty=2.0)
    cost, chain = table.chains_at(frozenset({"A", "B", "C"}), None)[("A", "C")]
    assert chain.loss == 1.0
    assert cost == pytest.approx(2.0)  # not 2 × 1.6


# --- properties -----------------------------------------------------------------------

FIELD_POOL = (*EIGHT, "annotations")
NAMES = ("MCP", "MCP+", "A2A", "ANP", "SGD", "X", "Y", "Z")


# The strategies whose arguments never change, built once (a strategy built in each drawing
# is validated again each time); the drawings are the same.
_NAME_SETS = st.lists(st.sampled_from(NAMES), min_size=2, max_size=5, unique=True)
_FIELD_SETS = st.sets(st.sampled_from(FIELD_POOL))
_RULE_KINDS = st.sampled_from(["none", "none", "forbid", "calibrate", "destroy"])
_LOSSES = st.none() | st.floats(0, 1)
_DELAYS = st.none() | st.sampled_from([0.0, 0.001, 0.3]) | st.floats(0, 1)
_FAILS = st.floats(0, 1)
_PENALTIES = st.sampled_from([0.0, 1.0]) | st.floats(0, 10)
_DEFAULT_DELAYS = st.sampled_from([0.0, 0.002]) | st.floats(0, 0.5)


@st.composite
def tables(draw: st.DrawFn) -> tuple[TranslationTable, dict[str, set[str]], dict, float, float]:
    names = draw(_NAME_SETS)
    fields: dict[str, set[str]] = {}
    for n in names:
        if n in SPEC_TABLE and draw(st.booleans()):
            fields[n] = set(SPEC_TABLE[n])
        else:
            fields[n] = set(draw(_FIELD_SETS))
    rules: dict[tuple[str, str], PairRule] = {}
    for p, q in itertools.permutations(names, 2):
        kind = draw(_RULE_KINDS)
        if kind == "forbid":
            rules[(p, q)] = PairRule(p, q, allowed=False)
        elif kind == "calibrate":
            loss = draw(_LOSSES)
            delay = draw(_DELAYS)
            rules[(p, q)] = PairRule(p, q, loss=loss, delay=delay)
        elif kind == "destroy":
            rules[(p, q)] = PairRule(p, q, destructive=True, fail=draw(_FAILS))
    penalty = draw(_PENALTIES)
    default = draw(_DEFAULT_DELAYS)
    protocols = [Protocol(n, frozenset(fields[n])) for n in names]
    table = TranslationTable(
        protocols, list(rules.values()), loss_penalty=penalty, default_delay=default
    )
    return table, fields, rules, penalty, default


def brute_chain(
    source: str,
    target: str,
    speaks: set[str],
    fields: dict[str, set[str]],
    rules: dict[tuple[str, str], PairRule],
    penalty: float,
    default: float,
    node_delay: float | None,
) -> float | None:
    """Cheapest simple chain source → … → target through ``speaks``, from first principles."""
    best: float | None = None

    def step(p: str, q: str) -> tuple[float, float] | None:
        rule = rules.get((p, q))
        if rule is not None and not rule.allowed:
            return None
        if rule is not None and rule.loss is not None:
            loss = rule.loss
        else:
            loss = sum(1 for f in EIGHT if f in fields[p] and f not in fields[q]) / 8
        if node_delay is not None:
            delay = node_delay
        elif rule is not None and rule.delay is not None:
            delay = rule.delay
        else:
            delay = default
        return delay, loss

    def walk(at: str, visited: list[str], delay: float, loss: float) -> None:
        nonlocal best
        for nxt in sorted(speaks):
            if nxt in visited:
                continue
            s = step(at, nxt)
            if s is None:
                continue
            d, lo = delay + s[0], loss + s[1]
            if nxt == target:
                cost = d + penalty * min(1.0, lo)
                best = cost if best is None else min(best, cost)
            else:
                walk(nxt, [*visited, nxt], d, lo)

    walk(source, [source], 0.0, 0.0)
    return best


@settings(max_examples=150, deadline=None)
@given(data=st.data(), built=tables())
def test_chains_at_equals_brute_force(data: st.DataObject, built: tuple) -> None:
    table, fields, rules, penalty, default = built
    speaks = data.draw(st.sets(st.sampled_from(table.names), min_size=1))
    node_delay = data.draw(st.none() | st.sampled_from([0.0, 0.004]) | st.floats(0, 1))
    chains = table.chains_at(frozenset(speaks), node_delay)
    for p, q in itertools.permutations(table.names, 2):
        expected = (
            brute_chain(p, q, speaks, fields, rules, penalty, default, node_delay)
            if p in speaks and q in speaks
            else None
        )
        tau = table.tau(p, q, frozenset(speaks), node_delay)
        if expected is None:
            assert (p, q) not in chains
            assert tau is None
            continue
        cost, chain = chains[(p, q)]
        assert cost == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert tau == cost
        # the chain itself is valid and its cost is what it claims
        assert chain.source == p and chain.target == q
        assert len(set(chain.chain)) == len(chain.chain)
        assert set(chain.chain) <= speaks
        delays = 0.0
        loss = 0.0
        worst = TranslationKind.LOSSLESS
        for a, b in itertools.pairwise(chain.chain):
            one = table.direct(a, b)
            assert one is not None
            delays += table.step_delay(one, node_delay)
            loss += one.loss
            worst = max(worst, one.kind)
        assert chain.loss == pytest.approx(min(1.0, loss))
        assert chain.kind == worst
        assert cost == pytest.approx(delays + penalty * min(1.0, loss), rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), built=tables())
def test_tau_triangle_inequality(data: st.DataObject, built: tuple) -> None:
    table = built[0]
    speaks = frozenset(data.draw(st.sets(st.sampled_from(table.names), min_size=1)))
    node_delay = data.draw(st.none() | st.floats(0, 1))
    for p, q, r in itertools.product(table.names, repeat=3):
        pq = table.tau(p, q, speaks, node_delay)
        qr = table.tau(q, r, speaks, node_delay)
        if pq is None or qr is None:
            continue
        pr = table.tau(p, r, speaks, node_delay)
        assert pr is not None
        assert pr <= pq + qr + 1e-12 * max(1.0, pq + qr)
        assert math.isfinite(pr) and pr >= 0
