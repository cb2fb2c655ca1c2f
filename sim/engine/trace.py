"""The trace file (SPEC §5) and the JSON fragments its lines are built from.

:class:`TraceWriter` is the sink: it buffers finished lines and writes them to a text
file in blocks (memory does not grow with the run), and says which lines the level
keeps (``full`` everything; ``protocol`` without ``send``/``hop``/``deliver``; ``off``
nothing, the file is still created). Lines are built by the recorder
(:mod:`sim.engine.recorder`) from JSON *fragments*: :func:`js` (one value),
:func:`members` (an object's members without its braces, to splice after other
members) and :func:`owner_fragment` (the ``wf..tool`` fields of a line). The labels,
their keys and the field order are declared once in :mod:`sim.vocabulary`.
"""

from __future__ import annotations

import json
from math import copysign
from typing import Any, Protocol

from sim.vocabulary import FIELD_NAMES, LABELS
from sim.vocabulary import TRACE_LEVELS as TRACE_LEVELS

NULL = "null"

_T, _SEQ, _REP, _LABEL, _AGENT, _WF, _INST, _TASK, _INV, _TOOL, _PROTO, _DETAIL = FIELD_NAMES
#: What a line starts with, up to the value of ``t``; what follows ``t``, up to ``seq``'s.
LINE_OPEN = f'{{"{_T}":'
AFTER_T = f',"{_SEQ}":'


def heads(replication: int) -> dict[str, str]:
    """Per label, the constant text between a line's ``seq`` and its ``agent`` value:
    ``,"rep":R,"label":"L","agent":`` (built once per replication from the vocabulary)."""
    return {name: f',"{_REP}":{replication},"{_LABEL}":{js(name)},"{_AGENT}":' for name in LABELS}


#: What precedes the value of ``proto`` (after the owner fields), and of ``detail``.
BEFORE_PROTO = f',"{_PROTO}":'
BEFORE_DETAIL = f',"{_DETAIL}":'


def around(agent: str, proto: str) -> tuple[str, str]:
    """The constant text of a line at ``agent`` in ``proto`` (JSON fragments) around its
    owner fields: (``agent`` and the comma after it, ``,"proto":P,"detail":``)."""
    return f"{agent},", f"{BEFORE_PROTO}{proto}{BEFORE_DETAIL}"


#: Where :func:`seconds` formats with ``%.6f``: every 6-decimal number here has at most
#: 15 significant digits, so it is the shortest text of the double nearest to it.
FAST_LOW = 1e-4
FAST_HIGH = 1e9


def seconds(t: float) -> str:
    """A time in the trace: the same text as ``repr(round(t, 6))``, about 2.5× cheaper.

    In ``[1e-4, 1e9)`` the correctly rounded 6-decimal text of ``t`` (what ``round``
    rounds to) has at most 15 significant digits, so the double nearest to it prints
    back as the same digits (DBL_DIG = 15) in fixed notation: trailing zeros cut, one
    kept after the point. Zero is ``0.0`` (``-0.0`` for negative zero). Elsewhere
    (negatives, tiny and huge values, where ``repr`` may switch to exponent notation)
    it is ``repr(round(t, 6))`` itself."""
    if FAST_LOW <= t < FAST_HIGH:
        text = ("%.6f" % t).rstrip("0")  # noqa: UP031 (faster than format/f-string)
        return text + "0" if text[-1] == "." else text
    if t == 0.0:  # a wait or latency of zero: common, and slow in repr(round())
        return "0.0" if copysign(1.0, t) > 0.0 else "-0.0"
    return repr(round(t, 6))


def js(value: Any) -> str:
    """A compact JSON fragment (strings escaped; ``None`` → ``null``; keys sorted)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


_PROTO_JS: dict[str, str] = {}


def pjs(protocol: str) -> str:
    """:func:`js` of a protocol (or other often repeated) name, cached."""
    hit = _PROTO_JS.get(protocol)
    if hit is None:
        hit = _PROTO_JS[protocol] = js(protocol)
    return hit


def members(obj: dict[str, Any]) -> str:
    """The members of ``obj`` as JSON without the braces: ``'"a":1,"b":[2]'`` (keys
    sorted), to be written inside an object after other members."""
    return js(obj)[1:-1]


def owner_fragment(wf: str, inst: int | None, task: str, inv: int | None, tool: str) -> str:
    """The ``"wf":..,"inst":..,"task":..,"inv":..,"tool":..`` part of a line (JSON fragments
    for ``wf``, ``task``, ``tool``), computed once per invocation."""
    return (
        f'"wf":{wf},"inst":{NULL if inst is None else inst},"task":{task},'
        f'"inv":{NULL if inv is None else inv},"tool":{tool}'
    )


def owner_parts(wf: str, task: str, tool: str) -> tuple[str, str, str]:
    """:func:`owner_fragment` of an invocation in three constant parts around the
    instance and invocation ids: ``f"{head}{inst}{mid}{inv}{tail}"`` is
    ``owner_fragment(wf, inst, task, inv, tool)`` (computed once per task and view)."""
    return f'"wf":{wf},"inst":', f',"task":{task},"inv":', f',"tool":{tool}'


NO_OWNER = owner_fragment(NULL, None, NULL, None, NULL)


class TextSink(Protocol):
    """Where a :class:`TraceWriter` writes blocks of lines: a text file, or an in-process
    consumer (``smc`` monitors the lines without a file)."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> None: ...


#: Lines a :class:`TraceWriter` buffers before writing them as one block: about 50 KB,
#: below glibc's mmap threshold (128 KiB), so the block's text and its encoding come
#: from the heap; 2,048-line blocks (430 KB) were mapped and unmapped at every write, a
#: page fault per 4 KiB (on 600,000 lines, side by side: 54,000 minor faults against
#: 3,400, about 2.5× the system time).
BLOCK_LINES = 256


class TraceWriter:
    """The trace file of one replication: a buffer of finished lines, written in blocks.

    ``enabled`` is False at level ``off``; ``full`` is True at level ``full`` (transport
    lines are kept). ``lines`` counts the lines written so far. Small blocks of
    :data:`BLOCK_LINES` lines stay in the CPU's caches from the join to the write and
    cost no page faults (see there).
    """

    __slots__ = ("buffer", "enabled", "file", "full", "level", "limit", "lines", "replication")

    def __init__(
        self, file: TextSink, replication: int, level: str, buffer_lines: int = BLOCK_LINES
    ):
        if level not in TRACE_LEVELS:
            raise ValueError(f"trace level must be one of {', '.join(TRACE_LEVELS)}")
        self.file = file
        self.replication = replication
        self.level = level
        self.buffer: list[str] = []
        self.limit = buffer_lines
        self.enabled = level != "off"
        self.full = level == "full"
        self.lines = 0

    def flush(self) -> None:
        """Write the buffered lines."""
        if self.buffer:
            self.lines += len(self.buffer)
            self.file.write("".join(self.buffer))
            self.buffer.clear()
        self.file.flush()


class TraceClock:
    """The clock of a trace: the text of the instant of its last line (``t``, ``text``:
    :func:`seconds`, made once per instant by :meth:`tick`) and the number of its next
    line (``seq``: 0, 1, 2, ... in the order lines are written, whoever writes them).
    When the instant moves on, a full buffer of the writer is written first: blocks end
    between instants, never inside a line."""

    __slots__ = ("buffer", "limit", "seq", "t", "text", "writer")

    def __init__(self, writer: TraceWriter) -> None:
        self.writer = writer
        self.buffer = writer.buffer
        self.limit = writer.limit
        self.t = -1.0
        self.text = ""
        self.seq = 0

    def tick(self, t: float) -> str:
        """Move to the instant ``t`` (seconds, after the last): its text, returned."""
        self.t = t
        if FAST_LOW <= t < FAST_HIGH:  # seconds(t), its fast case inlined
            text = "%.6f" % t  # noqa: UP031 (faster than format/f-string)
            if text[-1] == "0":  # most times have six significant decimals: no strip
                text = text.rstrip("0")
                if text[-1] == ".":
                    text += "0"
        else:
            text = seconds(t)
        self.text = text
        if len(self.buffer) >= self.limit:
            self.writer.flush()
        return text
