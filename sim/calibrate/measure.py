"""Samples from traces: hop latencies per link and protocol, service times and
execution outcomes per tool, translation delays per node, approval latencies and
answers (docs/calibrate.md, "What is measured").

Each trace file is read once, in order; a message, an invocation and an execution are
known by their ids within the file's replication (``rep``). Times are the trace's
(seconds, rounded as it writes them). A name the scenario does not have (a link, a
protocol the link does not carry, an agent, a tool) is bad input, located at its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sim.calibrate.events import Event, TraceError, read_events
from sim.scenario.model import Scenario
from sim.vocabulary import PROTOCOL_LABELS

#: The caller's own error (its arguments); never an execution's outcome.
VALIDATION_ERROR = "ValidationError"
#: ``serve mcp``'s refusal of a tool's text-only output: the execution succeeded.
OUTPUT_UNAVAILABLE = "OutputUnavailable"
#: The workflow of ``serve mcp --trace`` lines (no messages: a reply ends the service).
SERVE_WORKFLOW = "serve"
#: The events an approval's latency is measured from (besides a retry's backoff end): the
#: gate's start. In a live trace the question is a round trip to the server (an
#: elicitation) before the human answers: timed from the gate's start, the fitted law is
#: what the caller waits, round trip included, which is what the engine's approval
#: latency stands for (its human answers without one).
_ANCHORS = frozenset({"validate", "collect", "invoke"})


@dataclass(frozen=True, slots=True, order=True)
class Quantity:
    """A measured duration: ``link`` (name ``a|b``, ends sorted; ``proto``), ``service``
    (a tool), ``translation`` (an agent) or ``approval``."""

    kind: str
    name: str = ""
    proto: str = ""

    @property
    def key(self) -> str:
        """How reports name it: ``link gw|planner MCP``, ``service lookup``, ..."""
        return " ".join(p for p in (self.kind, self.name, self.proto) if p)


@dataclass(slots=True)
class Outcomes:
    """A tool's executions whose outcome was observed, and the errors among them."""

    executions: int = 0
    errors: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Measurements:
    """Everything measured from the traces (durations in seconds)."""

    durations: dict[Quantity, list[float]] = field(default_factory=dict)
    outcomes: dict[str, Outcomes] = field(default_factory=dict)
    approves: int = 0
    denies: int = 0
    events: int = 0
    #: events per label, over every trace
    labels: dict[str, int] = field(default_factory=dict)
    #: service samples left out: a response that could end more than one execution
    ambiguous: int = 0
    #: samples left out because an agent they involve was down meanwhile
    outaged: int = 0
    serve: bool = False  #: some trace is a ``serve mcp`` session's

    def add(self, quantity: Quantity, seconds: float) -> None:
        self.durations.setdefault(quantity, []).append(max(seconds, 0.0))

    def notes(self) -> list[str]:
        """What the traces could not show, in words."""
        out: list[str] = []
        if not self.labels.get("hop"):
            out.append(
                "no hop events: link latencies need traces at level full (send, hop and "
                "deliver are left out at level protocol); every link's latency is kept"
            )
        if not self.labels.get("send") and not self.serve and self.labels.get("execute"):
            out.append(
                "no send events: the service times of a simulated trace need level full "
                "(the response's send ends the service); every service time is kept"
            )
        if self.outaged:
            out.append(
                f"{self.outaged} sample(s) left out: they met an outage of an agent they "
                "involve (a stopped process holds what it had; that time is the outage's)"
            )
        if self.ambiguous:
            out.append(
                f"{self.ambiguous} service time(s) left out: a response that could end more "
                "than one running execution of its invocation"
            )
        return out


@dataclass(frozen=True, slots=True)
class Names:
    """What a trace may name: the scenario's agents, tools and links (with Φ(e))."""

    source: str
    agents: frozenset[str]
    tools: frozenset[str]
    links: Mapping[frozenset[str], frozenset[str]]

    @staticmethod
    def of(scenario: Scenario, source: str) -> Names:
        return Names(
            source,
            frozenset(a.id for a in scenario.agents),
            frozenset(t.name for t in scenario.tools),
            {frozenset(lk.between): frozenset(lk.latency) for lk in scenario.links},
        )


def measure(traces: Iterable[str | Path], names: Names) -> Measurements:
    """The samples of every trace (each read once, in order)."""
    out = Measurements()
    for trace in traces:
        reader = _Reader(names, out, str(trace))
        for lineno, event in read_events(trace):
            reader.feed(lineno, event)
    return out


@dataclass(slots=True)
class _Translation:
    at: str
    t: float
    steps: int


class _Reader:
    """One trace's open hops, translations, executions and approval anchors."""

    def __init__(self, names: Names, out: Measurements, source: str) -> None:
        self.names = names
        self.out = out
        self.source = source
        self.lineno = 0
        self.hops: dict[tuple[int, int], tuple[float, Quantity, tuple[str | None, str | None]]] = {}
        self.translations: dict[tuple[int, int], _Translation] = {}
        #: (rep, inv) -> the running executions: (agent, start, tool)
        self.running: dict[tuple[int, int], list[tuple[str, float, str]]] = {}
        #: (rep, inv, attempt) -> the tool, until its outcome is seen
        self.pending: dict[tuple[int, int, int], str] = {}
        #: (rep, inv, agent) -> the last event an approval is timed from (label, t, backoff)
        self.anchors: dict[tuple[int, int, str], tuple[str, float, float]] = {}
        #: (rep, agent) -> when it last went down; the agents down now
        self.went_down: dict[tuple[int, str], float] = {}
        self.down: set[tuple[int, str]] = set()

    def _met_outage(self, rep: int, since: float, *agents: str | None) -> bool:
        """Whether one of ``agents`` was down at some moment since ``since``: a sample
        that met an outage measures the outage (a stopped process holds what it had),
        not the link, the translation or the service; it is left out."""
        for a in agents:
            if a is not None and (
                (rep, a) in self.down or self.went_down.get((rep, a), -1.0) >= since
            ):
                self.out.outaged += 1
                return True
        return False

    def bad(self, message: str) -> TraceError:
        return TraceError(self.source, self.lineno, f"{message} in {self.names.source}")

    def feed(self, lineno: int, e: Event) -> None:
        self.lineno = lineno
        out = self.out
        out.events += 1
        label = e.label
        out.labels[label] = out.labels.get(label, 0) + 1
        rep = e.rep or 0
        d = e.detail
        t = e.t or 0.0
        if label == "node_down" and e.agent is not None:
            self.went_down[(rep, e.agent)] = t
            self.down.add((rep, e.agent))
        elif label == "node_up" and e.agent is not None:
            self.down.discard((rep, e.agent))
        if d.msg is not None and label in ("hop", "translate", "deliver", "drop"):
            self._message(rep, d.msg, t, e)
        elif label == "drop" and e.inv is not None and e.agent is not None:
            self.running.pop((rep, e.inv), None)  # a server's lost work: no service time
        if e.inv is None:
            return
        if label == "send" and d.kind == "response" and e.agent is not None:
            self._service_end(rep, e.inv, t, e.agent)
        elif label == "timeout" and e.agent is not None:
            # a question that timed out and was asked again: not a human's answer time
            self.anchors.pop((rep, e.inv, e.agent), None)
        if label in PROTOCOL_LABELS:
            self._protocol(rep, e.inv, t, e)

    # --- messages -----------------------------------------------------------------------

    def _message(self, rep: int, msg: int, t: float, e: Event) -> None:
        key = (rep, msg)
        label = e.label
        hop = self.hops.pop(key, None)
        if hop is not None and label != "drop":
            a, b = hop[2]
            if not self._met_outage(rep, hop[0], a, b):
                self.out.add(hop[1], t - hop[0])
        open_tr = self.translations.get(key)
        if open_tr is not None and (label != "translate" or open_tr.t != t):
            del self.translations[key]
            if label != "drop" and not self._met_outage(rep, open_tr.t, open_tr.at):
                self.out.add(Quantity("translation", open_tr.at), (t - open_tr.t) / open_tr.steps)
            open_tr = None
        if label == "hop":
            self.hops[key] = (t, self._link(e), (e.detail.from_, e.detail.to))
        elif label == "translate":
            at = e.detail.at
            if at is None or at not in self.names.agents:
                raise self.bad(f"translate at agent {at!r}: no such agent")
            chain = e.detail.chain
            steps = max(len(chain) - 1, 1) if chain else 1
            if open_tr is None:
                self.translations[key] = _Translation(at, t, steps)
            else:
                open_tr.steps += steps

    def _link(self, e: Event) -> Quantity:
        d = e.detail
        a, b, proto = d.from_, d.to, d.proto
        if a is None or b is None or proto is None:
            raise TraceError(self.source, self.lineno, "a hop needs detail.from, to and proto")
        carried = self.names.links.get(frozenset((a, b)))
        if carried is None:
            raise self.bad(f"hop over {a}-{b}: no such link")
        if proto not in carried:
            raise self.bad(
                f"hop over {a}-{b} in {proto}: the link carries {', '.join(sorted(carried))}"
            )
        return Quantity("link", "|".join(sorted((a, b))), proto)

    # --- executions ---------------------------------------------------------------------

    def _service_end(self, rep: int, inv: int, t: float, agent: str | None) -> None:
        running = self.running.get((rep, inv))
        if not running:
            return
        mine = [r for r in running if agent is None or r[0] == agent]
        if not mine:
            return
        for r in mine:
            running.remove(r)
        if len(mine) > 1:
            self.out.ambiguous += len(mine)
            return
        server, start, tool = mine[0]
        if not self._met_outage(rep, start, server):
            self.out.add(Quantity("service", tool), t - start)

    def _protocol(self, rep: int, inv: int, t: float, e: Event) -> None:
        label = e.label
        d = e.detail
        agent = e.agent or ""
        if label == "execute":
            if agent not in self.names.agents:
                raise self.bad(f"execute at agent {agent!r}: no such agent")
            if e.tool is None or e.tool not in self.names.tools:
                raise self.bad(f"execute of tool {e.tool!r}: no such tool")
            self.running.setdefault((rep, inv), []).append((agent, t, e.tool))
            self.pending[(rep, inv, d.attempt or 1)] = e.tool
        elif label in ("result", "error"):
            if e.wf == SERVE_WORKFLOW:
                self.out.serve = True
                self._service_end(rep, inv, t, None)
            if d.cause is None and d.error != VALIDATION_ERROR:
                tool = self.pending.pop((rep, inv, d.attempt or 1), None)
                if tool is not None:
                    self._outcome(tool, d.error if label == "error" else None)
        elif label in ("approve", "deny", "collect"):
            self._answer(rep, inv, t, agent, label)
        backoff = (d.backoff or 0.0) if label == "retry" else 0.0
        self.anchors[(rep, inv, agent)] = (label, t, backoff)

    def _outcome(self, tool: str, error: str | None) -> None:
        seen = self.out.outcomes.setdefault(tool, Outcomes())
        seen.executions += 1
        if error is not None and error != OUTPUT_UNAVAILABLE:
            seen.errors[error] = seen.errors.get(error, 0) + 1

    def _answer(self, rep: int, inv: int, t: float, agent: str, label: str) -> None:
        if label == "approve":
            self.out.approves += 1
        elif label == "deny":
            self.out.denies += 1
        anchor = self.anchors.get((rep, inv, agent))
        if anchor is None:
            return
        before, since, backoff = anchor
        if label == "collect" and before not in ("invoke", "collect"):
            return
        if before in _ANCHORS:
            self.out.add(Quantity("approval"), t - since)
        elif before == "retry":
            self.out.add(Quantity("approval"), t - since - backoff)
