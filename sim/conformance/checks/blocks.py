"""The pass's input: blocks of decoded events with their raw lines, and the located
messages of a line the pass refuses (out of order, unknown label)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sim.conformance.events import LABELS, TraceError, decode_line


def disorder(key: str, value: Any, previous: Any) -> str:
    """The message of a line out of SPEC §5 order (``key`` is ``seq`` or ``t``)."""
    how = "smaller than" if key == "t" else "not larger than"
    return (
        f"not in time order: `{key}` {value!r} is {how} the previous event's {previous!r} "
        "(SPEC §5: a trace is in time order, with increasing seq)"
    )


def unknown_label(lab: Any) -> str:
    """The message of a line whose label is not a SPEC §5 label."""
    return f"unknown label {lab!r} (not a SPEC §5 label: {', '.join(sorted(LABELS))})"


def decoded(
    name: str,
    blocks: Iterable[list[bytes]],
    fast: Callable[[bytes], Any],
    plain: Callable[[bytes], Any] | None = None,
) -> Iterator[tuple[list[Any], list[bytes], int, list[int] | None]]:
    """Per block: its events (one C-level ``map`` of the decoder), their raw lines, the
    number of the line before the block and, when the block has a line ``fast`` does not
    read (then decoded line by line: with ``plain``, the decoder ``fast`` specialises, and
    failing that by :func:`decode_line`; blank lines dropped), each event's line number
    (else event ``j`` is on line ``base + j + 1``). A malformed line raises
    :class:`TraceError` after the lines before it were yielded."""
    base = 0
    other = plain or fast
    for block in blocks:
        try:
            yield list(map(fast, block)), block, base, None
        except Exception:
            evs: list[Any] = []
            raws: list[bytes] = []
            linenos: list[int] = []
            for lineno, raw in enumerate(block, base + 1):
                try:
                    ev = fast(raw)
                except Exception:
                    if not raw.strip():
                        continue
                    try:
                        ev = decode_line(raw, name, lineno, other)
                    except TraceError:
                        yield evs, raws, base, linenos  # the lines before it come first
                        raise
                evs.append(ev)
                raws.append(raw)
                linenos.append(lineno)
            yield evs, raws, base, linenos
        base += len(block)


def line_number(raws: list[bytes], raw: bytes, base: int, linenos: list[int] | None) -> int:
    """The line number of ``raw`` (an item of ``raws``, found by identity)."""
    j = next(j for j, r in enumerate(raws) if r is raw)
    return linenos[j] if linenos is not None else base + j + 1
