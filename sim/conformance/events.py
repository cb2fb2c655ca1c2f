"""Trace events (SPEC §5) as the checks read them: one decode per line, nothing trusted.

Everything here is derived from the one trace vocabulary, :mod:`sim.vocabulary`: the
labels (:data:`LABELS`, :data:`LABEL_IDS`), the line's fields and their types, and the
types of the detail keys the checks read (:data:`READ_KEYS`). A line is decoded once
into an event with the SPEC §5 fields as attributes and ``detail`` as an object with one
attribute per key of :data:`READ_KEYS` (a Python keyword gets a trailing underscore:
``detail.from_``; ``None`` when absent; other keys are ignored, the raw line is kept for
counterexamples). The one decoder is ``msgspec``'s (a required dependency): a typed
decode into :data:`MEvent`; a line it refuses is read again only to say what is wrong
with it (``json.loads`` names the column of malformed JSON), or, when nothing is (a
``null`` detail, a label the pass refuses by name), converted by ``msgspec`` into the
same struct.

Required: ``seq`` (an integer) and ``label`` (a string; the pass checks that it is one
of :data:`LABELS`). Every other field and read detail key may be missing or ``null``;
otherwise it has its vocabulary type (``t`` a finite number, ``inv`` an integer,
``detail.msg`` an integer, ...). A malformed line raises :class:`TraceError` naming the
source, the line number and the field.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import keyword
import math
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from sim.json_input import MAX_INT_DIGITS, bounded_int, loads_lenient, long_integer_at
from sim.vocabulary import FIELDS, LABEL_NAMES, STRINGS, detail_type, has_type
from sim.vocabulary import PROTOCOL_LABELS as _PROTOCOL

#: Bytes read at a time when streaming a trace file (a read error is met before any line
#: of the 4 MiB it falls in is handed on).
BLOCK = 1 << 22
#: The longest trace line read, in bytes without its ``\n`` (8 MiB: an engine line is
#: under a kilobyte, a live line with a message body well under this).
MAX_LINE = 1 << 23
#: Bytes of lines handed on at a time (about 300 lines: the line objects of one piece stay
#: in the CPU's caches while they are decoded and checked).
PIECE = 1 << 16

#: The trace labels of SPEC §5, in its order (any other label is bad input).
LABELS: frozenset[str] = frozenset(LABEL_NAMES)
#: Each label's integer id (its index in SPEC §5's order).
LABEL_IDS: dict[str, int] = {name: i for i, name in enumerate(LABEL_NAMES)}
#: Labels of a tool or intent invocation's LTS (they carry ``inv``).
PROTOCOL_LABELS: frozenset[str] = _PROTOCOL

#: The detail keys the checks read (each declared by the vocabulary, with its type).
READ_KEYS: tuple[str, ...] = (
    "msg",
    "from",
    "to",
    "proto",
    "reason",
    "error",
    "at",
    "from_proto",
    "to_proto",
    "chain",
    "link",
    "slot",
    "path",
)
#: Fields a line must have (the others may be missing or ``null``).
REQUIRED: tuple[str, ...] = ("seq", "label")


def attribute(key: str) -> str:
    """The attribute a detail key is read as (``from`` → ``from_``)."""
    return key + "_" if keyword.iskeyword(key) else key


#: ``(field, type)`` of the top-level fields but ``detail``, in written order.
_FIELDS: tuple[tuple[str, object], ...] = tuple(
    (f.name, f.type) for f in FIELDS if f.name != "detail"
)
_DETAIL: tuple[tuple[str, str, object], ...] = tuple(
    (k, attribute(k), detail_type(k)) for k in READ_KEYS
)
EVENT_ATTRS: tuple[str, ...] = (*(name for name, _ in _FIELDS), "detail")
DETAIL_ATTRS: tuple[str, ...] = tuple(a for _, a, _ in _DETAIL)

_KINDS: dict[str, str] = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "dict": "an object",
}


def _optional(declared: Any) -> Any:
    """``declared | None`` (a missing or ``null`` value is accepted)."""
    return declared | None


def _kind(declared: object) -> str:
    if declared == STRINGS:
        return "a list of strings"
    return _KINDS[getattr(declared, "__name__", "")]


class TraceError(ValueError):
    """A trace that cannot be read: names the source and, for a bad line, its number."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


def _got(obj: dict[str, Any], key: str) -> str:
    """``got <value>`` (shortened) or ``missing``, for a located message."""
    if key not in obj:
        return "missing"
    text = json.dumps(obj[key], ensure_ascii=False)
    return f"got {text if len(text) <= 60 else text[:57] + '...'}"


def field_problem(obj: dict[str, Any]) -> str:
    """What makes the decoded line ``obj`` not a trace event, naming the field; ``""``
    if nothing does (the label's membership in :data:`LABELS` is the pass's check)."""
    for name, declared in _FIELDS:
        value = obj.get(name)
        if value is None and name not in REQUIRED:
            continue
        ok = has_type(value, declared)
        if name == "t" and ok and isinstance(value, int | float):
            ok = math.isfinite(value)
        if not ok:
            return f"`{name}` must be {_kind(declared)} ({_got(obj, name)})"
    detail = obj.get("detail")
    if detail is None:
        return ""
    if not isinstance(detail, dict):
        return f"`detail` must be an object ({_got(obj, 'detail')})"
    for key, _, declared in _DETAIL:
        value = detail.get(key)
        if value is not None and not has_type(value, declared):
            return f"`detail.{key}` must be {_kind(declared)} ({_got(detail, key)})"
    return ""


#: Values known in advance, per field or detail key: ``(name, sorted values)`` pairs.
Known = tuple[tuple[str, tuple[str, ...]], ...]
#: Detail keys read besides :data:`READ_KEYS`, as any JSON value (never refused: not
#: checked), each with the value it has when absent: ``(key, default)`` pairs.
Extra = tuple[tuple[str, Any], ...]


def _typed(name: str, declared: Any, known: dict[str, tuple[str, ...]]) -> Any:
    """The decoded type of field or detail key ``name``: one of its known values (each
    decoded to the one interned string: hashed once, compared by identity) or its
    declared type."""
    values = known.get(name)
    return Literal.__getitem__(values) if values else declared


def _structs(known: Known, extra: Extra = ()) -> tuple[Any, Any]:
    """``(event struct, empty detail)`` of msgspec structs typed by the vocabulary,
    the strings of ``known`` as literals, the keys of ``extra`` as any value. The fields
    are in the order the engine writes them (SPEC §5's; ``detail``'s keys sorted, a
    message's ``msg`` first): msgspec then finds each key of a line at the next field it
    looks at (keyword-only fields: required ones among those with defaults)."""
    values = dict(known)
    keys = [
        *(
            (key, attr, _optional(_typed(key, declared, values)), None)
            for key, attr, declared in _DETAIL
        ),
        *((key, attribute(key), Any, default) for key, default in extra if key not in READ_KEYS),
    ]
    detail: Any = msgspec.defstruct(
        "MDetail",
        [
            (attr, typed, msgspec.field(default=default, name=key))
            for key, attr, typed, default in sorted(keys, key=lambda k: (k[0] != "msg", k[0]))
        ],
        frozen=True,
        gc=False,
        kw_only=True,
    )
    detail.__doc__ = "``detail`` decoded by msgspec (the READ_KEYS; other keys ignored)."
    empty = detail()
    fields: list[Any] = []
    for f in FIELDS:
        typed = _typed(f.name, f.type, values)
        if f.name == "detail":
            fields.append(("detail", detail, empty))
        else:
            fields.append(
                (f.name, typed) if f.name in REQUIRED else (f.name, _optional(typed), None)
            )
    event: Any = msgspec.defstruct("MEvent", fields, gc=False, kw_only=True)
    event.__doc__ = "One trace event decoded by msgspec (fields typed by the vocabulary)."
    return event, empty


#: ``label`` is one of the SPEC §5 labels: a line of another label fails the typed
#: decode, and :func:`decode_line` refuses it by name.
MEvent, _EMPTY = _structs((("label", LABEL_NAMES),))
MDetail: Any = type(_EMPTY)
_mdecode = msgspec.json.Decoder(MEvent).decode


def decoder() -> Callable[[bytes], Any]:
    """The line decoder (``bytes`` → :data:`MEvent`)."""
    return _mdecode


@functools.lru_cache(maxsize=8)
def interning_decoder(known: Known, extra: Extra = ()) -> Callable[[bytes], Any]:
    """:func:`decoder` with the strings of ``known`` (per field or detail key, e.g. the
    scenario's agents and tools) decoded as literals: the one interned string of each,
    so the checks hash them once. A line with another value fails it (read it then with
    :func:`decoder`: same events, same errors, and no ``extra`` key). ``extra``: detail
    keys a consumer of the pass reads besides :data:`READ_KEYS` (any value, not checked:
    nothing more is refused; an integer msgspec cannot hold fails it, as another value
    does), decoded in the same call."""
    labels = (("label", LABEL_NAMES),)
    known = labels + tuple((k, v) for k, v in known if k != "label" and v)
    event, _ = _structs(known, extra)
    decode: Callable[[bytes], Any] = msgspec.json.Decoder(event).decode
    return decode


def unknown_label(lab: Any) -> str:
    """The message of a line whose label is not a SPEC §5 label."""
    known = ", ".join(sorted(LABELS))
    return f"unknown label {lab!r} (not a trace label, docs/reference/trace.md: {known})"


def decode_line(raw: bytes, source: str, lineno: int, fast: Callable[[bytes], Any]) -> Any:
    """Decode one line with ``fast``; a line it refuses raises :class:`TraceError` with a
    located message naming the field (a column counted on the line without its
    ``\\n``), or, if nothing is wrong with it but a ``null`` detail, is converted by
    msgspec into the same :data:`MEvent` (``json.loads`` only names what is wrong)."""
    try:
        return fast(raw)
    except Exception:
        pass
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    head = raw.lstrip()[:1]
    if head and head in b'["-0123456789tfn':
        # JSON, but not an object: said without parsing it (a deep array would recurse)
        raise TraceError(source, lineno, "not a trace event: a trace line must be a JSON object")
    obj = _diagnosed(raw, source, lineno)
    problem = field_problem(obj)
    if problem:
        raise TraceError(source, lineno, f"not a trace event: {problem}")
    if obj["label"] not in LABELS:
        raise TraceError(source, lineno, unknown_label(obj["label"]))
    if obj.get("detail") is None:
        obj["detail"] = {}
    try:
        return msgspec.convert(obj, MEvent)
    except msgspec.ValidationError as exc:  # nothing field_problem missed is known
        raise TraceError(source, lineno, f"not a trace event: {exc}") from None


def _diagnosed(raw: bytes, source: str, lineno: int) -> dict[str, Any]:
    """The JSON object of a line the typed decode refused, or the located reason it is
    not one."""
    try:
        obj = json.loads(raw, parse_int=bounded_int)
    except json.JSONDecodeError as exc:
        raise TraceError(
            source, lineno, f"malformed JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except UnicodeDecodeError as exc:
        raise TraceError(
            source,
            lineno,
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}",
        ) from None
    except RecursionError:
        raise TraceError(
            source, lineno, "not a trace event: JSON nested too deeply to read"
        ) from None
    except ValueError:  # an integer past MAX_INT_DIGITS (json's hook)
        column = long_integer_at(raw.decode("utf-8", "replace")) + 1
        raise TraceError(
            source,
            lineno,
            f"not a trace event: an integer of more than {MAX_INT_DIGITS} digits (column {column})",
        ) from None
    if not isinstance(obj, dict):
        raise TraceError(source, lineno, "not a trace event: a trace line must be a JSON object")
    return obj


Line = bytes
"""A raw trace line (from a file, with its ``\\n``)."""

#: Magic numbers of compressed files that are refused by name (gzip is read).
COMPRESSED: tuple[tuple[bytes, str], ...] = (
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x04\x22\x4d\x18", "lz4"),
)
GZIP_MAGIC = b"\x1f\x8b"


def read_blocks(
    source: str | Path | Iterable[bytes | str | dict[str, Any]],
) -> tuple[str, Iterator[list[bytes]]]:
    """``(name, blocks of lines)`` for a path or an iterable of lines (``bytes``, ``str`` or
    event dicts, which are re-encoded). A file is read 4 MiB at a time, its lines
    handed on in blocks of about 64 KiB, each line with its ``\\n`` (the last one may have
    none; the decoders take it as JSON white space); a gzip file (known by its magic
    number) is decompressed on the way; other compressed files (bz2, xz, zstd, lz4) raise
    :class:`TraceError` naming the compression. The lines of an iterable come without
    their line end. Blank lines are kept so line numbers stay right (the reader skips
    them)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            fh: Any = open(path, "rb", buffering=BLOCK)  # noqa: SIM115 - closed by the generator
            head = fh.peek(8)[:8] if hasattr(fh, "peek") else b""
            for magic, name in COMPRESSED:
                if head.startswith(magic):
                    fh.close()
                    raise TraceError(
                        str(path), None, f"a {name}-compressed file: decompress it first "
                        "(only plain and gzip traces are read)"
                    )  # fmt: skip
            if head.startswith(GZIP_MAGIC):
                fh = io.BufferedReader(gzip.GzipFile(fileobj=fh, mode="rb"), BLOCK)
        except OSError as exc:
            raise TraceError(str(path), None, exc.strerror or str(exc)) from None
        return str(path), _file_blocks(fh, str(path))
    return "<trace>", _iter_blocks(source)


def _file_blocks(fh: Any, name: str) -> Iterator[list[bytes]]:
    """The lines of ``fh`` in blocks of about :data:`PIECE` bytes, read :data:`BLOCK`
    bytes at a time (``readlines`` on each block: split at C speed, where ``bytes.split``
    compares byte by byte); a line longer than :data:`MAX_LINE` bytes, or a read error,
    names the first line not handed on. Memory: a block, the unfinished line carried
    over (at most MAX_LINE) and the lines handed on."""
    lines = 0
    carry = b""  # the start of a line the last block did not end
    with fh:
        while True:
            try:
                chunk = fh.read(BLOCK)
            except (OSError, EOFError, zlib.error) as exc:
                raise TraceError(name, lines + 1, f"cannot read the file: {exc}") from None
            if not chunk:
                if carry:
                    yield [carry]
                return
            start = 0
            if carry:
                start = chunk.find(b"\n") + 1
                if start == 0:  # no line ends in this block: the line goes on
                    carry += chunk
                    if len(carry) > MAX_LINE:
                        raise TraceError(name, lines + 1, _too_long())
                    continue
                head, carry = carry + chunk[:start], b""
                if len(head) > MAX_LINE + 1:  # + its "\n"
                    raise TraceError(name, lines + 1, _too_long())
                lines += 1
                yield [head]
            whole = io.BytesIO(chunk)  # shares chunk's bytes: no copy
            whole.seek(start)
            while block := whole.readlines(PIECE):
                if block[-1][-1:] != b"\n":  # the block's last line goes on in the next
                    carry = block.pop()
                # a line inside one chunk is shorter than BLOCK: only a smaller bound looks
                if BLOCK > MAX_LINE and block and max(map(len, block)) > MAX_LINE + 1:
                    longest = next(k for k, raw in enumerate(block) if len(raw) > MAX_LINE + 1)
                    raise TraceError(name, lines + longest + 1, _too_long())
                lines += len(block)
                if len(carry) > MAX_LINE:
                    raise TraceError(name, lines + 1, _too_long())
                if block:
                    yield block


def _too_long() -> str:
    return f"a line longer than {MAX_LINE:,} bytes (the bound of a trace line)"


def trace_events(path: str | Path) -> Iterator[Any]:
    """The decoded events (the checks' attributes) of every non-blank line of the trace
    file ``path``, read by :func:`read_blocks` (bounded lines); :class:`TraceError` (file
    and line) at the first line that cannot be read."""
    name, blocks = read_blocks(path)
    fast = decoder()
    lineno = 0
    for block in blocks:
        for raw in block:
            lineno += 1
            if raw.strip():
                yield decode_line(raw, name, lineno, fast)


def _iter_blocks(items: Iterable[bytes | str | dict[str, Any]]) -> Iterator[list[bytes]]:
    block: list[bytes] = []
    for item in items:
        if isinstance(item, bytes):
            block.append(item.rstrip(b"\r\n"))
        elif isinstance(item, str):
            block.append(item.rstrip("\r\n").encode("utf-8"))
        else:
            block.append(encode_event(item))
        if len(block) >= 4096:
            yield block
            block = []
    if block:
        yield block


def encode_event(event: dict[str, Any]) -> bytes:
    """One event dict as a compact JSON line (no newline)."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def raw_to_dict(raw: bytes) -> dict[str, Any]:
    """A kept raw line back as a dict (for reports; an integer of an unread detail key
    past MAX_INT_DIGITS as its digits)."""
    obj = loads_lenient(raw)
    return obj if isinstance(obj, dict) else {"line": raw.decode("utf-8", "replace")}
