"""Invariants of the pieces ``serve`` builds on: simulated structured output and the sealed
``requestState`` of the 2026-07-28 approval round trip."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sim.interop.elicitation import Refused, StateSeal
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
    other = "issued for another call (its tool or arguments differ)"
    assert seal.open(token, tool, {**args, "extra": 1}) == Refused(other)
    assert seal.open(token, tool + "x", args) == Refused(other)
    assert StateSeal(b"j" * 32).open(token, tool, args) == Refused("not issued by this server")
    i = where % len(token)
    if token[i] != char:
        assert isinstance(seal.open(token[:i] + char + token[i + 1 :], tool, args), Refused)
    assert seal.open(token, tool, args) == inv  # the refusals left it unused
    again = seal.open(token, tool, args)
    assert again == Refused("already used: one approval answers one call", replayed=True)


def test_outstanding_states_are_bounded_in_number_and_age(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.interop import elicitation

    monkeypatch.setattr(elicitation, "MAX_OUTSTANDING", 2)
    seal = StateSeal(b"k" * 32)
    first, second, third = (seal.seal(i, "t", {}) for i in range(3))
    held = Refused("no longer held (at most 2 approvals wait for an answer)")
    assert seal.open(first, "t", {}) == held  # the oldest was dropped
    assert seal.open(third, "t", {}) == 2
    now = elicitation.time.time()
    monkeypatch.setattr(elicitation.time, "time", lambda: now + elicitation.STATE_TTL + 1)
    assert seal.open(second, "t", {}) == Refused("expired (a state is answered within 600 s)")


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
    twin = seal.open(head + twins[0] + pad, "book_train", {"date": "2026-12-01"})
    assert twin == Refused("not issued by this server")
    assert seal.open(token, "book_train", {"date": "2026-12-01"}) == 3
