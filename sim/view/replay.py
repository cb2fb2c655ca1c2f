"""The first pass over one trace: the instance index, the mesh replay's per-frame counts,
the outages and the completions over time (simulated seconds throughout).

What a replay can show depends on the trace level (docs/reference/trace.md): ``full``
has every message's ``hop`` (messages move along links, link width is traffic so far);
``protocol`` leaves out ``send``, ``hop`` and ``deliver``, so the page replays what is
left: each ``call``/``invoke``/``list`` as an end-to-end flow from the caller to the
server it names (``detail.target``/``host``; the route is not in the trace), each
``translate`` at its node, each ``drop`` where it happened, and the outages. Per-link
traffic and message paths cannot be recovered at that level.
"""

from __future__ import annotations

from typing import Any

from sim.view.mesh import Mesh

#: Time bins of the mesh replay (one frame each).
FRAMES = 200
#: Width of a timeline bin (s), unless the run is longer than TIMELINE_BINS of them.
TIMELINE_BIN = 60.0
TIMELINE_BINS = 1000
#: Labels only a ``full`` trace writes.
MESSAGE_LABELS = frozenset(("send", "hop", "deliver"))


def rounded(x: float) -> float:
    return round(float(x), 6)


def timeline_bin(duration: float) -> float:
    """The timeline's bin width for a run of ``duration`` s: a minute, or a whole number
    of minutes that keeps at most :data:`TIMELINE_BINS` bins."""
    import math

    minutes = math.ceil(duration / TIMELINE_BIN)
    return TIMELINE_BIN * max(1, math.ceil(minutes / TIMELINE_BINS))


class Replay:
    """Fed every event of one trace (decoded dicts, in trace order)."""

    def __init__(self, mesh: Mesh, duration: float, wanted: set[int]) -> None:
        self.mesh = mesh
        self.duration = max(duration, 1e-9)
        self.bin = timeline_bin(self.duration)
        self.wanted = wanted
        self.instances: dict[tuple[str, int], dict[str, Any]] = {}
        self.seq_inst: dict[int, tuple[str, int]] = {}
        self.hops: dict[tuple[int, int, int], int] = {}
        self.translations: dict[tuple[int, int], int] = {}
        self.flows: dict[tuple[int, int, int, int], int] = {}
        self.drops: dict[tuple[int, int], int] = {}
        self.ended: dict[tuple[str, int], int] = {}
        self.down: list[list[Any]] = []
        self.open_down: dict[tuple[str, str], float] = {}
        self.last_t = 0.0
        self.messages = False
        self.events = 0

    def frame(self, t: float) -> int:
        return min(FRAMES - 1, max(0, int(t / self.duration * FRAMES)))

    def feed(self, e: dict[str, Any]) -> None:
        t = float(e["t"])
        self.last_t = t
        self.events += 1
        label = e["label"]
        wf, inst = e.get("wf"), e.get("inst")
        detail = e.get("detail") or {}
        if wf is not None and inst is not None:
            key = (str(wf), int(inst))
            rec = self.instances.get(key)
            if rec is None:
                rec = {"start": t, "end": None, "status": "open", "n": 0, "hops": 0}
                self.instances[key] = rec
            rec["n"] += 1
            if label == "hop":
                rec["hops"] += 1
            elif label == "wf_end":
                rec["end"] = t
                rec["status"] = status = str(detail.get("status", "ended"))
                k = (status, int(t // self.bin))
                self.ended[k] = self.ended.get(k, 0) + 1
            if e["seq"] in self.wanted:
                self.seq_inst[int(e["seq"])] = key
        if label in MESSAGE_LABELS:
            self.messages = True
        mesh = self.mesh
        if label == "hop":
            link = mesh.link_of(detail.get("from"), detail.get("to"))
            proto = mesh.proto_index(detail.get("proto") or e.get("proto"))
            if link is not None:
                k3 = (self.frame(t), link, proto)
                self.hops[k3] = self.hops.get(k3, 0) + 1
        elif label == "translate":
            node = mesh.node_of(detail.get("at") or e.get("agent"))
            if node is not None:
                k2 = (self.frame(t), node)
                self.translations[k2] = self.translations.get(k2, 0) + 1
        elif label in ("call", "invoke", "list"):
            a = mesh.node_of(e.get("agent"))
            b = mesh.node_of(detail.get("target") or detail.get("host"))
            if a is not None and b is not None and a != b:
                k4 = (self.frame(t), a, b, mesh.proto_index(e.get("proto")))
                self.flows[k4] = self.flows.get(k4, 0) + 1
        elif label == "drop":
            node = mesh.node_of(e.get("agent"))
            if node is not None:
                k2 = (self.frame(t), node)
                self.drops[k2] = self.drops.get(k2, 0) + 1
        elif label in ("node_down", "link_down"):
            self.open_down[(label[:4], _thing(e))] = t
        elif label in ("node_up", "link_up"):
            start = self.open_down.pop((label[:4], _thing(e)), None)
            if start is not None:
                self.down.append([label[:4], _thing(e), rounded(start), rounded(t)])

    def finish(self) -> None:
        for (kind, thing), start in sorted(self.open_down.items()):
            end = max(self.last_t, self.duration)
            self.down.append([kind, thing, rounded(start), rounded(end)])
        self.down.sort()

    @property
    def level(self) -> str:
        """``full`` (messages recorded), ``protocol`` (events but no message) or ``off``."""
        return "full" if self.messages else ("protocol" if self.events else "off")

    def to_json(self) -> dict[str, Any]:
        """The replay's arrays: hops ``[frame, link, proto, n]``, translations and drops
        ``[frame, node, n]``, flows ``[frame, caller node, server node, proto, n]``, outages
        ``[kind, thing, start, end]``, and the timeline (instances ended per bin, by status)."""
        bins = int(self.duration // self.bin) + 1
        ended: dict[str, list[int]] = {}
        for (status, b), n in sorted(self.ended.items()):
            ended.setdefault(status, [0] * bins)[min(b, bins - 1)] += n
        return {
            "level": self.level,
            "hops": [[f, li, pi, n] for (f, li, pi), n in sorted(self.hops.items())],
            "translations": [[f, ni, n] for (f, ni), n in sorted(self.translations.items())],
            "flows": [[f, a, b, p, n] for (f, a, b, p), n in sorted(self.flows.items())],
            "drops": [[f, ni, n] for (f, ni), n in sorted(self.drops.items())],
            "down": self.down,
            "timeline": {"bin": self.bin, "ended": ended},
        }


def _thing(e: dict[str, Any]) -> str:
    """The node or link an outage event names (``a|b`` for a link, ends sorted)."""
    detail = e.get("detail") or {}
    ends = detail.get("link") or detail.get("between")
    if isinstance(ends, list) and len(ends) == 2:
        return "|".join(sorted(str(x) for x in ends))
    if "from" in detail and "to" in detail:
        return "|".join(sorted([str(detail["from"]), str(detail["to"])]))
    return str(e.get("agent"))


def compact(e: dict[str, Any], owner: bool = False) -> list[Any]:
    """An event as ``[t, seq, label, agent, task, inv, tool, proto, detail]`` (then
    ``wf, inst`` when ``owner``: an event shown outside its instance's list)."""
    out = [
        e["t"],
        e["seq"],
        e["label"],
        e.get("agent"),
        e.get("task"),
        e.get("inv"),
        e.get("tool"),
        e.get("proto"),
        e.get("detail") or {},
    ]
    return [*out, e.get("wf"), e.get("inst")] if owner else out
