"""Files written whole or not at all (sim/atomic.py), for any text: after each write the
file holds exactly the text's UTF-8 bytes (``\\r``, ``\\r\\n`` and non-ASCII as given) and
its folder holds nothing else; text UTF-8 cannot encode (a lone surrogate) is a
StorageError naming the path, the file keeps what it held and no temporary file stays."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.atomic import StorageError, write_atomic

#: any text, or text of line ends, non-ASCII and lone surrogates (a text of characters
#: drawn from a union of alphabets never holds a surrogate)
TEXTS = st.text(st.sampled_from("a\r\n\té\u2028\ud800\udfff"), max_size=12) | st.text(max_size=12)
WRITES = settings(max_examples=40, deadline=None)


def check_writes(texts: list[str], folder: Path) -> None:
    """Write ``texts`` in turn to one file of ``folder``, checking each write's end state."""
    path = folder / "out.txt"
    held: bytes | None = None
    for k, text in enumerate(texts):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            with pytest.raises(StorageError, match=r"^cannot write .*out\.txt: not UTF-8 text: "):
                write_atomic(path, text)
        else:
            write_atomic(path, text)
            held = data
        assert (path.read_bytes() if path.exists() else None) == held, f"write {k}: {text!r}"
        left = sorted(os.listdir(folder))
        assert left == ([] if held is None else ["out.txt"]), f"write {k}: {left}"


@WRITES
@given(texts=st.lists(TEXTS, min_size=1, max_size=4))
def test_each_write_leaves_its_text_whole_or_the_file_as_it_was(texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        check_writes(texts, Path(folder))


def test_a_lone_surrogate_is_one_line_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    write_atomic(path, "kept\r\n")
    with pytest.raises(StorageError) as info:
        write_atomic(path, "ab\ud800")
    assert str(info.value) == (
        f"cannot write {path}: not UTF-8 text: surrogates not allowed at character 3"
    )
    assert path.read_bytes() == b"kept\r\n" and os.listdir(tmp_path) == ["out.txt"]
