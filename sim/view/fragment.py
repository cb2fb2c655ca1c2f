"""One run's part of the explorer page, built in the pass that checks the run.

:class:`PagePass` is a consumer of the conformance pass (:mod:`sim.conformance.checks`):
fed every event of a trace in the same pass as the checks, it builds the run's replay
(:class:`~sim.view.replay.Replay`: instance index, per-frame counts, outages, timeline)
and keeps a bounded, seeded sample of whole instances (:class:`Sample`: their raw lines,
at most :data:`SAMPLE_EVENTS` events, the most the page shows of a run), which
:meth:`PagePass.fragment` decodes and writes, compact and JSON-encoded as the page embeds
them, to an events file, with the events of every counterexample's instance, and the
violated checks and properties with their counterexamples. It reads the events the pass
decoded (no second decode of a line but for the few detail keys the pass does not read,
:mod:`sim.view.replay`); an event of an instance not sampled costs a look-up and a
count. The events file is so bounded by the sample, not the trace (train_booking:
106 MB before, beside a 193 MB trace). The worker that ran a replication stores both
beside its trace (:data:`VIEW_FILE`, :data:`EVENTS_FILE`, with their digests in
``run.json``), so the page of a results folder never reads a trace again: it picks the
sampled instances' events from the events files by offset.

A stored fragment is used only for the scenario it was checked with
(``checked_with``: :func:`scenario_digest`); otherwise the page builds it again from
the trace, in memory, with the same code. Times are simulated seconds.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from sim.json_input import loads_lenient
from sim.view.compact import compact, compact_line
from sim.view.mesh import Mesh
from sim.view.replay import DETAIL_KEYS, Replay, ended_at, event_count

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sim.scenario import Scenario

#: The run's page fragment (JSON): replay, instances with their event segments, violated.
VIEW_FILE = "view.json"
#: The compact events of each instance, JSON-encoded (one segment a line, no brackets).
EVENTS_FILE = "view_events.jsonl"

#: The encoding of the page's data block (:func:`sim.view.page.render_page`): a value
#: encoded alone is the text it has inside the whole index.
encode_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode

_fast = msgspec.json.Encoder(order="sorted").encode
#: msgspec writes what :func:`encode_json` writes but for: a byte outside printable
#: ASCII, a ``\\u`` escape, a number below 1e-4 (``0.00001``, Python ``1e-05``) or
#: in exponent form (``1e16``, Python ``1e+16``; the same threshold otherwise).
_PRINTABLE = bytes(range(0x20, 0x7F))
#: every digit as ``0``: a digit followed by ``e``/``E`` (an exponent) is then ``0e``/``0E``,
#: found by two scans at C speed (a regular expression looks at each byte in turn)
_ZEROED = bytes.maketrans(b"123456789", b"000000000")


def _may_differ(text: bytes) -> bool:
    if text.translate(None, _PRINTABLE) or b"\\u" in text or b"0.0000" in text:
        return True
    zeroed = text.translate(_ZEROED)
    return b"0e" in zeroed or b"0E" in zeroed


def encode_events(events: list[Any]) -> bytes:
    """:func:`encode_json` of ``events`` (finite numbers only, as a trace holds), as ASCII
    bytes: msgspec's encoding when it cannot differ, else the standard library's."""
    return _encoded(events, nulls=False)


def encode_fragment(data: dict[str, Any]) -> bytes:
    """:func:`encode_json` of a fragment, as ASCII bytes: msgspec's encoding when it
    cannot differ, else the standard library's. A ``null`` may stand for a number that
    is not finite (msgspec's ``null``, the standard library's ``Infinity``): then too."""
    return _encoded(data, nulls=True)


def _encoded(value: Any, nulls: bool) -> bytes:
    """msgspec's encoding of ``value`` if it is :func:`encode_json`'s (``nulls``: a
    ``null`` in it may differ too), else the standard library's."""
    try:
        text = _fast(value)
    except (TypeError, OverflowError, ValueError):
        return encode_json(value).encode("ascii")
    if (nulls and b"null" in text) or _may_differ(text):
        return encode_json(value).encode("ascii")
    return text


InstanceKey = tuple[str, int]


#: Scenario fields a fragment does not depend on (the checks' ground truth, the property
#: monitor and the page's mesh never read them; the run's length is in its metrics).
NOT_READ = frozenset(
    ("description", "seed", "duration", "replications", "routers", "trace", "sweep")
)


def scenario_digest(scenario: Scenario) -> str:
    """A digest of what a fragment checked with ``scenario`` depends on: every field but
    :data:`NOT_READ` (a stored fragment is used only for a scenario with the same)."""
    text = scenario.model_dump_json(by_alias=True, exclude=set(NOT_READ))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: The most events of sampled instances a run's events file holds, besides every
#: counterexample's instances (a fifth of the page's budget,
#: :data:`sim.view.data.DEFAULT_BUDGET`: a page of five runs or more holds fewer of
#: each; about 2 MB a run).
SAMPLE_EVENTS = 20_000


def priority(key: InstanceKey, seed: int = 0) -> int:
    """The instance's place in the sample (lowest first): a hash of ``seed`` and the
    key, so that the sample is the same whatever reads the trace."""
    text = f"{seed}/{key[0]}#{key[1]}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


#: The events of instances that did not succeed kept besides the sample, the earliest
#: first, and the instances outside the sample whose lines are kept while open (for
#: them): a counterexample's instance the sample left out is most often one of them, and
#: then the trace is not read again.
SPARE_EVENTS = SAMPLE_EVENTS
SPARE_OPEN = 4096


class Sample:
    """The bounded, seeded sample of whole instances of one run (see :class:`PagePass`):
    per sampled instance its pieces (each the raw lines of its events up to its
    ``wf_end``, then those after it), their count, and the total; and ``spare``, the lines
    of the earliest instances outside it that did not succeed (at most ``SPARE_EVENTS``
    lines, each instance whole from its first event to its ``wf_end``). ``records`` are
    the replay's (:class:`~sim.view.replay.Replay`): an instance leaving the sample stops
    keeping lines there."""

    def __init__(self, cap: int, seed: int) -> None:
        self.cap = cap
        self.seed = seed
        self.records: dict[Any, list[Any]] = {}
        self.kept: dict[InstanceKey, list[list[bytes]]] = {}
        self.sizes: dict[InstanceKey, int] = {}
        self.total = 0
        self.heap: list[tuple[int, InstanceKey]] = []  # (-priority, key) of the sample
        self.left: set[InstanceKey] = set()  # instances not sampled
        self.full = False  # the sample has held more than cap events (and shed some)
        self.spare: dict[InstanceKey, list[bytes]] = {}
        self.spare_total = 0
        self.tracked = 0  # instances outside the sample whose lines are kept while open
        #: the :func:`priority` of the instances :meth:`admit` drew it for, until they join
        self.drawn: dict[InstanceKey, int] = {}

    def admit(self, key: InstanceKey) -> list[bytes] | None:
        """At a new instance's first event: a list to keep its lines in (sampled, or kept
        for ``spare`` while there is room), or None (neither, for good)."""
        if not self.full or not self.heap:
            return []
        rank = priority(key, self.seed)
        if rank < -self.heap[0][0]:
            self.drawn[key] = rank
            return []
        self.left.add(key)
        if self.spare_total < SPARE_EVENTS and self.tracked < SPARE_OPEN:
            self.tracked += 1
            return []
        return None

    def _spare(self, key: InstanceKey, lines: list[bytes], status: str | None) -> None:
        """Keep ``lines`` (an instance's, whole) in ``spare`` if it ended and did not
        succeed, while there is room."""
        if status not in (None, "succeeded") and self.spare_total + len(lines) <= SPARE_EVENTS:
            self.spare[key] = lines
            self.spare_total += len(lines)

    def join(self, key: InstanceKey, lines: list[bytes], status: str | None) -> bool:
        """``lines`` (one piece of ``key``'s events, ended with ``status``, None at the
        trace's end) join the sample, which then sheds its highest priorities while it
        holds more than ``cap`` events; whether ``key`` is still in it (its later lines
        kept). An instance outside the sample goes to ``spare`` or nowhere."""
        if key in self.left:
            self.tracked -= 1
            self._spare(key, lines, status)
            return False
        if key not in self.kept:
            self.kept[key] = []
            self.sizes[key] = 0
            rank = self.drawn.pop(key, None)
            if rank is None:
                rank = priority(key, self.seed)
            heapq.heappush(self.heap, (-rank, key))
        self.kept[key].append(lines)
        self.sizes[key] += len(lines)
        self.total += len(lines)
        while self.total > self.cap and self.heap:
            self.full = True
            _, out = heapq.heappop(self.heap)
            self.total -= self.sizes.pop(out)
            pieces = self.kept.pop(out)
            self.left.add(out)
            rec = self.records.get(out)
            if rec is not None:
                rec[2] = None
                if rec[4] is not None:  # ended: its lines are whole
                    self._spare(out, [line for piece in pieces for line in piece], rec[5])
        return key in self.kept

    def take_spare(self, keys: set[InstanceKey]) -> set[InstanceKey]:
        """Move the instances of ``keys`` that ``spare`` holds whole (no event of theirs
        after their ``wf_end``) into the sample; the others of ``keys``."""
        rest = set()
        for key in sorted(keys):
            lines = self.spare.get(key)
            rec = self.records.get(key)
            if lines is None or rec is None or ended_at(rec) is None:
                rest.add(key)
                continue
            self.left.discard(key)
            self.kept[key] = [lines]
            self.sizes[key] = len(lines)
        return rest


class PagePass:
    """A consumer of the conformance pass building one run's page data (see the module
    docstring). ``wanted``: the ``seq``\\ s whose instance the replay notes (the
    counterexamples known before the pass); ``events``: the binary file the sampled
    instances' encoded events are written to (by :meth:`fragment`).

    The sample is bounded: an instance is sampled from its first event until the sample
    first holds more than ``cap`` events, then only when its :func:`priority` is below
    the highest one sampled; each time an instance's events end (its ``wf_end``, the
    trace's end) they join the sample, and while it holds more than ``cap`` events the
    instance with the highest priority leaves it (for good). The raw lines of sampled
    instances are kept (the events of instances not sampled cost a look-up and a count,
    and an append while kept for :attr:`Sample.spare`); only those of the sample at the
    end are decoded and encoded, by :meth:`fragment`, which adds every counterexample's
    instance that was not: from ``spare`` when it holds it, else reading the trace once
    more for those alone, up to the last line of the last of them."""

    history = False
    #: the detail keys the page reads that the checks do not (decoded in the pass)
    detail_keys = DETAIL_KEYS

    def __init__(
        self,
        mesh: Mesh,
        duration: float,
        events: IO[bytes],
        wanted: frozenset[int] = frozenset(),
        cap: int = SAMPLE_EVENTS,
        seed: int = 0,
    ) -> None:
        self.sample = Sample(cap, seed)
        self.replay = Replay(mesh, duration, set(wanted), self.sample.admit, self.sample.join)
        self.sample.records = self.replay.records
        self.events = events
        #: per instance, its ``[offset, length]`` segments in the events file, in order
        self.segments: dict[InstanceKey, list[list[int]]] = {}
        self._decode = msgspec.json.Decoder().decode

    @property
    def sizes(self) -> dict[InstanceKey, int]:
        """Events per sampled instance."""
        return self.sample.sizes

    def handlers(self) -> Mapping[str, Any]:
        return self.replay.handlers()

    def end_instance(self, key: Any, invs: Sequence[Any]) -> None:
        """Nothing: an instance's lines join the sample at its ``wf_end`` (a later event
        of it starts a new piece)."""

    def end_trace(self) -> None:
        for key, lines in self.replay.open_instances():
            self.sample.join(key, lines, None)
        self.replay.finish()

    def _event(self, raw: bytes) -> dict[str, Any]:
        try:
            return self._decode(raw)  # type: ignore[no-any-return]
        except msgspec.ValidationError:  # an integer past int64 in a detail key: in full
            return loads_lenient(raw)  # type: ignore[no-any-return]

    def _reread(self, trace: Path, keys: set[InstanceKey]) -> None:
        """Add the events of the instances ``keys`` from ``trace`` (one piece each, in
        trace order), whatever the cap: counterexamples the sample left out. The read
        stops after the last ``wf_end`` among them when no event of theirs came after it
        (a trace file the pass has read is ordered by ``seq``); a line is decoded for its
        ``seq``, ``wf`` and ``inst`` only."""
        from sim.conformance.events import read_blocks

        ends = [ended_at(self.replay.records[k]) for k in keys]
        last = None if None in ends else max(e for e in ends if e is not None)
        pieces: dict[InstanceKey, list[bytes]] = {k: [] for k in keys}
        _, blocks = read_blocks(trace)
        try:
            for block in blocks:
                for raw in block:
                    try:
                        head = _head(raw)
                    except msgspec.DecodeError:
                        if not raw.strip():
                            continue
                        e = self._event(raw)
                        head = _Head(e["seq"], e.get("wf"), e.get("inst"))
                    piece = pieces.get((head.wf, head.inst))
                    if piece is not None:
                        piece.append(raw)
                    elif last is not None and head.seq > last:
                        raise _Done
        except _Done:
            pass
        finally:
            close = getattr(blocks, "close", None)
            if close is not None:
                close()
        for key in sorted(pieces):
            if pieces[key]:
                self.sample.left.discard(key)
                self.sample.kept[key] = [pieces[key]]
                self.sample.sizes[key] = len(pieces[key])

    def _write(self) -> None:
        """Write the sampled instances' events (instances in key order, each piece a line)."""
        offset = 0
        kept = self.sample.kept
        for key in sorted(kept):
            for lines in kept[key]:
                events = [compact_line(raw) or compact(self._event(raw)) for raw in lines]
                text = encode_events(events)[1:-1]
                self.events.write(text + b"\n")
                self.segments.setdefault(key, []).append([offset, len(text)])
                offset += len(text) + 1
        self.events.flush()

    def fragment(
        self,
        violated: list[dict[str, Any]],
        checked_with: str | None = None,
        trace: Path | None = None,
    ) -> dict[str, Any]:
        """The run's fragment: ``violated`` are the groups of :mod:`sim.view.violations`
        (their examples' ``instances`` set here from the replay when it noted them); the
        sampled instances' events are written now, with those of every counterexample's
        instance the sample left out (read again from ``trace``, when given). Once."""
        p = self.replay
        for g in violated:
            for ex in g["examples"]:
                if "instances" not in ex:
                    seqs = [*ex["seqs"], *ex["context"]]
                    keys = sorted({p.seq_inst[s] for s in seqs if s in p.seq_inst})
                    ex["instances"] = [f"{wf}#{inst}" for wf, inst in keys]
        named = {k for g in violated for ex in g["examples"] for k in ex["instances"]}
        indexed = p.instances
        missing = {
            key
            for key in (_instance_key(k) for k in named)
            if key in indexed and key not in self.sample.kept
        }
        missing = self.sample.take_spare(missing)
        if missing and trace is not None:
            self._reread(trace, missing)
        self._write()
        instances = [
            [wf, inst, r[5], event_count(r), r[1], r[3], r[4], self.segments.get((wf, inst), [])]
            for (wf, inst), r in sorted(indexed.items())
        ]
        return {
            "checked_with": checked_with,
            "duration": p.duration,
            "replay": p.to_json(),
            "instances": instances,
            "violated": violated,
        }


class _Head(msgspec.Struct):
    """What :meth:`PagePass._reread` decodes of a line."""

    seq: Any
    wf: Any = None
    inst: Any = None


_head = msgspec.json.Decoder(_Head).decode


class _Done(Exception):
    """The read again has passed the last line it wants."""


def _instance_key(text: str) -> InstanceKey:
    """``(wf, inst)`` of a ``wf#inst`` name."""
    wf, _, inst = text.rpartition("#")
    return (wf, int(inst))


def store(directory: Path, data: dict[str, Any]) -> None:
    """Write ``data`` (a fragment) as ``directory/view.json``."""
    (directory / VIEW_FILE).write_bytes(encode_fragment(data))


def stored(directory: Path, checked_with: str) -> dict[str, Any] | None:
    """The fragment stored in ``directory`` for the scenario digest ``checked_with``, or
    None (none there, unreadable, or checked with another scenario)."""
    if not (directory / EVENTS_FILE).is_file():
        return None
    from sim.json_input import read_json

    try:
        data = read_json(directory / VIEW_FILE)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("checked_with") != checked_with:
        return None
    return data


def read_segments(events: IO[bytes], segments: Sequence[Sequence[int]]) -> str:
    """The JSON array of an instance's events from its segments of the events file."""
    parts = []
    for offset, length in segments:
        events.seek(offset, os.SEEK_SET)
        parts.append(events.read(length).decode("ascii"))
    return "[" + ",".join(p for p in parts if p) + "]"
