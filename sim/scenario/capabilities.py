"""Capability matching (SPEC §3): token vectors and their cosine similarity.

Used by the semantic router to rank candidates and by the scenario rules to warn
about a task whose capability no agent offers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

_TOKEN_SPLIT = re.compile(r"[_\-./:\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def tokens(text: str) -> list[str]:
    """Split on ``_ - . / :`` and whitespace and at camelCase boundaries; lower-case."""
    out: list[str] = []
    for part in _TOKEN_SPLIT.split(text):
        out.extend(t.lower() for t in _CAMEL.split(part) if t)
    return out


def cosine(a: Iterable[str], b: Iterable[str]) -> float:
    """Cosine similarity of two bags of tokens (0 when either is empty)."""
    ca, cb = Counter(a), Counter(b)
    dot = sum(ca[t] * cb[t] for t in ca.keys() & cb.keys())
    if dot == 0:
        return 0.0
    return dot / math.sqrt(sum(v * v for v in ca.values()) * sum(v * v for v in cb.values()))


def similarity(capability: str, capabilities: Iterable[str]) -> float:
    """sim(capability, caps(a)): the cosine of the capability's tokens against the bag of
    tokens of all of an agent's capabilities."""
    return cosine(tokens(capability), [t for cap in capabilities for t in tokens(cap)])
