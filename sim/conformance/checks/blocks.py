"""The pass's input, line by line: the slow read of a line the fast decoder refuses, and
the located messages of a line the pass refuses (malformed, out of order, unknown label)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.conformance.events import decode_line


def disorder(key: str, value: Any, previous: Any) -> str:
    """The message of a line out of SPEC §5 order (``key`` is ``seq`` or ``t``)."""
    how = "smaller than" if key == "t" else "not larger than"
    return (
        f"not in time order: `{key}` {value!r} is {how} the previous event's {previous!r} "
        "(docs/reference/trace.md: a trace is in time order, with increasing seq)"
    )


def line_number(block: list[bytes], raw: bytes, base: int) -> int:
    """The line number of ``raw``, an item of ``block`` (found by identity), the block
    starting after line ``base``."""
    return base + next(j for j, r in enumerate(block) if r is raw) + 1


def reread(
    name: str, block: list[bytes], raw: bytes, base: int, plain: Callable[[bytes], Any]
) -> Any:
    """The event of a line the pass's decoder refused: ``None`` for a blank line, else
    the line read by ``plain`` (the decoder the pass's one specialises) and failing that
    by :func:`~sim.conformance.events.decode_line`, which raises
    :class:`~sim.conformance.events.TraceError` located at its line."""
    if not raw.strip():
        return None
    return decode_line(raw, name, line_number(block, raw, base), plain)
