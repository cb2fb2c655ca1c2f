"""The parts of a live run (one per process, and the controller's) as one SPEC §5 trace.

Every process writes its own part (:mod:`sim.live.parts`) on the machine's shared
monotonic clock, so the merge is a sort: by ``t`` at the parts' full precision (a reply
is never written before its request on another process, even within a microsecond),
then by part and line. Then ``t`` is rounded to the trace's six decimals, ``seq``
numbered from 0, and the ids the processes drew from their own spaces (``inst``,
``inv`` with ``detail.parent``, ``detail.msg``) renumbered densely in order of first
appearance.

A killed process (``kill: true``) cannot record what it lost. The controller killed it
at a known time, so the merge writes what the engine writes for a node that goes down:
its running instances end ``failed``/``initiator_down``, and every message that never
reached an end and was last at that agent (or on its way there) is dropped
``node_down``, at the time of the kill.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from sim.vocabulary import FIELD_NAMES, TRANSPORT_LABELS

__all__ = ["merge", "read_parts"]

Event = dict[str, Any]


def read_parts(paths: Sequence[Path]) -> list[Event]:
    """Every line of ``paths``, sorted (see the module); malformed lines raise
    ValueError naming the file and line."""
    keyed: list[tuple[float, int, int, Event]] = []
    for p, path in enumerate(paths):
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line)
                    keyed.append((float(ev["t"]), p, n, ev))
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path}:{n + 1}: not a trace line: {exc}") from None
    keyed.sort(key=lambda k: (k[0], k[1], k[2]))
    return [k[3] for k in keyed]


def reconcile_kills(events: list[Event], kills: Iterable[tuple[str, float]]) -> list[Event]:
    """``events`` with what each killed agent lost at its kill (see the module), sorted."""
    added: list[Event] = []
    for agent, t in kills:
        added.extend(_lost_at(events, agent, t))
    if not added:
        return events
    return sorted([*events, *added], key=lambda e: float(e["t"]))


def _line(t: float, label: str, agent: str, ev: Event, **detail: Any) -> Event:
    return {
        "t": t,
        "seq": 0,
        "rep": ev["rep"],
        "label": label,
        "agent": agent,
        "wf": ev["wf"],
        "inst": ev["inst"],
        "task": ev.get("task") if label == "drop" else None,
        "inv": ev.get("inv") if label == "drop" else None,
        "tool": ev.get("tool") if label == "drop" else None,
        "proto": ev.get("proto") if label == "drop" else None,
        "detail": detail,
    }


def _lost_at(events: list[Event], agent: str, t: float) -> list[Event]:
    out: list[Event] = []
    started: dict[Any, Event] = {}
    ended: set[Any] = set()
    last: dict[Any, Event] = {}
    finished: set[Any] = set()
    for ev in events:
        label = ev["label"]
        if label == "wf_start" and ev["agent"] == agent and float(ev["t"]) <= t:
            started[(ev["wf"], ev["inst"])] = ev
        elif label == "wf_end":
            ended.add((ev["wf"], ev["inst"]))
        msg = (ev.get("detail") or {}).get("msg")
        if msg is None:
            continue
        if label in ("deliver", "drop"):
            finished.add(msg)
        elif float(ev["t"]) <= t:
            last[msg] = ev
    for key, ev in started.items():
        if key not in ended:
            latency = round(t - float(ev["t"]), 9)
            out.append(
                _line(
                    t,
                    "wf_end",
                    agent,
                    ev,
                    status="failed",
                    latency=latency,
                    reason="initiator_down",
                )
            )
    for msg, ev in last.items():
        if msg in finished:
            continue
        d = ev["detail"]
        here = (
            ev["agent"] == agent if ev["label"] != "hop" else agent in (d.get("from"), d.get("to"))
        )
        if here:
            out.append(_line(t, "drop", agent, ev, msg=msg, reason="node_down"))
    return out


class _Ids:
    """Dense ids in order of first appearance."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[Any, int] = {}

    def __call__(self, raw: Any) -> Any:
        if raw is None:
            return None
        hit = self._seen.get(raw)
        if hit is None:
            hit = self._seen[raw] = len(self._seen)
        return hit


def renumbered(events: Iterable[Event]) -> Iterator[Event]:
    """The merged trace's lines: ``t`` rounded, ``seq`` from 0, ids dense."""
    inst, inv, msg = _Ids(), _Ids(), _Ids()
    for seq, ev in enumerate(events):
        d = dict(ev.get("detail") or {})
        if "msg" in d:
            d["msg"] = msg(d["msg"])
        if "parent" in d:
            d["parent"] = inv(d["parent"])
        line = dict(ev)
        line["t"] = round(float(ev["t"]), 6)
        line["seq"] = seq
        line["inst"] = inst((ev["wf"], ev["inst"])) if ev.get("inst") is not None else None
        line["inv"] = inv(ev["inv"]) if ev.get("inv") is not None else None
        line["detail"] = d
        yield {k: line.get(k) for k in FIELD_NAMES}


def merge(
    parts: Sequence[Path],
    out: IO[str],
    *,
    level: str = "full",
    kills: Iterable[tuple[str, float]] = (),
) -> list[Event]:
    """Write the merged trace of ``parts`` to ``out`` (at ``level``); returns every
    event at level full, renumbered (what the metrics count)."""
    full = list(renumbered(reconcile_kills(read_parts(parts), kills)))
    if level == "off":
        return full
    kept = full if level == "full" else [e for e in full if e["label"] not in TRANSPORT_LABELS]
    for seq, e in enumerate(kept):  # the ids stay those of the full trace
        out.write(json.dumps({**e, "seq": seq}, ensure_ascii=False, separators=(",", ":")) + "\n")
    return full
