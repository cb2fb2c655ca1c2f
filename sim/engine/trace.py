"""The streamed trace of SPEC §5 and its label vocabulary.

One JSON object per line, keys always present and always in the order
``t, seq, rep, label, agent, wf, inst, task, inv, tool, proto, detail``; a key that
does not apply is ``null``, ``detail`` is an object (``{}`` when empty). ``t`` is the
simulated time rounded to microseconds; ``seq`` counts the lines of the replication
from 0. Lines are compact (no spaces) and built from pre-escaped JSON fragments, so a
run's bytes depend only on the scenario, router, replication and seed.

Trace levels: ``full`` writes everything; ``protocol`` leaves out ``send``, ``hop``
and ``deliver``; ``off`` writes nothing (the file is still created, empty). Lines are
buffered and written in blocks: memory does not grow with the run.
"""

from __future__ import annotations

import json
from typing import IO, Any

# --- labels (SPEC §5) ----------------------------------------------------------------
WF_START = "wf_start"
WF_END = "wf_end"
LIST = "list"
CALL = "call"
INVOKE = "invoke"
COLLECT = "collect"
VALIDATE = "validate"
APPROVE = "approve"
DENY = "deny"
EXECUTE = "execute"
RESULT = "result"
ERROR = "error"
RETRY = "retry"
FALLBACK = "fallback"
PROMPT = "prompt"
ABORT = "abort"
SKIP = "skip"
SEND = "send"
HOP = "hop"
TRANSLATE = "translate"
DELIVER = "deliver"
DROP = "drop"
TIMEOUT = "timeout"
REROUTE = "reroute"
NODE_DOWN = "node_down"
NODE_UP = "node_up"
LINK_DOWN = "link_down"
LINK_UP = "link_up"

LABELS: tuple[str, ...] = (
    WF_START,
    WF_END,
    LIST,
    CALL,
    INVOKE,
    COLLECT,
    VALIDATE,
    APPROVE,
    DENY,
    EXECUTE,
    RESULT,
    ERROR,
    RETRY,
    FALLBACK,
    PROMPT,
    ABORT,
    SKIP,
    SEND,
    HOP,
    TRANSLATE,
    DELIVER,
    DROP,
    TIMEOUT,
    REROUTE,
    NODE_DOWN,
    NODE_UP,
    LINK_DOWN,
    LINK_UP,
)

#: Labels of the tool invocation LTS (the ones the ``lts`` check reads).
PROTOCOL_LABELS: frozenset[str] = frozenset(
    (CALL, VALIDATE, APPROVE, DENY, EXECUTE, RESULT, ERROR, RETRY, FALLBACK, PROMPT, ABORT)
)
#: Labels left out at trace level ``protocol``.
TRANSPORT_LABELS: frozenset[str] = frozenset((SEND, HOP, DELIVER))

TRACE_LEVELS: tuple[str, ...] = ("full", "protocol", "off")

NULL = "null"


def js(value: Any) -> str:
    """A compact JSON fragment (strings escaped; ``None`` → ``null``)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def owner_fragment(wf: str, inst: int | None, task: str, inv: int | None, tool: str) -> str:
    """The ``"wf":..,"inst":..,"task":..,"inv":..,"tool":..`` part of a line (JSON fragments
    for ``wf``, ``task``, ``tool``), computed once per invocation."""
    return (
        f'"wf":{wf},"inst":{NULL if inst is None else inst},"task":{task},'
        f'"inv":{NULL if inv is None else inv},"tool":{tool}'
    )


NO_OWNER = owner_fragment(NULL, None, NULL, None, NULL)


class TraceWriter:
    """Writes trace lines to a text file, buffered; ``full``/``enabled`` gate the callers.

    ``full`` is True at level ``full`` (transport events are written); ``enabled`` is
    False at level ``off``. Callers test these flags before building a line.
    """

    __slots__ = (
        "_buffer",
        "_file",
        "_head",
        "_last_t",
        "_last_ts",
        "_limit",
        "enabled",
        "full",
        "lines",
        "seq",
    )

    def __init__(self, file: IO[str], replication: int, level: str, buffer_lines: int = 8192):
        if level not in TRACE_LEVELS:
            raise ValueError(f"trace level must be one of {', '.join(TRACE_LEVELS)}")
        self._file = file
        self._head = f',"rep":{replication},"label":"'
        self._buffer: list[str] = []
        self._limit = buffer_lines
        self._last_t = -1.0
        self._last_ts = ""
        self.enabled = level != "off"
        self.full = level == "full"
        self.seq = 0
        self.lines = 0

    def line(self, t: float, label: str, agent: str, owner: str, proto: str, detail: str) -> None:
        """Append one line: ``owner`` from :func:`owner_fragment`; ``agent``, ``proto`` and
        ``detail`` JSON fragments. The hot path: callers check ``enabled``/``full`` first."""
        if t != self._last_t:
            self._last_t = t
            self._last_ts = repr(round(t, 6))
        seq = self.seq
        self.seq = seq + 1
        self._buffer.append(
            f'{{"t":{self._last_ts},"seq":{seq}{self._head}{label}","agent":{agent},{owner},'
            f'"proto":{proto},"detail":{detail}}}\n'
        )
        if len(self._buffer) >= self._limit:
            self.flush()

    def emit(
        self,
        t: float,
        label: str,
        agent: str,
        wf: str = NULL,
        inst: int | None = None,
        task: str = NULL,
        inv: int | None = None,
        tool: str = NULL,
        proto: str = NULL,
        detail: str = "{}",
    ) -> None:
        """Append one line from its parts (JSON fragments, see :func:`js`)."""
        if not self.enabled:
            return
        self.line(t, label, agent, owner_fragment(wf, inst, task, inv, tool), proto, detail)

    def flush(self) -> None:
        """Write the buffered lines."""
        if self._buffer:
            self.lines += len(self._buffer)
            self._file.write("".join(self._buffer))
            self._buffer.clear()
        self._file.flush()
