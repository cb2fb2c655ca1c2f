"""JSON from outside (a user's file, a trace line): read within documented bounds.

Every command that reads a JSON file the user names reads it with :func:`read_json`
(docs/reference/cli.md, "Input bounds"): at most :data:`MAX_JSON_BYTES` bytes, nested at
most :data:`MAX_JSON_DEPTH` arrays and objects deep, each integer at most
:data:`MAX_INT_DIGITS` digits (so every integer converts to a float: no ``OverflowError``
downstream, and Python's 4,300-digit conversion limit is never met). Anything else is a
:class:`JsonInputError` located at file:line:col.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

#: The largest JSON file read, in bytes (256 MiB).
MAX_JSON_BYTES = 256 * 1024 * 1024
#: The deepest nesting of arrays and objects (a top-level array or object is depth 1).
MAX_JSON_DEPTH = 64
#: The most digits of one JSON integer (10^300 < the largest float, 1.8e308).
MAX_INT_DIGITS = 300

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRINGS = re.compile(_STRING, re.DOTALL)
_NUMBER_OR_STRING = re.compile(_STRING + r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", re.DOTALL)
_BRACKETS = re.compile(_STRING + r"|[\[\]{}]", re.DOTALL)
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


class JsonInputError(ValueError):
    """A JSON input that cannot be used: ``source:line:column: message``."""

    def __init__(self, source: str, line: int, column: int, message: str) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.message = message
        super().__init__(f"{source}:{line}:{column}: {message}")


class _LongInteger(ValueError):
    """An integer of more than MAX_INT_DIGITS digits (raised from ``json``'s hook)."""


def bounded_int(digits: str) -> int:
    """``json``'s ``parse_int`` hook: the integer, or :class:`_LongInteger` past the bound."""
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    return int(digits)


def _line_column(text: str, pos: int) -> tuple[int, int]:
    """The 1-based (line, column) of offset ``pos`` in ``text``."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def long_integer_at(text: str) -> int:
    """The offset of the first integer token (outside strings) with more than
    :data:`MAX_INT_DIGITS` digits in the JSON ``text`` (0 if none)."""
    for m in _NUMBER_OR_STRING.finditer(text):
        token = m.group()
        digits = len(token) - token.startswith("-")
        if token[0] != '"' and token.lstrip("-").isdigit() and digits > MAX_INT_DIGITS:
            return m.start()
    return 0


def too_deep_at(text: str) -> int | None:
    """The offset of the bracket that opens level MAX_JSON_DEPTH + 1 in ``text`` (None
    when the nesting stays within it): C-speed count first, a located walk on failure."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if not brackets or max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets))) <= (
        MAX_JSON_DEPTH
    ):
        return None
    depth = 0
    for m in _BRACKETS.finditer(text):
        step = _DEPTH_STEP.get(m.group())
        if step is not None:
            depth += step
            if depth > MAX_JSON_DEPTH:
                return m.start()
    return None  # pragma: no cover - the count above found the same brackets


def parse_json(text: str, source: str) -> Any:
    """The JSON value of ``text`` (from ``source``, for messages), within the bounds.

    Raises :class:`JsonInputError` at the offending character."""
    deep = too_deep_at(text)
    if deep is not None:
        raise JsonInputError(
            source, *_line_column(text, deep), f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        return json.loads(text, parse_int=bounded_int)
    except _LongInteger as exc:
        digits = len(exc.args[0].lstrip("-"))
        raise JsonInputError(
            source,
            *_line_column(text, long_integer_at(text)),
            f"an integer of {digits} digits (at most {MAX_INT_DIGITS})",
        ) from None
    except json.JSONDecodeError as exc:
        raise JsonInputError(source, exc.lineno, exc.colno, f"malformed JSON: {exc.msg}") from None
    except RecursionError:  # pragma: no cover - the depth bound is far below the stack's
        raise JsonInputError(source, 1, 1, "JSON nested too deeply to read") from None


def read_json(path: str | Path) -> Any:
    """The JSON value of the file ``path``, within the bounds (UTF-8, at most
    :data:`MAX_JSON_BYTES` bytes). Raises :class:`JsonInputError` (``OSError`` reasons
    included, at 1:1)."""
    source = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise JsonInputError(source, 1, 1, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_JSON_BYTES:
        raise JsonInputError(source, 1, 1, f"larger than {MAX_JSON_BYTES:,} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", "replace")
        line, column = _line_column(before, len(before))
        raise JsonInputError(
            source, line, column, f"not UTF-8 text: byte 0x{data[exc.start]:02x}"
        ) from None
    return parse_json(text, source)
