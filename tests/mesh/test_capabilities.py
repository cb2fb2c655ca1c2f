"""Capability matching: bags of tokens compared by cosine (sim.mesh.capabilities.py)."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from sim.mesh.capabilities import bag, bag_cosine, cosine

TOKENS = st.lists(st.sampled_from(("book", "train", "hotel", "pay", "x")), max_size=6)


@given(TOKENS, TOKENS)
def test_cosine_is_the_one_root_formula_to_the_last_bit(a: list[str], b: list[str]) -> None:
    """Bags made once give the float the rankings always had: dot / sqrt(|a|² |b|²)."""
    ca, cb = Counter(a), Counter(b)
    dot = sum(ca[t] * cb[t] for t in ca)
    squares = sum(v * v for v in ca.values()) * sum(v * v for v in cb.values())
    expected = dot / math.sqrt(squares) if dot else 0.0
    assert cosine(a, b) == expected
    assert bag_cosine(bag(b), bag(a)) == bag_cosine(bag(a), bag(b)) == expected


def test_empty_bags_match_nothing() -> None:
    assert cosine([], ["train"]) == cosine(["train"], []) == 0.0
