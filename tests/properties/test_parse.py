"""The SPEC §9 formula parser: precedence, bounds, atoms, and every located error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.properties.ast import Atom, Binary, Condition, Const, Formula, Not, Unary
from sim.properties.parse import FormulaError, ToolAttributes, parse
from sim.properties.semantics import _strip

TOOLS = {
    "book_train": ToolAttributes("write", True),
    "fetch_user": ToolAttributes("read", False),
}


def _shape(f: Formula) -> object:
    return _strip(f)


def test_precedence_unary_over_until_over_boolean() -> None:
    f = parse("! F call U result & deny | abort -> skip <-> list")
    # ((((!(F call)) U result) & deny) | abort) -> skip) <-> list
    assert isinstance(f, Binary) and f.op == "<->"
    imp = f.left
    assert isinstance(imp, Binary) and imp.op == "->"
    disj = imp.left
    assert isinstance(disj, Binary) and disj.op == "|"
    conj = disj.left
    assert isinstance(conj, Binary) and conj.op == "&"
    until = conj.left
    assert isinstance(until, Binary) and until.op == "U"
    assert isinstance(until.left, Not) and isinstance(until.left.sub, Unary)


def test_implication_and_until_are_right_associative() -> None:
    f = parse("call -> result -> deny")
    assert isinstance(f, Binary) and isinstance(f.right, Binary) and f.right.op == "->"
    g = parse("call U result U deny")
    assert isinstance(g, Binary) and isinstance(g.right, Binary) and g.right.op == "U"
    h = parse("call & result & deny")
    assert isinstance(h, Binary) and isinstance(h.left, Binary) and h.left.op == "&"


def test_bounds_on_every_boundable_operator() -> None:
    for op in ("F", "G", "O", "H"):
        f = parse(f"{op}[<=2.5] call")
        assert isinstance(f, Unary) and f.op == op and f.bound == 2.5
    for op in ("U", "S"):
        f = parse(f"call {op}[<=10] result")
        assert isinstance(f, Binary) and f.bound == 10.0
    assert parse("F[<=0] call") == Unary("F", Atom("call", (), 7), 0.0, 0)


def test_atoms_with_positional_tool_keys_and_values() -> None:
    f = parse(
        "execute(book_train, agent=tickets, proto=MCP+, detail.attempt=2, "
        'side_effects={write, delete}, requires_approval=true, wf="book")',
        tools=TOOLS,
    )
    assert isinstance(f, Atom)
    assert [(c.key, c.value) for c in f.conditions] == [
        ("tool", "book_train"),
        ("agent", "tickets"),
        ("proto", "MCP+"),
        ("detail.attempt", 2),
        ("side_effects", frozenset({"write", "delete"})),
        ("requires_approval", True),
        ("wf", "book"),
    ]
    assert parse("true") == Const(True, 0) and parse("false") == Const(False, 0)
    assert parse("wf_end(detail.status=failed)") == Atom(
        "wf_end", (Condition("detail.status", "failed", 7),), 0
    )


# (formula, line, column, words in the message)
ERRORS = [
    ("G (call -> F[<=30] result", 1, 3, "unbalanced parenthesis: `(` is never closed"),
    ("G call -> result)", 1, 17, "unbalanced parenthesis: `)` closes nothing"),
    ("G (exec -> result)", 1, 4, "unknown label 'exec'"),
    ("F executed", 1, 3, "unknown label 'executed' (did you mean 'execute'?)"),
    ("F execute(book_trian)", 1, 11, "unknown tool 'book_trian' (did you mean 'book_train'?)"),
    ("F execute(tool={book_train, nope})", 1, 16, "unknown tool 'nope'"),
    ("F execute(colour=red)", 1, 11, "unknown key 'colour'"),
    ("F execute(detail.satus=x)", 1, 11, "unknown key 'detail.satus'"),
    ("F[<=-1] call", 1, 5, "the bound of `F` must be a non-negative number of seconds, not `-1`"),
    ("call U[<=soon] result", 1, 10, "must be a non-negative number of seconds, not `soon`"),
    ("F[<30] call", 1, 3, "expected `<=`"),
    ("G (call -> )", 1, 9, "operator `->` without a right operand"),
    ("call &", 1, 6, "operator `&` without a right operand (got the end of the formula)"),
    ("G", 1, 1, "operator `G` without an operand"),
    ("!", 1, 1, "operator `!` without an operand"),
    ("| call", 1, 1, "operator `|` without a left operand"),
    ("U call", 1, 1, "operator `U` without a left operand"),
    ("call call", 1, 6, "expected an operator, got `call`"),
    ("", 1, 1, "empty formula"),
    ("F execute(side_effects=paint)", 1, 24, "side_effects is one of none, read, write, delete"),
    ("F call(requires_approval=3)", 1, 26, "requires_approval is true or false"),
    ("F call #", 1, 8, "unexpected character '#'"),
    ("G (call ->\n   F[<=-1] result)", 2, 8, "non-negative"),
]


@pytest.mark.parametrize(("text", "line", "column", "needle"), ERRORS)
def test_each_error_is_located_at_the_offending_token(
    text: str, line: int, column: int, needle: str
) -> None:
    with pytest.raises(FormulaError) as info:
        parse(text, tools=TOOLS)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert needle in err.message, err.message
    assert str(err).startswith(f"{line}:{column}: ")


def test_any_tool_name_passes_without_a_tool_table() -> None:
    assert isinstance(parse("F execute(whatever)"), Unary)


_atoms = st.sampled_from(["call", "execute(book_train)", "approve", "result", "true", "false"])


def _formulas() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        bound = st.sampled_from(["", "[<=3]", "[<=0.5]"])
        unary = st.tuples(st.sampled_from(["!", "X ", "F", "G", "Y ", "O", "H"]), bound, inner)
        binary = st.tuples(inner, st.sampled_from(["&", "|", "->", "<->", "U", "S"]), bound, inner)
        return st.one_of(
            unary.map(lambda u: f"{u[0]}{u[1] if u[0].strip() in 'FGOH' else ''} ({u[2]})"),
            binary.map(lambda b: f"({b[0]}) {b[1]}{b[2] if b[1] in ('U', 'S') else ''} ({b[3]})"),
        )

    return st.recursive(_atoms, extend, max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(_formulas())
def test_printing_a_formula_parses_back_to_the_same_formula(text: str) -> None:
    f = parse(text, tools=TOOLS)
    assert _shape(parse(str(f), tools=TOOLS)) == _shape(f)
