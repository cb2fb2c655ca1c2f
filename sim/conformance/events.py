"""Trace events (SPEC §5) as the checks read them: one decode per line, nothing trusted.

A line is decoded once into an :class:`Event` with the SPEC §5 keys as attributes and
``detail`` as a :class:`Detail` holding the detail keys any check reads (others are
ignored; the raw line is kept for counterexamples). With ``msgspec`` installed the decode
is a typed ``msgspec`` decode (about six times faster than ``json.loads``); without it,
``json.loads`` and a plain object, same attributes. Required keys: ``seq`` (int) and
``label`` (str, one of SPEC §5's :data:`LABELS`, checked by the reader); ``t`` may be
missing or ``null`` but otherwise must be a (finite) number; the others may be missing or
``null``. Malformed lines raise :class:`TraceError` naming the source, the line number and
the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

try:  # pragma: no branch
    import msgspec

    HAVE_MSGSPEC = True
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    HAVE_MSGSPEC = False

#: Bytes read per block when streaming a trace file.
BLOCK = 1 << 22

#: Labels of a tool or intent invocation's LTS (they carry ``inv``).
PROTOCOL_LABELS: frozenset[str] = frozenset(
    (
        "call",
        "invoke",
        "collect",
        "validate",
        "approve",
        "deny",
        "execute",
        "result",
        "error",
        "retry",
        "fallback",
        "prompt",
        "abort",
    )
)

#: The trace labels of SPEC §5 (any other label is bad input).
LABELS: frozenset[str] = PROTOCOL_LABELS | {
    "wf_start",
    "wf_end",
    "list",
    "skip",
    "send",
    "hop",
    "translate",
    "deliver",
    "drop",
    "timeout",
    "reroute",
    "node_down",
    "node_up",
    "link_down",
    "link_up",
}


class TraceError(ValueError):
    """A trace that cannot be read: names the source and, for a bad line, its number."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


class PyDetail:
    """``detail`` of an event: the keys the checks read (``None`` when absent)."""

    __slots__ = (
        "at",
        "chain",
        "error",
        "frm",
        "from_proto",
        "link",
        "msg",
        "parent",
        "proto",
        "reason",
        "slot",
        "status",
        "to",
        "to_proto",
        "turn",
    )

    def __init__(self, d: dict[str, Any] | None = None) -> None:
        g = (d or {}).get
        self.msg = g("msg")
        self.frm = g("from")
        self.to = g("to")
        self.proto = g("proto")
        self.reason = g("reason")
        self.error = g("error")
        self.status = g("status")
        self.at = g("at")
        self.from_proto = g("from_proto")
        self.to_proto = g("to_proto")
        self.chain = g("chain")
        self.link = g("link")
        self.slot = g("slot")
        self.parent = g("parent")
        self.turn = g("turn")


class PyEvent:
    """One trace event (the ``json`` fallback; same attributes as the ``msgspec`` one)."""

    __slots__ = (
        "agent",
        "detail",
        "inst",
        "inv",
        "label",
        "proto",
        "rep",
        "seq",
        "t",
        "task",
        "tool",
        "wf",
    )

    def __init__(self, d: dict[str, Any]) -> None:
        g = d.get
        self.t = g("t")
        self.seq = d["seq"]
        self.rep = g("rep")
        self.label = d["label"]
        self.agent = g("agent")
        self.wf = g("wf")
        self.inst = g("inst")
        self.task = g("task")
        self.inv = g("inv")
        self.tool = g("tool")
        self.proto = g("proto")
        detail = g("detail")
        if detail is not None and not isinstance(detail, dict):
            raise TypeError("detail must be an object")
        self.detail = PyDetail(detail)


def _got(obj: dict[str, Any], key: str) -> str:
    """``got <value>`` (shortened) or ``missing``, for a located message."""
    if key not in obj:
        return "missing"
    text = json.dumps(obj[key], ensure_ascii=False)
    return f"got {text if len(text) <= 60 else text[:57] + '...'}"


def _py_decode(raw: bytes) -> Any:
    obj = json.loads(raw)
    if not isinstance(obj, dict):
        raise TypeError("a trace line must be a JSON object")
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise TypeError(f"`seq` must be an integer ({_got(obj, 'seq')})")
    if not isinstance(obj.get("label"), str):
        raise TypeError(f"`label` must be a string ({_got(obj, 'label')})")
    t = obj.get("t")
    if t is not None and (
        not isinstance(t, int | float) or isinstance(t, bool) or not math.isfinite(t)
    ):
        raise TypeError(f"`t` must be a number ({_got(obj, 't')})")
    return PyEvent(obj)


if HAVE_MSGSPEC:

    class MDetail(msgspec.Struct, gc=False, frozen=True):
        """``detail`` decoded by msgspec (unknown keys ignored)."""

        msg: Any = None
        frm: Any = msgspec.field(default=None, name="from")
        to: Any = None
        proto: Any = None
        reason: Any = None
        error: Any = None
        status: Any = None
        at: Any = None
        from_proto: Any = None
        to_proto: Any = None
        chain: Any = None
        link: Any = None
        slot: Any = None
        parent: Any = None
        turn: Any = None

    _EMPTY = MDetail()

    class MEvent(msgspec.Struct, gc=False):
        """One trace event decoded by msgspec."""

        seq: int
        label: str
        t: float | None = None
        rep: Any = None
        agent: Any = None
        wf: Any = None
        inst: Any = None
        task: Any = None
        inv: Any = None
        tool: Any = None
        proto: Any = None
        detail: MDetail = _EMPTY

    _decoder = msgspec.json.Decoder(MEvent)
    _mdecode = _decoder.decode

    def decoder() -> Callable[[bytes], Any]:
        """The fastest available line decoder (``bytes`` → event)."""
        return _mdecode

else:  # pragma: no cover

    def decoder() -> Callable[[bytes], Any]:
        """The fastest available line decoder (``bytes`` → event)."""
        return _py_decode


def decode_line(raw: bytes, source: str, lineno: int, fast: Callable[[bytes], Any]) -> Any:
    """Decode one line; on failure retry with ``json`` (tolerant of ``null`` details) and
    raise :class:`TraceError` with a located message if that fails too."""
    try:
        return fast(raw)
    except Exception:
        pass
    try:
        return _py_decode(raw)
    except json.JSONDecodeError as exc:
        raise TraceError(
            source, lineno, f"malformed JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except (KeyError, TypeError, UnicodeDecodeError) as exc:
        text = exc.args[0] if exc.args else str(exc)
        if isinstance(exc, KeyError):
            text = f"missing key `{text}`"
        raise TraceError(source, lineno, f"not a trace event: {text}") from None


Line = bytes
"""A raw trace line (no trailing newline)."""


def read_blocks(
    source: str | Path | Iterable[bytes | str | dict[str, Any]],
) -> tuple[str, Iterator[list[bytes]]]:
    """``(name, blocks of lines)`` for a path or an iterable of lines (``bytes``, ``str`` or
    event dicts, which are re-encoded). Files are read in blocks of about 4 MiB; blank
    lines are kept (as ``b""``) so line numbers stay right (the reader skips them)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed by the generator
        except OSError as exc:
            raise TraceError(str(path), None, exc.strerror or str(exc)) from None
        return str(path), _file_blocks(fh)
    return "<trace>", _iter_blocks(source)


def _file_blocks(fh: Any) -> Iterator[list[bytes]]:
    with fh:
        rest = b""
        while True:
            block = fh.read(BLOCK)
            if not block:
                break
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            yield parts
        if rest:
            yield [rest]


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
    """A kept raw line back as a dict (for reports)."""
    obj = json.loads(raw)
    return obj if isinstance(obj, dict) else {"line": raw.decode("utf-8", "replace")}
