"""Capability matching (SPEC §3): token vectors and their cosine similarity.

Used by the semantic router to rank candidates and by the scenario rules to warn
about a task whose capability no agent offers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

_TOKEN_SPLIT = re.compile(r"[_\-./:\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def tokens(text: str) -> list[str]:
    """Split on ``_ - . / :`` and whitespace and at camelCase boundaries; lower-case."""
    out: list[str] = []
    for part in _TOKEN_SPLIT.split(text):
        out.extend(t.lower() for t in _CAMEL.split(part) if t)
    return out


class Bag(NamedTuple):
    """A bag of tokens and the sum of its squared counts (0 when empty)."""

    counts: Counter[str]
    squares: int


def bag(tokens_: Iterable[str]) -> Bag:
    """The bag of ``tokens_``, made once where it is compared many times."""
    counts = Counter(tokens_)
    return Bag(counts, sum(v * v for v in counts.values()))


def bag_cosine(a: Bag, b: Bag) -> float:
    """Cosine similarity of two bags (0 when either is empty)."""
    ca, cb = a.counts, b.counts
    if len(cb) < len(ca):
        ca, cb = cb, ca
    dot = sum(v * cb[t] for t, v in ca.items() if t in cb)
    if dot == 0:
        return 0.0
    return dot / math.sqrt(a.squares * b.squares)  # as one root: the same float as before


def cosine(a: Iterable[str], b: Iterable[str]) -> float:
    """Cosine similarity of two bags of tokens (0 when either is empty)."""
    return bag_cosine(bag(a), bag(b))


def capability_bag(capabilities: Iterable[str]) -> Bag:
    """The bag of tokens of all of an agent's capabilities (caps(a))."""
    return bag([t for cap in capabilities for t in tokens(cap)])


def similarity(capability: str, capabilities: Iterable[str]) -> float:
    """sim(capability, caps(a)): the cosine of the capability's tokens against the bag of
    tokens of all of an agent's capabilities."""
    return bag_cosine(bag(tokens(capability)), capability_bag(capabilities))
