"""How many counterexamples a check (SPEC §6) or a property (SPEC §9) keeps of one trace,
and which: the earliest :data:`KEEP_COUNTEREXAMPLES` by ``seq``, each its trace lines.

Shared by :mod:`sim.conformance.checks` and :mod:`sim.properties` (one cap, one order);
the violation count says how many more there were.
"""

from __future__ import annotations

import heapq
from typing import Any, NamedTuple

#: Counterexamples kept per check and per property on one trace: the earliest by ``seq``
#: (the violation count says how many more there were).
KEEP_COUNTEREXAMPLES = 20


class Counterexample(NamedTuple):
    """One kept violation: its message, its events (dicts, in ``seq`` order) and how many
    events of its scope were left out between the first and the latest kept (properties)."""

    message: str
    events: list[dict[str, Any]]
    elided: int = 0


class Earliest:
    """At most ``cap`` violations ``(seq, message, raw lines, elided)``, the earliest by
    ``seq`` (ties: the first reported); memory is ``cap`` entries whatever the count."""

    __slots__ = ("_heap", "_n", "cap")

    def __init__(self, cap: int | None = None) -> None:
        self.cap = KEEP_COUNTEREXAMPLES if cap is None else cap
        self._n = 0
        self._heap: list[tuple[int, int, str, list[bytes], int]] = []

    def add(self, seq: int, message: str, lines: list[bytes], elided: int = 0) -> None:
        self._n += 1
        item = (-seq, -self._n, message, lines, elided)
        if len(self._heap) < self.cap:
            heapq.heappush(self._heap, item)
        else:  # drops the latest by seq (the new one, if it is the latest)
            heapq.heappushpop(self._heap, item)

    def kept(self) -> list[tuple[int, str, list[bytes], int]]:
        """The kept violations, earliest first."""
        return [(-s, m, lines, e) for s, _, m, lines, e in sorted(self._heap, reverse=True)]
