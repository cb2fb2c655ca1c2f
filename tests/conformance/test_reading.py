"""Reading a trace file in pieces: the same lines as one split (each with its ``\\n``),
and errors located at the first bad line whatever the piece it falls in."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance import events
from sim.conformance.checks import TraceError, check_trace
from sim.conformance.truth import ToolFacts, Truth

TRUTH = Truth(tools={"A": ToolFacts("A", write=False)})


def _lines(data: bytes, block: int, piece: int) -> list[bytes]:
    saved = events.PIECE
    events.PIECE = piece
    try:
        fh = io.BufferedReader(io.BytesIO(data), buffer_size=block)  # type: ignore[arg-type]
        parts = list(events._file_blocks(fh, "t"))
        assert all(parts), "no empty block"
        return [line for part in parts for line in part]
    finally:
        events.PIECE = saved


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\r\n", b" "]), max_size=60),
    st.integers(1, 40),
    st.integers(1, 20),
)
def test_pieces_give_the_lines_of_one_split(parts: list[bytes], block: int, piece: int) -> None:
    data = b"".join(parts)
    whole = data.split(b"\n")
    want = [line + b"\n" for line in whole[:-1]] + ([whole[-1]] if whole[-1] else [])
    assert _lines(data, block, piece) == want


def _line(seq: int, t: float = 0.0, label: str = "wf_start") -> bytes:
    ev: dict[str, Any] = {"t": t, "seq": seq, "label": label, "agent": "a", "wf": "w"}
    ev.update(inst=0, task=None, inv=None, tool=None, proto=None, detail={})
    return json.dumps(ev).encode()


def _error(path: Path, lines: list[bytes], piece: int) -> TraceError:
    path.write_bytes(b"\n".join(lines) + b"\n")
    saved = events.PIECE
    events.PIECE = piece
    try:
        with pytest.raises(TraceError) as exc:
            check_trace(path, TRUTH)
    finally:
        events.PIECE = saved
    return exc.value


@pytest.mark.parametrize("piece", [1, 200, 1 << 16])
def test_the_first_bad_line_is_reported_whatever_the_piece(tmp_path: Path, piece: int) -> None:
    good = [_line(i, float(i)) for i in range(6)]
    disorder = [*good[:2], _line(0, 2.0), *good[3:5], b'{"seq": 5', good[5]]
    err = _error(tmp_path / "a.jsonl", disorder, piece)
    assert err.line == 3 and err.message.startswith("not in time order: `seq` 0 "), err
    malformed = [*good[:2], b'{"seq": 2', *good[3:5], _line(0, 5.0)]
    err = _error(tmp_path / "b.jsonl", malformed, piece)
    assert err.line == 3 and err.message.startswith("malformed JSON"), err
    late = [*good[:2], b"", b"  ", *good[2:4], _line(9, 0.5)]
    err = _error(tmp_path / "c.jsonl", late, piece)
    assert err.line == 7 and err.message.startswith("not in time order: `t` 0.5 "), err
    label = [*good[:4], b"", _line(4, 4.0, "nope")]
    err = _error(tmp_path / "d.jsonl", label, piece)
    assert err.line == 6 and err.message.startswith("unknown label 'nope'"), err
