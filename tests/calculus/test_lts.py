"""The LTS type: labels, stepping, traces, operators and the Aldebaran format."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.calculus.bisim import bisimilar
from sim.calculus.lts import (
    LTS,
    TAU,
    AutFormatError,
    accepts,
    hide,
    label,
    parallel,
    parse_label,
    read_aut,
    relabel,
    restrict,
    traces,
    write_aut,
)
from sim.calculus.theorems import hide_approval

# call(n) . τ . (approve . execute . result | deny)
GATED = LTS(
    6,
    0,
    [
        (0, "call(t)", 1),
        (1, TAU, 2),
        (2, "approve(t)", 3),
        (2, "deny(t)", 5),
        (3, "execute(t)", 4),
        (4, "result(t)", 5),
    ],
)


@cache
def _edges(n: int, labels: str) -> st.SearchStrategy[list[tuple[int, str, int]]]:
    """Up to 3n transitions over n states and ``labels`` plus τ (built once per n and
    labels: a strategy built in each drawing is validated again each time)."""
    alphabet = [*labels, TAU]
    return st.lists(
        st.tuples(st.integers(0, n - 1), st.sampled_from(alphabet), st.integers(0, n - 1)),
        max_size=3 * n,
    )


@st.composite
def random_lts(draw: st.DrawFn, max_states: int = 8, labels: str = "abc") -> LTS:
    """A random LTS over ``labels`` plus τ."""
    n = draw(st.integers(1, max_states))
    edges = draw(_edges(n, labels))
    return LTS(n, draw(st.integers(0, n - 1)), edges)


def test_label_grammar_round_trip() -> None:
    lab = label("error", "book_train", "ServiceDown")
    assert lab == "error(book_train,ServiceDown)"
    assert parse_label(lab) == ("error", ("book_train", "ServiceDown"))
    assert parse_label("confirm") == ("confirm", ())
    assert label("call", "Banks_1__CheckBalance") is label("call", "Banks_1__CheckBalance")


@pytest.mark.parametrize("bad", ["Call(x)", "call(x", "call(a(b))", 'call("x")', ""])
def test_parse_label_rejects_text_outside_the_grammar(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_label(bad)


@pytest.mark.parametrize("arg", ["a,b", "a b", "(x)", ""])
def test_label_rejects_bad_arguments(arg: str) -> None:
    with pytest.raises(ValueError):
        label("call", arg)


def test_enabled_and_step_are_precomputed_lookups() -> None:
    assert GATED.enabled(2) == (("approve(t)", 3), ("deny(t)", 5))
    assert GATED.step(2, "deny(t)") == 5
    assert GATED.step(2, "execute(t)") is None
    assert GATED.is_final(5) and not GATED.is_final(0)
    assert GATED.successors(1, TAU) == (2,)


def test_constructor_rejects_bad_states() -> None:
    with pytest.raises(ValueError):
        LTS(0, 0, [])
    with pytest.raises(ValueError):
        LTS(2, 2, [])
    with pytest.raises(ValueError):
        LTS(2, 0, [(0, "a", 5)])
    with pytest.raises(ValueError):
        LTS(2, 0, [], names=["only one"])


def test_traces_and_acceptance_absorb_tau() -> None:
    assert accepts(GATED, ["call(t)", "approve(t)", "execute(t)", "result(t)"])
    assert accepts(GATED, ["call(t)", "deny(t)"])
    assert not accepts(GATED, ["call(t)", "execute(t)"])
    assert not accepts(GATED, ["call(t)", "approve(t)"], weak=False)
    assert accepts(GATED, ["call(t)", TAU, "approve(t)"], weak=False)
    assert ("call(t)", "deny(t)") in traces(GATED, 4)
    assert max(len(t) for t in traces(GATED, 2)) == 2


def test_hide_relabel_restrict() -> None:
    hidden = hide(GATED, {"approve(t)"})
    assert accepts(hidden, ["call(t)", "execute(t)", "result(t)"])
    renamed = relabel(GATED, {"call(t)": "invoke(t)"})
    assert renamed.step(0, "invoke(t)") == 1
    cut = restrict(GATED, {"approve(t)"})
    assert cut.n_states == 4  # execute and its successor became unreachable
    assert not accepts(cut, ["call(t)", "execute(t)"])


def test_parallel_synchronises_only_on_the_sync_set() -> None:
    left = LTS(2, 0, [(0, "a", 1)])
    right = LTS(3, 0, [(0, "a", 1), (1, "b", 2)])
    both = parallel(left, right, sync={"a"})
    assert traces(both, 3) == {(), ("a",), ("a", "b")}
    free = parallel(left, right)
    assert ("a", "a", "b") in traces(free, 3)


def test_hide_approval_is_composition_with_a_granting_approver() -> None:
    """Hiding = (P ∥ Grant) \\ {deny}, approve hidden: the CCS reading of the renaming."""
    grant = LTS(1, 0, [(0, "approve(t)", 0)])
    composed = hide(
        restrict(parallel(GATED, grant, {"approve(t)", "deny(t)"}), {"deny(t)"}), {"approve(t)"}
    )
    assert bisimilar(composed, hide_approval(GATED)).equivalent
    anyone = LTS(1, 0, [(0, "approve(t)", 0), (0, "deny(t)", 0)])
    composed_deny = hide(
        parallel(GATED, anyone, {"approve(t)", "deny(t)"}), {"approve(t)", "deny(t)"}
    )
    assert bisimilar(composed_deny, hide_approval(GATED, deny=True)).equivalent


def test_aut_text_is_the_aldebaran_format() -> None:
    text = write_aut(GATED)
    lines = text.splitlines()
    assert lines[0] == "des (0, 6, 6)"
    assert '(1,"tau",2)' in lines
    assert '(0,"call(t)",1)' in lines


def test_read_aut_accepts_unquoted_labels_and_i_is_visible_in_mcrl2() -> None:
    text = "des (0, 2, 3)\n(0, a, 1)\n(1, i, 2)\n"
    lts = read_aut(text)
    assert lts.enabled(0) == (("a", 1),)
    assert lts.enabled(1) == (("i", 2),)  # mCRL2: i is an action like any other
    assert read_aut(text, "cadp").enabled(1) == ((TAU, 2),)  # CADP: i is internal
    assert read_aut(text, "cadp").enabled(0) == (("a", 1),)


def test_multi_actions_are_multisets() -> None:
    left = read_aut('des (0, 1, 2)\n(0, "a|b", 1)\n')
    right = read_aut('des (0, 1, 2)\n(0, "b | a", 1)\n')
    assert left == right and left.enabled(0) == (("a|b", 1),)
    assert bisimilar(left, right, weak=False).equivalent
    assert not bisimilar(left, read_aut('des (0, 1, 2)\n(0, "a|a", 1)\n')).equivalent


def test_unknown_aut_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="mcrl2"):
        read_aut("des (0, 0, 1)\n", "aldebaran")  # type: ignore[arg-type]


@given(random_lts())
@settings(max_examples=60, deadline=None)
def test_aut_round_trip_is_identity(lts: LTS) -> None:
    assert read_aut(write_aut(lts)) == lts


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 1, "empty"),
        ("des (0, 1)\n", 1, "expected 'des"),
        ("des (5, 0, 2)\n", 1, "initial state"),
        ('des (0, 1, 2)\n(0,"a" 1)\n', 2, "expected"),
        ('des (0, 1, 2)\n(0,"a",7)\n', 2, "out of range"),
        ('des (0, 2, 2)\n(0,"a",1)\n', 1, "header says 2"),
        ('des (0, 1, 2)\n(0,"",1)\n', 2, "empty label"),
    ],
)
def test_read_aut_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(AutFormatError) as info:
        read_aut(text)
    assert info.value.line == line
    assert words in str(info.value)


def test_every_public_definition_of_the_calculus_cites_the_paper() -> None:
    """Public functions and classes cite the section they implement (§...); public methods
    have docstrings."""
    import importlib
    import inspect

    missing: list[str] = []
    import pkgutil

    import sim.calculus

    for info in pkgutil.walk_packages(sim.calculus.__path__, "sim.calculus."):
        name = info.name.removeprefix("sim.calculus.")
        module = importlib.import_module(info.name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if "§" not in (inspect.getdoc(obj) or ""):
                missing.append(f"{name}.{attr}")
            if inspect.isclass(obj):
                for meth, member in vars(obj).items():
                    if meth.startswith("_"):
                        continue
                    fn = getattr(member, "__func__", None) or getattr(member, "fget", member)
                    if callable(fn) and not inspect.getdoc(fn):
                        missing.append(f"{name}.{attr}.{meth}")
    assert missing == []
