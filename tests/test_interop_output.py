"""Invariants of the pieces ``serve`` builds on: simulated structured output and the sealed
``requestState`` of the 2026-07-28 approval round trip."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sim.interop.elicitation import StateSeal
from sim.interop.output import structured_output

NAMES = st.text("abcdefgh", min_size=1, max_size=6)
LEAVES = st.one_of(
    st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 5)),
    st.builds(lambda lo: {"type": "integer", "minimum": lo}, st.integers(-5, 5)),
    st.builds(lambda lo: {"type": "number", "exclusiveMinimum": lo}, st.integers(-5, 5)),
    st.just({"type": "boolean"}),
    st.just({"type": "string", "format": "date-time"}),
    st.builds(lambda xs: {"enum": xs}, st.lists(st.integers(), min_size=1, max_size=3)),
)


def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


SCHEMAS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.dictionaries(NAMES, inner, max_size=4).map(_object),
        st.builds(
            lambda s, n: {"type": "array", "items": s, "minItems": n}, inner, st.integers(0, 2)
        ),
        st.builds(  # disjoint keys: one key typed two ways by two objects is unsatisfiable
            lambda a, b: {"allOf": [a, b]},
            st.dictionaries(NAMES.map("l".__add__), inner, max_size=2).map(_object),
            st.dictionaries(NAMES.map("r".__add__), inner, max_size=2).map(_object),
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(SCHEMAS, st.booleans())
def test_an_instance_of_every_simple_schema_validates(schema: dict[str, Any], by_ref: bool) -> None:
    """Within the keywords it understands (types, bounds, formats, enums, required,
    allOf, local $ref) an instance is always found, and it validates."""
    if by_ref:  # the same schema behind a local reference, as mcp-server-time writes it
        schema = {"$ref": "#/$defs/Out", "$defs": {"Out": schema}}
    value, why = structured_output(schema)
    assert why == ""
    assert list(Draft202012Validator(schema).iter_errors(value)) == []


def test_a_schema_it_cannot_satisfy_says_why() -> None:
    value, why = structured_output({"type": "string", "pattern": "^[0-9]+$"})
    assert value is None
    assert why == "no simple instance satisfies it ('' does not match '^[0-9]+$' at the top level)"
    assert structured_output({"type": 12})[1].startswith("the outputSchema is not a valid")


ARGS = st.dictionaries(NAMES, st.one_of(st.integers(), st.text(max_size=5)), max_size=3)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), NAMES, ARGS, st.integers(0, 200), st.sampled_from("AbQz-_=."))
def test_a_sealed_state_opens_only_for_its_call(
    inv: int, tool: str, args: dict[str, Any], where: int, char: str
) -> None:
    seal = StateSeal(b"k" * 32)
    token = seal.seal(inv, tool, args)
    assert seal.open(token, tool, args) == inv
    assert seal.open(token, tool, {**args, "extra": 1}) is None
    assert seal.open(token, tool + "x", args) is None
    assert StateSeal(b"j" * 32).open(token, tool, args) is None
    i = where % len(token)
    if token[i] != char:
        assert seal.open(token[:i] + char + token[i + 1 :], tool, args) is None


def test_a_state_spelled_otherwise_is_refused() -> None:
    """Base64 has several spellings of the same bytes (the unused low bits of the last
    character): a token is valid only as it was issued."""
    import base64
    import string

    seal = StateSeal(b"k" * 32)
    token = seal.seal(3, "book_train", {"date": "2026-12-01"})
    head, last, pad = token[:-2], token[-2], token[-1]
    assert pad == "="
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
    twins = [
        c
        for c in alphabet
        if c != last
        and base64.urlsafe_b64decode((head + c + pad).split(".")[1])
        == base64.urlsafe_b64decode(token.split(".")[1])
    ]
    assert twins  # the same MAC bytes, spelled otherwise
    assert seal.open(token, "book_train", {"date": "2026-12-01"}) == 3
    assert seal.open(head + twins[0] + pad, "book_train", {"date": "2026-12-01"}) is None
