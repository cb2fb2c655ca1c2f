"""The recorder: one method per trace label, each updating the metrics and writing the line.

Inputs: a :class:`~sim.engine.trace.TraceWriter` (the file and its level) and the
:class:`~sim.engine.metrics.Metrics` of the replication. Every method takes the
simulated time ``t`` first (the caller reads the clock once per handler) and the JSON
fragments the caller precomputed (agent, owner fields, protocol); it counts what the
event means in the metrics (at every trace level) and, if the level keeps the label,
appends one line. The line's fields, label names and detail keys are those of
:mod:`sim.vocabulary` (a test compares every emitted line with it). Timing: none; the
recorder never schedules anything.

What the recorder is made of: the trace's clock (:class:`~sim.engine.trace.TraceClock`:
the instant's text and the next line's ``seq``), the line templates (the heads of
:func:`~sim.engine.trace.heads` and the fragments the callers give) and the counters
(:class:`~sim.engine.metrics.Metrics`, public as ``metrics``). A label's method both counts
and writes, so an event costs its component one call. The counts without a line of their
own (an approval asked, a discovery started, a re-send, a failed task, an unfinished
instance, the messages and hops the transport counts and reports at the end) are the
counters' methods (``recorder.metrics.asked(c)``). The transport writes ``send``,
``hop`` and ``deliver`` through :meth:`Recorder.send`, :meth:`Recorder.hop` and
:meth:`Recorder.deliver`, only at level ``full``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sim.engine.metrics import Metrics, WorkflowCounters
from sim.engine.trace import (
    AFTER_T,
    LINE_OPEN,
    NO_OWNER,
    NULL,
    TraceClock,
    TraceWriter,
    heads,
    js,
    owner_fragment,
    seconds,
)
from sim.engine.trace import (
    BEFORE_DETAIL as _DETAIL,
)
from sim.engine.trace import (
    BEFORE_PROTO as _PROTO,
)
from sim.vocabulary import FIELD_NAMES, LABELS

if TYPE_CHECKING:
    from sim.engine.paths import Hop, Path

# the line templates below write the fields in the vocabulary's order
assert FIELD_NAMES[:2] == ("t", "seq") and (LINE_OPEN, AFTER_T) == ('{"t":', ',"seq":')
assert FIELD_NAMES[5:10] == ("wf", "inst", "task", "inv", "tool")  # owner_fragment
assert (_PROTO, _DETAIL) == (',"proto":', ',"detail":')  # written inline below
_L = {name: name for name in LABELS}  # the label names, from the vocabulary


class Recorder:
    """The trace lines of one replication and their counts, one method per SPEC §5 label."""

    __slots__ = (
        "_buffer",
        "_call",
        "_deliver",
        "_execute",
        "_heads",
        "_hop",
        "_result",
        "_send",
        "_validate",
        "_wf_end",
        "_wf_start",
        "clock",
        "enabled",
        "full",
        "metrics",
        "writer",
    )

    def __init__(self, writer: TraceWriter, metrics: Metrics) -> None:
        self.writer = writer
        self.metrics = metrics
        self.enabled = writer.enabled
        self.full = writer.full
        self._buffer = writer.buffer
        #: the instant of the last line and the next line's number (shared with the
        #: transport, which writes the lines of its hot path itself)
        self.clock = TraceClock(writer)
        #: per label, the text from ``seq``'s value to ``agent``'s (:func:`heads`)
        self._heads = heads(writer.replication)
        self._hop = self._heads[_L["hop"]]
        self._send = self._heads[_L["send"]]
        self._deliver = self._heads[_L["deliver"]]
        # the labels written once or more per invocation or instance: their heads at hand
        self._call = self._heads[_L["call"]]
        self._validate = self._heads[_L["validate"]]
        self._execute = self._heads[_L["execute"]]
        self._result = self._heads[_L["result"]]
        self._wf_start = self._heads[_L["wf_start"]]
        self._wf_end = self._heads[_L["wf_end"]]

    def line(self, t: float, label: str, agent: str, owner: str, proto: str, detail: str) -> None:
        """Append one line: ``owner`` from :func:`owner_fragment`; ``agent``, ``proto`` and
        ``detail`` JSON fragments (``detail`` a whole object). Callers check the level.
        The lines written once or more per invocation or instance (``send``, ``hop``,
        ``deliver``, ``call``, ``validate``, ``execute``, ``result``, ``wf_start``,
        ``wf_end``) repeat these three statements rather than call this: the hot path
        (a call costs about as much as the line's text)."""
        clock = self.clock
        ts = clock.text if t == clock.t else clock.tick(t)
        clock.seq = (seq := clock.seq) + 1
        self._buffer.append(
            f'{{"t":{ts},"seq":{seq}{self._heads[label]}{agent},{owner}'
            f',"proto":{proto},"detail":{detail}}}\n'
        )

    def flush(self) -> None:
        """Write the buffered lines."""
        self.writer.flush()

    # -- workflow instances --

    def wf_start(self, t: float, agent: str, wf: str, inst: int, c: WorkflowCounters) -> None:
        self.metrics.wf_started += 1
        c.started += 1
        if self.enabled:
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._wf_start}{agent},'
                f'{owner_fragment(wf, inst, NULL, None, NULL)},"proto":null,"detail":{{}}}}\n'
            )

    def wf_end(
        self,
        t: float,
        agent: str,
        wf: str,
        inst: int,
        status: str,
        latency: float,
        reason: str,
        c: WorkflowCounters,
    ) -> None:
        m = self.metrics
        m.ended(t, status == "succeeded")
        if status == "succeeded":
            m.wf_succeeded += 1
            m.latencies.append(latency)
            c.succeeded += 1
            c.latency_sum += latency
        elif status == "cancelled":
            m.wf_cancelled += 1
            c.cancelled += 1
        else:
            m.wf_failed += 1
            c.failed += 1
        if self.enabled:
            detail = f'{{"status":"{status}","latency":{seconds(latency)}'
            if reason:
                detail += f',"reason":{js(reason)}'
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._wf_end}{agent},'
                f'{owner_fragment(wf, inst, NULL, None, NULL)},"proto":null,"detail":{detail}}}}}\n'
            )

    def skip(self, t: float, agent: str, owner: str, other: str) -> None:
        """``owner``: the task's fields (no ``inv``); ``other``: the exclusive partner."""
        self.metrics.skips += 1
        if self.enabled:
            self.line(t, _L["skip"], agent, owner, NULL, f'{{"exclusive_with":{js(other)}}}')

    # -- discovery --

    def list_(self, t: float, agent: str, owner: str, proto: str, host: str, view: str) -> None:
        """``list`` (the method is ``list_``): ``view`` is the members after ``host``."""
        if self.enabled:
            self.line(t, _L["list"], agent, owner, proto, f'{{"host":{host},{view}}}')

    # -- invocations at the caller --

    def call(self, t: float, agent: str, owner: str, proto: str, target: str) -> None:
        """``target``: the ``{"target":..}`` detail (``parent`` too for a fallback's call:
        :func:`target`)."""
        self.metrics.calls += 1
        if self.enabled:
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._call}{agent},{owner},"proto":{proto}'
                f',"detail":{target}}}\n'
            )

    def invoke(self, t: float, agent: str, owner: str, proto: str, target: str) -> None:
        """``target``: as :meth:`call`'s."""
        self.metrics.calls += 1
        if self.enabled:
            self.line(t, _L["invoke"], agent, owner, proto, target)

    def collect(self, t: float, agent: str, owner: str, proto: str, slot: str) -> None:
        if self.enabled:
            self.line(t, _L["collect"], agent, owner, proto, f'{{"slot":{js(slot)}}}')

    def validate(self, t: float, agent: str, owner: str, proto: str) -> None:
        if self.enabled:
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._validate}{agent},{owner},"proto":{proto}'
                f',"detail":{{}}}}\n'
            )

    def approve(self, t: float, agent: str, owner: str, proto: str, reason: str) -> None:
        """``reason``: the view's ``{"reason":..}`` object."""
        self.metrics.approvals_granted += 1
        if self.enabled:
            self.line(t, _L["approve"], agent, owner, proto, reason)

    def deny(self, t: float, agent: str, owner: str, proto: str, reason: str) -> None:
        """``reason``: the ``{"reason":..,"asked":..}`` object (why denied, why asked)."""
        self.metrics.approvals_denied += 1
        if self.enabled:
            self.line(t, _L["deny"], agent, owner, proto, reason)

    def result(self, t: float, agent: str, owner: str, proto: str, attempt: int) -> None:
        if self.enabled:
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._result}{agent},{owner},"proto":{proto}'
                f',"detail":{{"attempt":{attempt}}}}}\n'
            )

    def error(self, t: float, agent: str, owner: str, proto: str, error: str, more: str) -> None:
        """``more``: members after ``error`` (``,"attempt":..``, ``,"missing":..``, ...)."""
        errors = self.metrics.errors
        errors[error] = errors.get(error, 0) + 1
        if self.enabled:
            self.line(t, _L["error"], agent, owner, proto, f'{{"error":{js(error)}{more}}}')

    def retry(
        self, t: float, agent: str, owner: str, proto: str, error: str, n: int, wait: float
    ) -> None:
        self.metrics.retries += 1
        if self.enabled:
            detail = f'{{"error":{js(error)},"n":{n},"backoff":{wait!r}}}'
            self.line(t, _L["retry"], agent, owner, proto, detail)

    def fallback(self, t: float, agent: str, owner: str, proto: str, error: str, to: str) -> None:
        self.metrics.fallbacks += 1
        if self.enabled:
            detail = f'{{"error":{js(error)},"to":{js(to)}}}'
            self.line(t, _L["fallback"], agent, owner, proto, detail)

    def prompt(
        self, t: float, agent: str, owner: str, proto: str, error: str, message: str
    ) -> None:
        self.metrics.prompts += 1
        if self.enabled:
            detail = f'{{"error":{js(error)},"message":{js(message)}}}'
            self.line(t, _L["prompt"], agent, owner, proto, detail)

    def abort(self, t: float, agent: str, owner: str, proto: str, error: str) -> None:
        self.metrics.aborts += 1
        if self.enabled:
            self.line(t, _L["abort"], agent, owner, proto, f'{{"error":{js(error)}}}')

    def timeout(
        self,
        t: float,
        agent: str,
        owner: str,
        proto: str,
        attempt: int,
        action: str,
        after: float | None = None,
        executed: bool | None = None,
    ) -> None:
        """An attempt's timer fired: ``after``/``executed`` for an invocation; both None
        for a discovery (``kind: list``)."""
        self.metrics.timeouts += 1
        if self.enabled:
            if after is None:
                detail = f'{{"attempt":{attempt},"kind":"list","action":"{action}"}}'
            else:
                detail = (
                    f'{{"attempt":{attempt},"after":{after!r},'
                    f'"executed":{"true" if executed else "false"},"action":"{action}"}}'
                )
            self.line(t, _L["timeout"], agent, owner, proto, detail)

    def reroute(
        self,
        t: float,
        agent: str,
        owner: str,
        proto: str,
        old: tuple[str, ...],
        new: tuple[str, ...],
        avoid: Any,
    ) -> None:
        """``avoid``: a callable giving the suspects (called only when the line is kept)."""
        self.metrics.reroutes += 1
        if self.enabled:
            detail = (
                f'{{"from_path":{js(list(old))},"to_path":{js(list(new))},'
                f'"avoid":{js(sorted(avoid()))}}}'
            )
            self.line(t, _L["reroute"], agent, owner, proto, detail)

    # -- at the server --

    def execute(
        self,
        t: float,
        agent: str,
        owner: str,
        proto: str,
        attempt: int,
        waited: float,
        write: bool,
        approved: bool,
        c: WorkflowCounters,
    ) -> None:
        """``approved``: whether an unconsumed approval covered a write."""
        m = self.metrics
        m.executions += 1
        c.executions += 1
        if write:
            m.writes_executed += 1
            c.writes_executed += 1
            if not approved:
                m.writes_without_approval += 1
                c.writes_without_approval += 1
        if self.enabled:
            approval = (',"approved":true}' if approved else ',"approved":false}') if write else "}"
            clock = self.clock
            ts = clock.text if t == clock.t else clock.tick(t)
            clock.seq = (seq := clock.seq) + 1
            self._buffer.append(
                f'{{"t":{ts},"seq":{seq}{self._execute}{agent},{owner},"proto":{proto}'
                f',"detail":{{"attempt":{attempt},"waited":{seconds(waited)}{approval}}}\n'
            )

    def lost(self, t: float, agent: str, owner: str, proto: str, what: str) -> None:
        """Work lost at a server that went down (``drop`` with ``lost``, no ``msg``)."""
        lost = self.metrics.lost_work
        lost[what] = lost.get(what, 0) + 1
        if self.enabled:
            detail = f'{{"reason":"node_down","lost":"{what}"}}'
            self.line(t, _L["drop"], agent, owner, proto, detail)

    # -- messages --

    def send(self, t: float, owner: str, msg: int | str, path: Path, kind: str) -> None:
        """A message ``msg`` of kind ``kind`` leaves ``path``'s first node (its line's
        constant text: ``path.send_at``, ``path.send_via``, ``path.send_tail``). Only at
        level ``full``, as :meth:`hop` and :meth:`deliver`."""
        clock = self.clock
        ts = clock.text if t == clock.t else clock.tick(t)
        clock.seq = (seq := clock.seq) + 1
        self._buffer.append(
            f'{{"t":{ts},"seq":{seq}{self._send}{path.send_at}{owner}{path.send_via}'
            f'{msg},"kind":"{kind}"{path.send_tail}'
        )

    def hop(self, t: float, owner: str, msg: int | str, hop: Hop) -> None:
        """A message of ``owner`` (``msg``: its id, or the id's text) crosses ``hop`` (its
        line's constant text: ``hop.at``, ``hop.via``, ``hop.tail``). Only at level
        ``full``: the transport checks the level and counts the hops itself
        (:meth:`counted`)."""
        clock = self.clock
        ts = clock.text if t == clock.t else clock.tick(t)
        clock.seq = (seq := clock.seq) + 1
        self._buffer.append(
            f'{{"t":{ts},"seq":{seq}{self._hop}{hop.at}{owner}{hop.via}{{"msg":{msg}{hop.tail}'
        )

    def translate(
        self, t: float, agent: str, owner: str, proto: str, msg: int, n_dropped: int, step: str
    ) -> None:
        """``step``: the members of the translation step; ``n_dropped`` fields it drops."""
        m = self.metrics
        m.translations += 1
        m.fields_lost += n_dropped
        if self.enabled:
            self.line(t, _L["translate"], agent, owner, proto, f'{{"msg":{msg},{step}}}')

    def deliver(self, t: float, owner: str, msg: int, path: Path, kind: str) -> None:
        """A message ``msg`` reaches ``path``'s last node (in ``path.endj``; its line's
        constant text: ``path.deliver_at``, ``path.deliver_via``). Only at level ``full``."""
        clock = self.clock
        ts = clock.text if t == clock.t else clock.tick(t)
        clock.seq = (seq := clock.seq) + 1
        self._buffer.append(
            f'{{"t":{ts},"seq":{seq}{self._deliver}{path.deliver_at}{owner}'
            f'{path.deliver_via}{msg},"kind":"{kind}"}}}}\n'
        )

    def drop(self, t: float, agent: str, owner: str, proto: str, msg: int, reason: str) -> None:
        self.metrics.drop(reason)
        if self.enabled:
            self.line(t, _L["drop"], agent, owner, proto, f'{{"msg":{msg},"reason":"{reason}"}}')

    # -- outages --

    def node_down(self, t: float, node: str) -> None:
        self.metrics.outages += 1
        self.metrics.outage_event("node", "down", json.loads(node), t)
        if self.enabled:
            self.line(t, _L["node_down"], node, NO_OWNER, NULL, "{}")

    def node_up(self, t: float, node: str) -> None:
        self.metrics.outage_event("node", "up", json.loads(node), t)
        if self.enabled:
            self.line(t, _L["node_up"], node, NO_OWNER, NULL, "{}")

    def link_down(self, t: float, a: str, link: str) -> None:
        """``a``: the link's first end; ``link``: the JSON of its two ends."""
        self.metrics.outages += 1
        self.metrics.outage_event("link", "down", "|".join(sorted(json.loads(link))), t)
        if self.enabled:
            self.line(t, _L["link_down"], a, NO_OWNER, NULL, f'{{"link":{link}}}')

    def link_up(self, t: float, a: str, link: str) -> None:
        self.metrics.outage_event("link", "up", "|".join(sorted(json.loads(link))), t)
        if self.enabled:
            self.line(t, _L["link_up"], a, NO_OWNER, NULL, f'{{"link":{link}}}')


def target(target: str, parent: int | None) -> str:
    """The detail of a ``call`` or ``invoke`` at ``target`` (a JSON fragment), of a
    fallback's invocation when ``parent`` (the invocation it replaces) is given."""
    if parent is None:
        return f'{{"target":{target}}}'
    return f'{{"target":{target},"parent":{parent}}}'


#: The recorder method writing each label (``list`` is ``list_``: ``list`` is a builtin).
METHODS: dict[str, str] = {name: ("list_" if name == "list" else name) for name in LABELS}
