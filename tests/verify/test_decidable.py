"""Which formulas ``verify`` decides (``sim.verify.decidable``): a verdict on the model's
events must carry over to a trace that has more events between them (translations,
reroutes, messages), so only insertion-invariant formulas are decided."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.cli import main
from sim.properties.ast import Atom, Binary, Const, Formula, Not, Unary
from sim.properties.parse import parse
from sim.properties.semantics import compile_formula, evaluate
from sim.verify.decidable import insertion_invariant

ATOMS = [Atom("call"), Atom("result")]


def formulas() -> st.SearchStrategy[Formula]:
    leaves = st.sampled_from([*ATOMS, Const(True), Const(False)])
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.builds(Not, sub),
            st.builds(Unary, st.sampled_from(["X", "F", "G", "Y", "O", "H"]), sub),
            st.builds(Binary, st.sampled_from(["&", "|", "->", "<->", "U", "S"]), sub, sub),
        ),
        max_leaves=6,
    )


def verdict(formula: Formula, masks: list[int]) -> bool:
    program = compile_formula(formula, list(ATOMS))
    return evaluate(program, masks, [float(i) for i in range(len(masks))])[program.root][0]


def inserted(masks: list[int], where: list[int]) -> list[int]:
    """``masks`` with an atom-free event (mask 0) after each position in ``where``."""
    out: list[int] = []
    for i, m in enumerate(masks):
        out.append(m)
        out.extend([0] * where.count(i))
    return out


@given(
    formulas(),
    st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=7),
    st.lists(st.integers(0, 6), max_size=4),
)
def test_an_invariant_formula_keeps_its_verdict_when_events_are_inserted(
    formula: Formula, masks: list[int], where: list[int]
) -> None:
    """masks: 1 a call, 2 a result, 0 another modelled event; insertions after the
    first event (the scope's opening one is always modelled)."""
    if insertion_invariant(formula):
        assert verdict(formula, masks) == verdict(formula, inserted(masks, where)), formula


@pytest.mark.parametrize(
    ("text", "masks", "where"),
    [
        ("G (result -> Y call)", [1, 2], [0]),  # a translate between call and result
        ("X result", [1, 2], [0]),
        ("G (call | result)", [1, 2], [0]),  # an inserted event is neither
        ("call U result", [1, 1, 2], [1]),
        ("G F result", [1, 2], [1]),  # a late event after the last result
    ],
)
def test_a_formula_an_inserted_event_changes_is_not_decided(
    text: str, masks: list[int], where: list[int]
) -> None:
    formula = parse(text)
    assert verdict(formula, masks) != verdict(formula, inserted(masks, where))
    assert not insertion_invariant(formula)


@pytest.mark.parametrize(
    "text",
    [
        "G (execute(side_effects={write,delete}) -> Y (!execute S approve))",
        "G !(O execute(a) & O execute(b))",
        "G (call -> F (result | prompt | deny))",
        "F execute(pay)",
        "G (wf_end(detail.status=succeeded) -> O result(pay))",
        "G !abort",
        "!result S call",
    ],
)
def test_the_usual_shapes_are_decided(text: str) -> None:
    assert insertion_invariant(parse(text))


@pytest.mark.parametrize("label", ["hop", "translate", "reroute", "node_down"])
def test_an_atom_on_an_event_the_model_leaves_out_is_not_decided(label: str) -> None:
    assert not insertion_invariant(parse(f"G !{label}"))


def test_verify_says_why_it_does_not_decide_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.harness.verify_runs import TRAIN, verdicts, verify

    props = tmp_path / "props.yaml"
    props.write_text(
        "- {name: no-plain-hop, scope: invocation, formula: 'G !hop(proto=MCP)'}\n"
        "- {name: result-after-call, scope: invocation, formula: 'G (result -> Y execute)'}\n"
        "- {name: answered, scope: invocation, formula: 'call -> F (result | prompt | deny)'}\n"
    )
    names = ["no-plain-hop", "result-after-call", "answered"]
    args = [TRAIN, "--router", "dijkstra", "--properties", str(props)]
    for name in names:
        args += ["--property", name]
    _, obj, _ = verify(capsys, *args)
    got = verdicts(obj)
    assert got[("book", "no-plain-hop")]["verdict"] == "not-decidable"
    assert got[("book", "result-after-call")]["verdict"] == "not-decidable"
    assert got[("book", "answered")]["verdict"] in ("holds", "violated")
    capsys.readouterr()
    main(["verify", *args])
    text = capsys.readouterr().out
    assert "hop events are not in the untimed model" in text
    assert "leaves out between the ones it keeps" in text
