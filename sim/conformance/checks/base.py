"""What every consumer of the streaming pass shares: the :class:`Consumer` protocol, the
invocation histories (:class:`Context`) and the :class:`Check` base with its
counterexample bookkeeping.

An event handed to a consumer is the decoded line (:mod:`sim.conformance.events`: the
SPEC §5 fields as attributes, ``detail`` as an object of the declared detail keys) and
its raw bytes (for counterexamples). Handlers must not keep events; they may keep raw
lines, bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, Protocol

from sim.conformance.checks.verdict import Verdict
from sim.conformance.events import Extra, raw_to_dict
from sim.conformance.truth import Truth
from sim.vocabulary.counterexamples import Counterexample, Earliest

#: A handler: ``(decoded event, raw line)``.
Handler = Callable[[Any, bytes], None]
#: A workflow instance: ``(wf, inst)``.
InstanceKey = tuple[Any, Any]

#: Labels that open an invocation.
OPENING: frozenset[str] = frozenset(("call", "invoke"))
#: Labels after which an invocation is over (every LTS reaches ``done`` with them).
TERMINAL: frozenset[str] = frozenset(("result", "abort", "prompt", "fallback", "deny"))
#: Events of one invocation kept for a counterexample (the first and the latest ones).
HISTORY_CAP = 64
#: Violation messages beyond the first kept per check (for ``--json``).
KEEP_MESSAGES = 5


class Consumer(Protocol):
    """Anything the streaming pass feeds (the seven checks, a property monitor).

    ``handlers()`` is read once before the pass: it maps the labels the consumer reads to
    the handler called, in trace order, with each such event; other labels never reach
    it. ``end_instance(key, invs)`` is called at each ``wf_end`` after that event's
    handlers, with the invocations the instance opened (drop their state there).
    ``end_trace()`` is called once after the last line. A consumer that reads
    :meth:`Context.history` also sets a class attribute ``history = True`` (the pass keeps
    each open invocation's events only while one does). One that reads detail keys the
    checks do not declares them as ``detail_keys`` (``(key, default when absent)``
    pairs: :data:`~sim.conformance.events.Extra`); the pass of a :class:`~sim.
    conformance.checks.stream.Checker` decodes them with the line, as any value, but
    for a line its decoder refuses (then the event has none of them: read them from
    the raw line).
    """

    def handlers(self) -> Mapping[str, Handler]: ...

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None: ...

    def end_trace(self) -> None: ...


def extra_keys(consumers: Iterable[object]) -> Extra:
    """The detail keys ``consumers`` declare (their ``detail_keys``), in the order first
    declared; a ValueError naming a key two declare with different defaults."""
    out: dict[str, Any] = {}
    for c in consumers:
        for key, default in getattr(c, "detail_keys", ()):
            if key in out and out[key] is not default:
                raise ValueError(f"detail key {key!r} declared with two defaults")
            out[key] = default
    return tuple(out.items())


class Core(Protocol):
    """A check's rule as a pure step over one scope's hashable state (write_approval,
    requires_order, exclusive): what the check class streams and ``verify`` steps in
    its search state. ``scope``: ``invocation`` or ``instance``; ``labels``: the only
    labels that change a state; ``step`` gives the state after one event and whether a
    violation is certain at it (``task``: the event's task, ``wf``: its workflow)."""

    @property
    def scope(self) -> str: ...

    @property
    def labels(self) -> tuple[str, ...]: ...

    @property
    def initial(self) -> Any: ...

    def step(self, st: Any, label: str, tool: Any, task: Any, wf: Any) -> tuple[Any, bool]: ...


class Context:
    """What the pass shares with the checks: each open invocation's protocol events."""

    __slots__ = ("hist",)

    def __init__(self) -> None:
        self.hist: dict[Any, list[bytes]] = {}

    def history(self, inv: Any, raw: bytes) -> list[bytes]:
        h = self.hist.get(inv)
        return list(h) if h else [raw]


class Check:
    """Base class of the seven checks (a :class:`Consumer`): counterexample bookkeeping;
    subclasses add handlers. ``finish(examined)`` gives the :class:`Verdict`."""

    name = ""
    #: the labels whose events this check examines
    labels: tuple[str, ...] = ()
    #: whether it reads ``ctx.history`` (the pass keeps invocation histories only then)
    history = False

    def __init__(self, truth: Truth, ctx: Context) -> None:
        self.truth = truth
        self.ctx = ctx
        self.violations = 0
        self._first: tuple[int, str, list[bytes]] | None = None
        self._more: list[str] = []
        self._kept = Earliest()
        self.note = ""
        self.by_wf: dict[Any, int] = {}

    def handlers(self) -> Mapping[str, Handler]:
        return {}

    def gates(self) -> Mapping[str, Sized]:
        """Label → a container of the check's state while whose emptiness its handler of
        that label does nothing (the pass then does not call it: no call is the cheapest
        case of a handler). Read once, with :meth:`handlers`; the container is mutated in
        place, never rebound."""
        return {}

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        """A workflow instance ended: drop its state (and report what it left undone)."""

    def end_trace(self) -> None:
        """The trace ended (a check's end-of-trace work is in :meth:`finish`)."""

    def violation(self, message: str, raws: Iterable[bytes], seq: int, wf: Any = None) -> None:
        """Count one violation (per workflow too); keep the earliest (by ``seq``) as the
        counterexample, and the earliest :data:`KEEP_COUNTEREXAMPLES` in ``counterexamples``."""
        self.violations += 1
        try:
            self.by_wf[wf] = self.by_wf.get(wf, 0) + 1
        except TypeError:
            self.by_wf[str(wf)] = self.by_wf.get(str(wf), 0) + 1
        lines = list(raws)[:HISTORY_CAP]
        self._kept.add(seq, message, lines)
        first = self._first
        if first is None or seq < first[0]:
            if first is not None and len(self._more) < KEEP_MESSAGES:
                self._more.append(first[1])
            self._first = (seq, message, lines)
        elif len(self._more) < KEEP_MESSAGES:
            self._more.append(message)

    def finish(self, examined: int) -> Verdict:
        message, events = "", []
        if self._first is not None:
            _, message, raws = self._first
            events = sorted((raw_to_dict(r) for r in raws), key=_seq_key)
        by_wf = {str(k): v for k, v in self.by_wf.items()}
        kept = [
            Counterexample(m, sorted((raw_to_dict(r) for r in raws), key=_seq_key))
            for _, m, raws, _ in self._kept.kept()
        ]
        return Verdict(
            self.name,
            examined,
            self.violations,
            message,
            events,
            self.note,
            list(self._more),
            by_wf,
            counterexamples=kept,
        )


def _seq_key(event: dict[str, Any]) -> int:
    seq = event.get("seq")
    return seq if isinstance(seq, int) else -1


def where(ev: Any) -> str:
    """The invocation an event belongs to, for a message."""
    return f"invocation {ev.inv} of {ev.tool} (instance {ev.wf}#{ev.inst}, task {ev.task})"
