"""The first pass over one trace: the instance index, the mesh replay's per-frame counts,
the outages and the completions over time (simulated seconds throughout).

What a replay can show depends on the trace level (docs/reference/trace.md): ``full``
has every message's ``hop`` (messages move along links, link width is traffic so far);
``protocol`` leaves out ``send``, ``hop`` and ``deliver``, so the page replays what is
left: each ``call``/``invoke``/``list`` as an end-to-end flow from the caller to the
server it names (``detail.target``/``host``; the route is not in the trace), each
``translate`` at its node, each ``drop`` where it happened, and the outages. Per-link
traffic and message paths cannot be recovered at that level.

:class:`Replay` is fed by the conformance pass (its handlers, one per label, take the
pass's decoded event and its raw line): the work per event is a dictionary look-up of
its instance's record and an integer count, plus, for the labels the page draws, one
count keyed by small integers (the mesh's link, node and protocol ids, looked up once
per distinct name). ``wf_end`` and the invocations' openings read detail keys the checks
do not (``status``, ``target``/``host``: :data:`DETAIL_KEYS`), which the pass decodes with
the line for the page (a line its decoder refused has none: then they are read from the
raw line); only the outages' lines are decoded once more, alone (``between``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from sim.json_input import loads_lenient
from sim.view.mesh import Mesh
from sim.vocabulary import LABEL_NAMES

#: Time bins of the mesh replay (one frame each).
FRAMES = 200
#: Width of a timeline bin (s), unless the run is longer than TIMELINE_BINS of them.
TIMELINE_BIN = 60.0
TIMELINE_BINS = 1000
#: Labels only a ``full`` trace writes.
MESSAGE_LABELS = frozenset(("send", "hop", "deliver"))
#: Labels drawn as a flow from the caller to the server the detail names.
FLOW_LABELS = ("call", "invoke", "list")
OUTAGE_LABELS = ("node_down", "link_down", "node_up", "link_up")

#: An instance's record: ``[events but hops, hops, lines kept for the sample or None,
#: start, end, status, seq of its wf_end, events at its wf_end]`` (the first three
#: mutated per event; its events are ``rec[0] + rec[1]``: :func:`event_count`).
Record = list[Any]
#: What the sample does at an instance's first event (a list to keep its lines in, or
#: None) and at its end (its lines join the sample, with its status, None at the trace's
#: end: whether its later lines are kept).
Admit = Callable[[tuple[str, int]], "list[bytes] | None"]
Join = Callable[[tuple[str, int], list[bytes], "str | None"], bool]
#: A handler of the pass: ``(decoded event, raw line)``.
Handler = Callable[[Any, bytes], None]


#: The detail keys the page reads that the checks do not, with their value when absent
#: (``status``: the ``wf_end``'s, ``target``/``host``: the server a flow goes to): the
#: pass decodes them with the line (a consumer's ``detail_keys``).
DETAIL_KEYS: tuple[tuple[str, Any], ...] = (
    ("status", msgspec.UNSET),
    ("target", None),
    ("host", None),
)

_Named: Any = msgspec.defstruct("_Named", [(k, Any, default) for k, default in DETAIL_KEYS])
_Named.__doc__ = "The :data:`DETAIL_KEYS` of a line the pass's decoder refused."


class _Line(msgspec.Struct):
    detail: _Named | None = None


_named = msgspec.json.Decoder(_Line).decode


def named(raw: bytes) -> Any:
    """The :data:`DETAIL_KEYS` of the line ``raw`` (one the pass has read, but its
    decoder refused: its event has none of them), as attributes."""
    try:
        d = _named(raw).detail
    except msgspec.DecodeError:  # an integer past 64 bits, a detail not an object
        full = loads_lenient(raw).get("detail")
        if not isinstance(full, dict):
            return _Named()
        d = _Named(**{k: full[k] for k in _Named.__struct_fields__ if k in full})
    return d if d is not None else _Named()


def rounded(x: float) -> float:
    return round(float(x), 6)


def timeline_bin(duration: float) -> float:
    """The timeline's bin width for a run of ``duration`` s: a minute, or a whole number
    of minutes that keeps at most :data:`TIMELINE_BINS` bins."""
    minutes = math.ceil(duration / TIMELINE_BIN)
    return TIMELINE_BIN * max(1, math.ceil(minutes / TIMELINE_BINS))


def _never(key: tuple[str, int]) -> list[bytes] | None:
    return None


def _kept(key: tuple[str, int], lines: list[bytes], status: str | None) -> bool:
    return False


class Replay:
    """Fed every event of one trace, in trace order, by :meth:`handlers`. ``admit`` and
    ``join`` are the sample's (:class:`~sim.view.fragment.Sample`; default: nothing kept).

    Invariants: ``records`` has one :data:`Record` per ``(wf, inst)`` seen (events of no
    instance count under a key holding None, never listed); the counts are keyed by
    packed integers (:meth:`to_json` unpacks them in the order the tuples sort)."""

    def __init__(
        self,
        mesh: Mesh,
        duration: float,
        wanted: set[int],
        admit: Admit = _never,
        join: Join = _kept,
    ) -> None:
        self.mesh = mesh
        self.duration = max(duration, 1e-9)
        self.bin = timeline_bin(self.duration)
        self.wanted = wanted
        self.admit, self.join = admit, join
        self.records: dict[tuple[Any, Any], Record] = {}
        self.seq_inst: dict[int, tuple[str, int]] = {}
        #: (frame, link, proto) packed as ``(frame * links + link) * protos + proto + 1``
        self.hops: dict[int, int] = {}
        self.translations: dict[tuple[int, int], int] = {}
        #: (frame, caller node, server node, proto) packed as
        #: ``frame * _flow_keys + (caller * nodes + server) * protos + proto + 1``
        self.flows: dict[int, int] = {}
        self.drops: dict[tuple[int, int], int] = {}
        self.ended: dict[tuple[str, int], int] = {}
        self.down: list[list[Any]] = []
        self.open_down: dict[tuple[str, str], float] = {}
        self.last_t = 0.0
        self.messages = False
        self._protos = len(mesh.protocols) + 1
        self._links = max(1, len(mesh.links)) * self._protos
        self._nodes = max(1, mesh.node_count)
        self._flow_keys = self._nodes * self._nodes * self._protos
        #: (from, to, proto) of a hop → its packed (link, proto), -1 when no link is drawn
        self._hop_ids: dict[tuple[Any, Any, Any], int] = {}
        #: wf → inst → the record of ``records`` (what each event looks up: no tuple built)
        self._by_wf: dict[Any, dict[Any, Record]] = {}
        #: any event's handler (its instance's count), a message's, a hop's
        self.count, self._message, self._hop = self._counting()

    def handlers(self) -> Mapping[str, Handler]:
        """Label → this replay's handler of it (every label)."""
        out: dict[str, Handler] = dict.fromkeys(LABEL_NAMES, self.count)
        out |= dict.fromkeys(MESSAGE_LABELS - {"hop"}, self._message)
        out |= dict.fromkeys(FLOW_LABELS, self._flowing())
        out |= dict.fromkeys(OUTAGE_LABELS, self.on_outage)
        out |= {
            "hop": self._hop,
            "translate": self.on_translate,
            "drop": self.on_drop,
            "wf_end": self.on_wf_end,
        }
        if self.wanted:
            return {lab: self._noting(h) for lab, h in out.items()}
        return out

    def _noting(self, handler: Handler) -> Handler:
        """``handler``, after noting the instance of a wanted ``seq``."""
        wanted, seq_inst = self.wanted, self.seq_inst

        def noting(ev: Any, raw: bytes) -> None:
            if ev.seq in wanted and ev.wf is not None and ev.inst is not None:
                seq_inst[ev.seq] = (ev.wf, ev.inst)
            handler(ev, raw)

        return noting

    def frame(self, t: float | None) -> int:
        """The frame of time ``t`` (an event without one: that of the last drawn)."""
        if t is None:
            t = self.last_t
        return min(FRAMES - 1, max(0, int(t / self.duration * FRAMES)))

    def span(self, t: float) -> tuple[int, float, float]:
        """``(frame, lo, hi)``: the frame of ``t`` and the times ``[lo, hi)`` it holds
        (exactly those :meth:`frame` maps to it: its edges found float by float)."""
        f = self.frame(t)
        lo = -math.inf if f == 0 else self._edge(f)
        hi = math.inf if f == FRAMES - 1 else self._edge(f + 1)
        return f, lo, hi

    def _edge(self, f: int) -> float:
        """The least time whose frame is ``f`` or later (0 < f < FRAMES)."""
        t = f * self.duration / FRAMES
        while self.frame(t) >= f:
            t = math.nextafter(t, -math.inf)
        while self.frame(t) < f:
            t = math.nextafter(t, math.inf)
        return t

    def _first(self, ev: Any) -> Record:
        """The record of the instance of ``ev``, its first event (admitted to the sample
        or not, once)."""
        wf, inst = ev.wf, ev.inst
        lines = None if wf is None or inst is None else self.admit((wf, inst))
        rec = self.records[(wf, inst)] = [0, 0, lines, ev.t, None, "open", None, 0]
        by_inst = self._by_wf.get(wf)
        if by_inst is None:
            by_inst = self._by_wf[wf] = {}
        by_inst[inst] = rec
        return rec

    def _counting(self) -> tuple[Handler, Handler, Handler]:
        """The handlers of most events (closures over what they update, the cheapest
        calls): any event (its instance's count, its line kept while sampled), a message
        (noted), a hop (its instance's hops, its link's count in its frame). An event's
        record is found by two look-ups (``wf``, then ``inst``: no key built), a hop's
        link by one (its ends, once per distinct ends)."""
        by_wf, first = self._by_wf, self._first
        hop_ids, hop_id, hops = self._hop_ids, self._hop_id, self.hops
        links, frame, span = self._links, self.frame, self.span
        # the frame of the last hop drawn, its times [lo, hi) and its first packed key
        f, lo, hi, base = 0, 0.0, 0.0, 0

        def on_event(ev: Any, raw: bytes) -> None:
            try:
                rec = by_wf[ev.wf][ev.inst]
            except KeyError:
                rec = first(ev)
            rec[0] += 1
            lines = rec[2]
            if lines is not None:
                lines.append(raw)

        def on_message(ev: Any, raw: bytes) -> None:
            self.messages = True
            try:
                rec = by_wf[ev.wf][ev.inst]
            except KeyError:
                rec = first(ev)
            rec[0] += 1
            lines = rec[2]
            if lines is not None:
                lines.append(raw)

        def on_hop(ev: Any, raw: bytes) -> None:
            try:
                rec = by_wf[ev.wf][ev.inst]
            except KeyError:
                rec = first(ev)
            rec[1] += 1  # a hop counts among the instance's events as one of its hops
            lines = rec[2]
            if lines is not None:
                lines.append(raw)
            d = ev.detail
            try:
                ids = hop_ids[d.from_, d.to, d.proto or ev.proto]
            except KeyError:
                ids = hop_id(d.from_, d.to, d.proto or ev.proto)
            if ids >= 0:
                nonlocal f, lo, hi, base
                t = ev.t
                try:
                    if not lo <= t < hi:  # another frame (t never decreases in a file)
                        f, lo, hi = span(t)
                        base = f * links
                except TypeError:  # no t
                    f, lo, hi = frame(t), 0.0, 0.0
                    base = f * links
                key = base + ids
                hops[key] = hops.get(key, 0) + 1

        return on_event, on_message, on_hop

    def _hop_id(self, a: Any, b: Any, proto: Any) -> int:
        link = self.mesh.link_of(a, b)
        ids = -1 if link is None else link * self._protos + self.mesh.proto_index(proto) + 1
        if len(self._hop_ids) < 1 << 16:  # the mesh's links × protocols; a bad trace: bounded
            self._hop_ids[(a, b, proto)] = ids
        return ids

    def _record(self, ev: Any) -> Record:
        """The record of ``ev``'s instance, ``ev`` counted (its line kept while sampled):
        what :meth:`count` does, for the handlers that do more."""
        try:
            rec = self._by_wf[ev.wf][ev.inst]
        except KeyError:
            rec = self._first(ev)
        rec[0] += 1
        return rec

    def on_translate(self, ev: Any, raw: bytes) -> None:
        lines = self._record(ev)[2]
        if lines is not None:
            lines.append(raw)
        node = self.mesh.node_of(ev.detail.at or ev.agent)
        if node is not None:
            k = (self.frame(ev.t), node)
            self.translations[k] = self.translations.get(k, 0) + 1

    def _flowing(self) -> Handler:
        """The handler of a flow (``call``/``invoke``/``list``): its instance's count, and
        the count of its ``(frame, caller node, server node, proto)`` when it goes from
        one drawn node to another (packed as :meth:`_flow_ids` and the frame's first
        key; the nodes looked up once per ``(agent, server, proto)``, the frame once per
        frame)."""
        by_wf, first, flows = self._by_wf, self._first, self.flows
        frame, span, per_frame = self.frame, self.span, self._flow_keys
        ends: dict[tuple[Any, Any, Any], int | None] = {}
        # the frame of the last flow drawn, its times [lo, hi) and its first packed key
        lo, hi, base = 0.0, 0.0, 0

        def on_flow(ev: Any, raw: bytes) -> None:
            try:
                rec = by_wf[ev.wf][ev.inst]
            except KeyError:
                rec = first(ev)
            rec[0] += 1
            lines = rec[2]
            if lines is not None:
                lines.append(raw)
            d = ev.detail
            try:
                server = d.target or d.host
            except AttributeError:  # a line the pass's decoder refused
                d = named(raw)
                server = d.target or d.host
            key = (ev.agent, server, ev.proto)
            try:
                ids = ends[key]
            except KeyError:
                ids = self._flow_ids(*key)
                if len(ends) < 1 << 16:  # agents × servers × protocols; a bad trace: bounded
                    ends[key] = ids
            except TypeError:  # an unhashable server (a trace not the engine's)
                ids = self._flow_ids(*key)
            if ids is not None:
                nonlocal lo, hi, base
                t = ev.t
                try:
                    if not lo <= t < hi:  # another frame (t never decreases in a file)
                        f, lo, hi = span(t)
                        base = f * per_frame
                except TypeError:  # no t
                    lo, hi, base = 0.0, 0.0, frame(t) * per_frame
                k = base + ids
                flows[k] = flows.get(k, 0) + 1

        return on_flow

    def _flow_ids(self, agent: Any, server: Any, proto: Any) -> int | None:
        """``(caller node, server node, proto)`` of a flow between two drawn nodes,
        packed as ``(caller * nodes + server) * (protos + 1) + proto + 1``, else None."""
        mesh = self.mesh
        a, b = mesh.node_of(agent), mesh.node_of(server)
        if a is None or b is None or a == b:
            return None
        return (a * self._nodes + b) * self._protos + mesh.proto_index(proto) + 1

    def on_drop(self, ev: Any, raw: bytes) -> None:
        lines = self._record(ev)[2]
        if lines is not None:
            lines.append(raw)
        node = self.mesh.node_of(ev.agent)
        if node is not None:
            k = (self.frame(ev.t), node)
            self.drops[k] = self.drops.get(k, 0) + 1

    def on_outage(self, ev: Any, raw: bytes) -> None:
        self.count(ev, raw)
        t = self.last_t = self.last_t if ev.t is None else ev.t
        label = ev.label
        thing = _thing(loads_lenient(raw))
        if label.endswith("_down"):
            self.open_down[(label[:4], thing)] = t
            return
        start = self.open_down.pop((label[:4], thing), None)
        if start is not None:
            self.down.append([label[:4], thing, rounded(start), rounded(t)])

    def on_wf_end(self, ev: Any, raw: bytes) -> None:
        rec = self._record(ev)
        lines = rec[2]
        if lines is not None:
            lines.append(raw)
        wf, inst = ev.wf, ev.inst
        if wf is None or inst is None:
            return
        t = self.last_t = self.last_t if ev.t is None else ev.t
        try:
            status = ev.detail.status
        except AttributeError:  # a line the pass's decoder refused
            status = named(raw).status
        rec[4], rec[6], rec[7] = t, ev.seq, rec[0] + rec[1]
        rec[5] = status = "ended" if status is msgspec.UNSET else str(status)
        k = (status, int(t // self.bin))
        self.ended[k] = self.ended.get(k, 0) + 1
        lines = rec[2]
        if lines is not None:  # its lines join the sample; later ones are a new piece
            rec[2] = [] if self.join((wf, inst), lines, status) else None

    def open_instances(self) -> list[tuple[tuple[str, int], list[bytes]]]:
        """The instances whose last lines have not joined the sample (by key), with them."""
        return sorted(
            (k, rec[2])
            for k, rec in self.records.items()
            if rec[2] and k[0] is not None and k[1] is not None
        )

    def finish(self) -> None:
        """At the trace's end: the outages still open end at the run's end (or its last
        event drawn, if later)."""
        for (kind, thing), start in sorted(self.open_down.items()):
            end = max(self.last_t, self.duration)
            self.down.append([kind, thing, rounded(start), rounded(end)])
        self.down.sort()
        self.messages = self.messages or any(rec[1] for rec in self.records.values())

    @property
    def instances(self) -> dict[tuple[str, int], Record]:
        """The records of the instances (events of no instance left out)."""
        return {k: r for k, r in self.records.items() if k[0] is not None and k[1] is not None}

    @property
    def level(self) -> str:
        """``full`` (messages recorded), ``protocol`` (events but no message) or ``off``."""
        return "full" if self.messages else ("protocol" if self.records else "off")

    def to_json(self) -> dict[str, Any]:
        """The replay's arrays: hops ``[frame, link, proto, n]``, translations and drops
        ``[frame, node, n]``, flows ``[frame, caller node, server node, proto, n]``, outages
        ``[kind, thing, start, end]``, and the timeline (instances ended per bin, by status)."""
        bins = int(self.duration // self.bin) + 1
        ended: dict[str, list[int]] = {}
        for (status, b), n in sorted(self.ended.items()):
            ended.setdefault(status, [0] * bins)[min(b, bins - 1)] += n
        hops = []
        for key, n in sorted(self.hops.items()):
            f, ids = divmod(key, self._links)
            link, proto = divmod(ids, self._protos)
            hops.append([f, link, proto - 1, n])
        flows = []
        for key, n in sorted(self.flows.items()):
            f, ids = divmod(key, self._flow_keys)
            ends, proto = divmod(ids, self._protos)
            flows.append([f, *divmod(ends, self._nodes), proto - 1, n])
        return {
            "level": self.level,
            "hops": hops,
            "translations": [[f, ni, n] for (f, ni), n in sorted(self.translations.items())],
            "flows": flows,
            "drops": [[f, ni, n] for (f, ni), n in sorted(self.drops.items())],
            "down": self.down,
            "timeline": {"bin": self.bin, "ended": ended},
        }


def ended_at(rec: Record) -> int | None:
    """The ``seq`` of the instance's ``wf_end`` when no event of it came after, else None."""
    return rec[6] if rec[6] is not None and rec[7] == rec[0] + rec[1] else None


def event_count(rec: Record) -> int:
    """The instance's events (hops among them)."""
    return int(rec[0] + rec[1])


def _thing(e: dict[str, Any]) -> str:
    """The node or link an outage event names (``a|b`` for a link, ends sorted)."""
    detail = e.get("detail") or {}
    ends = detail.get("link") or detail.get("between")
    if isinstance(ends, list) and len(ends) == 2:
        return "|".join(sorted(str(x) for x in ends))
    if "from" in detail and "to" in detail:
        return "|".join(sorted([str(detail["from"]), str(detail["to"])]))
    return str(e.get("agent"))
