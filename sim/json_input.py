"""JSON from outside (a user's file, a trace line): read within documented bounds.

Every command that reads a JSON file the user names reads it with :func:`read_json`
(docs/reference/cli.md, "Input bounds"): at most :data:`MAX_JSON_BYTES` bytes, nested at
most :data:`MAX_JSON_DEPTH` arrays and objects deep, each integer at most
:data:`MAX_INT_DIGITS` digits (so every integer converts to a float: no ``OverflowError``
downstream, and Python's 4,300-digit conversion limit is never met), every other number
within the float range (``1e999`` is refused, as are ``NaN`` and ``Infinity``, which are
not JSON). Anything else is a :class:`JsonInputError` located at file:line:col.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

#: The largest JSON file read, in bytes (64 MiB: the real inputs, SGD dialogues and tool
#: lists, are a few MiB; decoded, 64 MiB of JSON can take about a GiB of objects).
MAX_JSON_BYTES = 64 * 1024 * 1024
#: The deepest nesting of arrays and objects (a top-level array or object is depth 1).
MAX_JSON_DEPTH = 64
#: The most digits of one JSON integer (10^300 < the largest float, 1.8e308).
MAX_INT_DIGITS = 300

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
#: A number or constant token, or a whole string (skipped): only ever run over text that
#: ``json`` parsed up to the token sought, where every string is closed (linear time).
_TOKENS = re.compile(_STRING + r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity", re.DOTALL)
#: What the bracket count reads: an escape, a quote or a bracket (one token each: linear
#: on any text, closed strings or not).
_SCAN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


class JsonInputError(ValueError):
    """A JSON input that cannot be used: ``source:line:column: message``. ``syntax`` is
    true for text that is not JSON at all (``json``'s own error, its message in
    ``message``), false for JSON past a bound or a file that is not UTF-8 text."""

    def __init__(
        self, source: str, line: int, column: int, message: str, syntax: bool = False
    ) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.message = message
        self.syntax = syntax
        super().__init__(f"{source}:{line}:{column}: {message}")

    @property
    def reported(self) -> str:
        """The one line a command prints: ``source: invalid JSON at line L column C: ...``
        for a syntax error (the commands' wording since before the bounds), else ``str``."""
        if self.syntax:
            where = f"line {self.line} column {self.column}"
            return f"{self.source}: invalid JSON at {where}: {self.message}"
        return str(self)


class _OutOfBounds(ValueError):
    """A number past the bounds (raised from ``json``'s hooks): its token and the why."""


def _too_long(token: str) -> bool:
    return token.lstrip("-").isdigit() and len(token) - token.startswith("-") > MAX_INT_DIGITS


def bounded_int(digits: str) -> int:
    """``json``'s ``parse_int`` hook: the integer, or an error past MAX_INT_DIGITS."""
    if _too_long(digits):
        why = f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})"
        raise _OutOfBounds(digits, why)
    return int(digits)


def _finite_float(text: str) -> float:
    """``json``'s ``parse_float`` hook: the number, or an error past the float range."""
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 20 else text[:17] + "..."
        raise _OutOfBounds(text, f"a number beyond the float range ({shown})")
    return value


def _no_constant(name: str) -> Any:
    """``json``'s ``parse_constant`` hook: NaN and Infinity are not JSON."""
    raise _OutOfBounds(name, f"{name} is not JSON")


def _line_column(text: str, pos: int) -> tuple[int, int]:
    """The 1-based (line, column) of offset ``pos`` in ``text``."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def token_at(text: str, token: str) -> int:
    """The offset of the first occurrence of the number or constant ``token`` outside the
    strings of the JSON ``text`` (0 if none)."""
    for m in _TOKENS.finditer(text):
        if m.group() == token:
            return m.start()
    return 0


def long_integer_at(text: str) -> int:
    """The offset of the first integer (outside strings) of more than MAX_INT_DIGITS
    digits in the JSON ``text`` (0 if none)."""
    return next((m.start() for m in _TOKENS.finditer(text) if _too_long(m.group())), 0)


def too_deep_at(text: str) -> int:
    """The offset of the bracket that opens level MAX_JSON_DEPTH + 1 in ``text`` (0 if
    none), brackets inside strings not counted."""
    depth = 0
    in_string = False
    for m in _SCAN.finditer(text):
        c = m.group()
        if in_string:
            in_string = c != '"'
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return m.start()
        elif c in "]}":
            depth -= 1
    return 0


def _too_deep(value: Any) -> bool:
    """Whether the decoded ``value`` nests more than MAX_JSON_DEPTH arrays and objects
    (walked without recursion)."""
    level, depth = [value], 1  # the containers at one depth
    while level:
        if depth > MAX_JSON_DEPTH:
            return True
        below = []
        for node in level:
            for kid in node.values() if type(node) is dict else node:
                if type(kid) is dict or type(kid) is list:
                    below.append(kid)
        level, depth = below, depth + 1
    return False


def _int_or_digits(digits: str) -> int | str:
    return digits if _too_long(digits) else int(digits)


def loads_lenient(text: str | bytes) -> Any:
    """JSON that a faster decoder already accepted (a trace line msgspec decoded, which
    skips the detail keys it does not read), read again in full: an integer past
    MAX_INT_DIGITS comes back as its digits (a string) instead of raising."""
    return json.loads(text, parse_int=_int_or_digits)


def parse_json(text: str, source: str) -> Any:
    """The JSON value of ``text`` (from ``source``, for messages), within the bounds:
    decoded by ``json`` (linear time; its recursion is Python's), the nesting then counted
    on the value. Raises :class:`JsonInputError` at the offending character."""
    try:
        value = json.loads(
            text, parse_int=bounded_int, parse_float=_finite_float, parse_constant=_no_constant
        )
    except _OutOfBounds as exc:
        token, why = exc.args
        raise JsonInputError(source, *_line_column(text, token_at(text, token)), why) from None
    except json.JSONDecodeError as exc:
        raise JsonInputError(source, exc.lineno, exc.colno, exc.msg, syntax=True) from None
    except RecursionError:  # deeper than Python's stack: far past the bound
        deep = True
    else:
        deep = isinstance(value, dict | list) and _too_deep(value)
    if deep:
        at = too_deep_at(text)
        message = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        raise JsonInputError(source, *_line_column(text, at), message)
    return value


def read_json(path: str | Path) -> Any:
    """The JSON value of the file ``path``, within the bounds (UTF-8, at most
    :data:`MAX_JSON_BYTES` bytes). Raises ``OSError`` when the file cannot be read and
    :class:`JsonInputError` for its content."""
    source = str(path)
    with open(path, "rb") as fh:
        data = fh.read(MAX_JSON_BYTES + 1)
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
