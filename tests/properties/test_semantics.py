"""LTLf with past and bounds: the compiled evaluators against the textbook definitions.

A reference evaluator written straight from SPEC §9's definitions (recursive, quadratic)
decides random formulas on random timed traces; the column evaluator (``evaluate``) and
the streaming one (``PastState``) must agree with it at every position."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.properties.ast import Atom, Binary, Const, Formula, Not, Unary, has_bound, is_past
from sim.properties.parse import parse
from sim.properties.semantics import PastAutomaton, PastState, compile_formula, evaluate

LABELS = ("call", "approve", "execute", "result")
Trace = list[tuple[str, float]]


def holds(f: Formula, w: Trace, i: int) -> bool:
    """SPEC §9's semantics, definition by definition."""
    n = len(w)
    t = [e[1] for e in w]
    if isinstance(f, Const):
        return f.value
    if isinstance(f, Atom):
        return w[i][0] == f.label
    if isinstance(f, Not):
        return not holds(f.sub, w, i)
    if isinstance(f, Unary):
        b = f.bound

        def near(j: int) -> bool:
            return b is None or abs(t[j] - t[i]) <= b

        future = range(i, n)
        past = range(0, i + 1)
        if f.op == "X":
            return i + 1 < n and holds(f.sub, w, i + 1)
        if f.op == "Y":
            return i > 0 and holds(f.sub, w, i - 1)
        if f.op == "F":
            return any(holds(f.sub, w, j) for j in future if near(j))
        if f.op == "G":
            return all(holds(f.sub, w, j) for j in future if near(j))
        if f.op == "O":
            return any(holds(f.sub, w, j) for j in past if near(j))
        assert f.op == "H"
        return all(holds(f.sub, w, j) for j in past if near(j))
    assert isinstance(f, Binary)
    a, c = f.left, f.right
    if f.op == "&":
        return holds(a, w, i) and holds(c, w, i)
    if f.op == "|":
        return holds(a, w, i) or holds(c, w, i)
    if f.op == "->":
        return (not holds(a, w, i)) or holds(c, w, i)
    if f.op == "<->":
        return holds(a, w, i) == holds(c, w, i)
    b = f.bound
    if f.op == "U":
        return any(
            holds(c, w, j)
            and (b is None or t[j] - t[i] <= b)
            and all(holds(a, w, k) for k in range(i, j))
            for j in range(i, n)
        )
    assert f.op == "S"
    return any(
        holds(c, w, j)
        and (b is None or t[i] - t[j] <= b)
        and all(holds(a, w, k) for k in range(j + 1, i + 1))
        for j in range(0, i + 1)
    )


def _formula(past_only: bool) -> st.SearchStrategy[str]:
    unary_ops = ["!", "Y ", "O", "H"] + ([] if past_only else ["X ", "F", "G"])
    binary_ops = ["&", "|", "->", "<->", "S"] + ([] if past_only else ["U"])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        bound = st.sampled_from(["", "", "[<=1]", "[<=2.5]", "[<=0]"])
        unary = st.tuples(st.sampled_from(unary_ops), bound, inner).map(
            lambda u: f"{u[0]}{u[1] if u[0] in 'FGOH' else ''} ({u[2]})"
        )
        binary = st.tuples(inner, st.sampled_from(binary_ops), bound, inner).map(
            lambda b: f"({b[0]}) {b[1]}{b[2] if b[1] in 'US' else ''} ({b[3]})"
        )
        return st.one_of(unary, binary)

    leaves = st.sampled_from([*LABELS, "true", "false"])
    return st.recursive(leaves, extend, max_leaves=6)


_traces = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from([0.0, 0.5, 1.0, 1.5, 3.0])),
    min_size=1,
    max_size=9,
).map(lambda es: [(lab, t) for (lab, _), t in zip(es, sorted(t for _, t in es), strict=True)])


def _masks(w: Trace, atoms: tuple[Atom, ...]) -> list[int]:
    return [sum(1 << k for k, a in enumerate(atoms) if a.label == lab) for lab, _ in w]


@settings(max_examples=400, deadline=None)
@given(_formula(past_only=False), _traces)
def test_evaluate_agrees_with_the_definitions_at_every_position(text: str, w: Trace) -> None:
    f = parse(text)
    program = compile_formula(f)
    cols = evaluate(program, _masks(w, program.atoms), [t for _, t in w])
    assert cols[program.root] == [holds(f, w, i) for i in range(len(w))], text


@settings(max_examples=400, deadline=None)
@given(_formula(past_only=True), _traces)
def test_stepping_a_past_formula_agrees_with_the_definitions(text: str, w: Trace) -> None:
    f = parse(text)
    assert is_past(f)
    program = compile_formula(f)
    want = [holds(f, w, i) for i in range(len(w))]
    masks = _masks(w, program.atoms)
    for runner in (PastState(program), PastAutomaton(program), PastAutomaton(program)):
        for _ in range(2):  # the second time, an automaton looks its transitions up
            state, got = runner.initial(), []
            for m, (_, t) in zip(masks, w, strict=True):
                state, value = runner.advance(state, m, t)
                got.append(value)
            if isinstance(runner, PastAutomaton) and has_bound(f):
                break  # an automaton ignores time: only unbounded formulas apply
            assert got == want, (text, type(runner).__name__)


def test_bounded_response_counts_simulated_seconds() -> None:
    f = parse("G (call -> F[<=30] result)")
    program = compile_formula(f)
    w_ok: Trace = [("call", 0.0), ("result", 30.0)]
    w_late: Trace = [("call", 0.0), ("result", 30.001)]
    for w, want in ((w_ok, True), (w_late, False)):
        cols = evaluate(program, _masks(w, program.atoms), [t for _, t in w])
        assert cols[program.root][0] is want


def test_strong_next_and_previous_are_false_at_the_ends() -> None:
    for text, want in (("X true", False), ("Y true", False), ("!Y true", True)):
        program = compile_formula(parse(text))
        assert evaluate(program, [0], [0.0])[program.root] == [want]
