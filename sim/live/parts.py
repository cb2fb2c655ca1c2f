"""What one process of the live mesh writes: its part of the trace.

A part is a file of SPEC §5 lines (the vocabulary's fields, labels and detail keys, in
their order), written and flushed as events happen, with three differences that
:mod:`sim.live.merge` removes: ``t`` has nine decimals (the merge sorts on it, then
rounds to six), ``seq`` counts the part's own lines, and the ids ``inst``, ``inv`` and
``detail.msg`` are drawn from the process's :class:`IdSpace` (unique in the deployment,
renumbered densely by the merge). Every line's ``detail`` ends with ``wall``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import IO, Any, NamedTuple

from sim.live.clock import SceneClock
from sim.vocabulary import LABELS

__all__ = ["IdSpace", "Owner", "PartWriter"]


class Owner(NamedTuple):
    """The owner fields of an invocation's or a discovery's lines."""

    wf: str | None
    inst: int | None
    task: str | None
    inv: int | None
    tool: str | None

    def to_json(self) -> list[Any]:
        return list(self)

    @staticmethod
    def of(value: Any) -> Owner:
        """From :meth:`to_json` (a list of five values)."""
        wf, inst, task, inv, tool = value
        return Owner(wf, inst, task, inv, tool)


NO_OWNER = Owner(None, None, None, None, None)


class IdSpace:
    """Ids unique across the deployment: ``start + k × stride + index`` for k = 0, 1, ...
    (``index`` the agent's position among ``stride`` agents; a restarted process starts
    further on, ``start`` a multiple of ``stride``)."""

    __slots__ = ("_counter", "index", "start", "stride")

    def __init__(self, index: int, stride: int, start: int = 0) -> None:
        if not 0 <= index < stride or start % stride:
            raise ValueError(f"id space {index} of {stride} from {start}")
        self.index = index
        self.stride = stride
        self.start = start
        self._counter = itertools.count()

    def new(self) -> int:
        """The next id of this space."""
        return self.start + next(self._counter) * self.stride + self.index


class PartWriter:
    """Appends lines to one part file (see the module); ``rep`` is the live run's index."""

    __slots__ = ("_file", "_seq", "clock", "path", "rep")

    def __init__(self, path: str | Path, clock: SceneClock, rep: int) -> None:
        self.path = Path(path)
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self.clock = clock
        self.rep = rep
        self._seq = 0

    def event(
        self,
        label: str,
        agent: str,
        owner: Owner = NO_OWNER,
        protocol: str | None = None,
        *,
        t: float | None = None,
        **detail: Any,
    ) -> float:
        """Write one line at ``t`` (default: now) with the line's ``proto`` ``protocol``;
        ``detail`` keys must be the label's (written in the declared order, ``from``
        given as ``from_``). Returns its time."""
        spec = LABELS[label]
        if "from_" in detail:
            detail["from"] = detail.pop("from_")
        unknown = [k for k in detail if k not in spec.key_names]
        if unknown:
            raise ValueError(f"label {label!r} declares no detail key {unknown[0]!r}")
        detail["wall"] = self.clock.wall()
        when = self.clock.now() if t is None else t
        wf, inst, task, inv, tool = owner
        proto = protocol
        if spec.scope == "element":
            wf = inst = task = inv = tool = proto = None
        elif spec.scope == "instance":
            task = inv = tool = proto = None
        elif spec.scope == "task":
            inv = proto = None
        line = {
            "t": round(when, 9),
            "seq": self._seq,
            "rep": self.rep,
            "label": label,
            "agent": agent,
            "wf": wf,
            "inst": inst,
            "task": task,
            "inv": inv,
            "tool": tool,
            "proto": proto,
            "detail": {k: detail[k] for k in spec.key_names if k in detail},
        }
        self._file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()
        self._seq += 1
        return when

    def close(self) -> None:
        self._file.close()
