"""A live ``serve mcp`` session as a SPEC §5 trace (``serve mcp --trace FILE``), so that
``python -m sim check FILE --scenario SCENARIO`` holds a real client to the checks.

Each ``tools/call`` is one invocation (``inv``, from 0, in arrival order; a 2026-07-28 retry
carrying the ``requestState`` of an ``InputRequiredResult`` continues the invocation it
answers). Its events, in the order the server takes them: ``call`` (detail ``target``: the
hosting agent), ``validate`` or ``error`` ``ValidationError`` (arguments against the input
schema), ``approve`` or ``deny`` when the caller's view of the descriptor asks (detail
``reason``: why it asks; for ``deny``, ``reason`` says why it was denied, one of
:data:`sim.vocabulary.DENIALS`, and ``asked`` why it asked; an answer with a used
``requestState`` is a new invocation ``call``, ``validate``, ``deny`` ``replayed``),
``execute`` (at the hosting agent; ``waited``: seconds queued for a slot; ``approved`` when
an approval was consumed), then ``result`` or ``error``.

Fields: ``t`` wall-clock seconds since the server started (a live session has no simulated
clock); ``rep`` 0; ``agent`` ``client`` for the caller's events, the hosting agent for
``execute``; ``wf`` ``serve`` (not a scenario workflow: a client's calls follow no declared
workflow); ``inst`` the client (a 2025-11-25 stdio process or HTTP session, a 2026-07-28
client by its ``clientInfo``), numbered from 0 in order of appearance; ``task`` the tool's
name; ``proto`` ``MCP+`` when the served descriptor carries MCP⁺ metadata, else ``MCP``.
Every label and detail key is :mod:`sim.vocabulary`'s; each line is written as it happens,
straight to the file (no buffer). With ``wall`` (``serve mcp`` and ``serve a2a``), every
line's detail ends with ``wall``, the UTC time of the event, as the live mesh writes it.
After an ``error`` the invocation stays open: recovery is the client's, and a client's
retry is a new ``tools/call`` the server cannot tie to it.

A line the system refuses (a full disk: ENOSPC, EIO, EFBIG) is :class:`TraceFailed`, and
so is every event after it (nothing more is written): the file is cut back to the lines
written whole before it, so that ``check`` never reads half a line (issue 38, item 8).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.interop.errors import InteropError
from sim.vocabulary import FIELD_NAMES, LABELS, WALL_FORMAT

__all__ = ["CLIENT_AGENT", "WORKFLOW", "LiveTrace", "TraceFailed"]

CLIENT_AGENT = "client"
WORKFLOW = "serve"


class TraceFailed(InteropError):
    """The trace file refused a line; it holds the ``lines`` written whole before it."""

    def __init__(self, path: Path, reason: str, lines: int) -> None:
        super().__init__(
            f"--trace {path}: cannot write: {reason} (the trace keeps the {lines} line(s) "
            "written whole before)"
        )
        self.lines = lines


class LiveTrace:
    """Appends SPEC §5 lines to a file as the session goes (see the module docstring)."""

    __slots__ = (
        "_clients",
        "_failed",
        "_fd",
        "_invocations",
        "_kept",
        "_seq",
        "_start",
        "path",
        "wall",
    )

    def __init__(self, path: str | Path, *, wall: bool = False) -> None:
        self.path = Path(path)
        self.wall = wall
        try:
            self._fd: int | None = os.open(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644
            )
        except OSError as exc:
            raise InteropError(f"--trace {path}: cannot write: {exc.strerror}") from None
        self._kept = 0  # bytes of whole lines in the file
        self._failed: TraceFailed | None = None
        self._start = time.monotonic()
        self._seq = 0
        self._invocations = 0
        self._clients: dict[Hashable, int] = {}

    def instance(self, client: Hashable) -> int:
        """The ``inst`` of ``client`` (a new number the first time it is seen)."""
        return self._clients.setdefault(client, len(self._clients))

    def invocation(self) -> int:
        """A new ``inv``."""
        self._invocations += 1
        return self._invocations - 1

    def event(
        self,
        label: str,
        *,
        agent: str,
        inst: int,
        inv: int,
        tool: str,
        proto: str,
        **detail: Any,
    ) -> None:
        """Write one line; ``detail`` keys must be ``label``'s (written in declared order)."""
        spec = LABELS[label]
        order = spec.key_names
        unknown = [k for k in detail if k not in order]
        if unknown:
            raise ValueError(f"label {label!r} declares no detail key {unknown[0]!r}")
        values = (
            round(time.monotonic() - self._start, 6),
            self._seq,
            0,
            label,
            agent,
            WORKFLOW,
            inst,
            tool,
            inv,
            tool,
            proto,
            {k: detail[k] for k in order if k in detail} | self._wall(),
        )
        line = dict(zip(FIELD_NAMES, values, strict=True))
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._append(text.encode("utf-8"))
        self._seq += 1

    def _wall(self) -> dict[str, str]:
        """``{"wall": now}`` (UTC, ISO 8601 with microseconds) when the trace keeps it."""
        if not self.wall:
            return {}
        return {"wall": datetime.now(UTC).strftime(WALL_FORMAT)}

    def _append(self, data: bytes) -> None:
        """Write ``data`` whole, or cut the file back to its whole lines and raise."""
        if self._failed is not None:
            raise self._failed
        if self._fd is None:
            raise ValueError(f"--trace {self.path}: written after close")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._failed = TraceFailed(self.path, exc.strerror or str(exc), self._seq)
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._kept)
            raise self._failed from None
        self._kept += len(data)

    @property
    def failed(self) -> TraceFailed | None:
        """The refused write (None: every line so far is in the file)."""
        return self._failed

    def close(self) -> None:
        """Close the file (never raises: what is in it is whole lines)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
