"""Statistical model checking runs (SPEC §10): replications monitored in process, in
ordered batches, until each (property, router) estimate or test stops.

A replication ``k`` of router ``r`` is :class:`sim.engine.Replication` with the streams
of ``run`` replication ``k`` (seeded from the scenario seed and ``k`` only), its trace
lines delivered to an in-process :class:`MonitorSink` (decoded with the conformance
decoder, fed to the :class:`~sim.properties.Monitor`) instead of a file. A run
satisfies a property iff no scope of it violates it. The seven checks named as
properties (:attr:`SmcJob.checks`; a check has no formula beside it, docs/properties.md)
are the conformance checks themselves: then the replication's trace lines go, as they
are written, to the checks and the monitor together in one pass
(:class:`sim.conformance.checks.stream.Checker`, the pass ``check`` reads a file with;
no file); the run satisfies a check iff it reports no violation.

Per worker the scenario is compiled once (:func:`compiled`: protocol graph, the
built-in routers with their route caches, parsed properties, tool attributes, decoder),
cached by :attr:`SmcJob.key`; per replication only the random streams and the run's
own state are new. Batches of :data:`BATCH` replications are computed
(several in flight on a pool or Dask), but each rule reads the verdicts of
replications 0, 1, 2, ... in order and stops on that ordered prefix, so every figure
is the same whatever the number of jobs; batches computed past a stop are discarded.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sim.engine.guard import DEFAULT_GUARD, Guard
from sim.experiments.smc import Estimation, Sprt, clopper_pearson

if TYPE_CHECKING:
    from sim.conformance.truth import Truth
    from sim.engine.trace import TextSink
    from sim.experiments.runner import ExecutorHandle
    from sim.mesh.graph import ProtocolGraph
    from sim.mesh.routing import Router
    from sim.properties import Monitor, Property, ToolAttributes
    from sim.scenario.model import Scenario

#: A batch's verdicts: per router, per replication, per name of :attr:`SmcJob.names`.
Verdicts = dict[str, list[tuple[bool, ...]]]
#: Replications per task sent to a worker.
BATCH = 64
#: Default run budget of one (property, router) rule.
MAX_RUNS = 100_000


@dataclass(frozen=True)
class SmcJob:
    """What every replication of an smc run shares (picklable, sent with each batch)."""

    scenario: Scenario
    properties: tuple[Property, ...]
    level: str  #: the trace level the monitor sees (protocol or full)
    key: str  #: identifies the job in a worker's cache (scenario fingerprint, level, properties)
    guard: Guard = DEFAULT_GUARD  #: each replication's budgets (a stop is a ReplicationError)
    checks: tuple[str, ...] = ()  #: conformance checks run on each replication's trace

    @property
    def names(self) -> list[str]:
        """What each replication reports on, in order: the properties, then the checks."""
        return [p.name for p in self.properties] + list(self.checks)

    def fields(self) -> tuple[Any, ...]:
        """Everything but the scenario (small, picklable): :func:`run_held_batch`'s."""
        return (self.properties, self.level, self.key, self.guard, self.checks)


@dataclass
class Compiled:
    """The per-worker compiled form of a job: only the streams change per replication."""

    job: SmcJob
    graph: ProtocolGraph
    tools: dict[str, ToolAttributes]
    decode: Callable[[bytes], Any]
    routers: dict[str, Router] = field(default_factory=dict)
    truth: Truth | None = None  #: what the checks compare with (built on first use)

    def router(self, name: str) -> Router | None:
        """The built-in router ``name`` built once on the graph, or None for a plug-in
        (built per replication): :func:`sim.mesh.registry.kept_router`."""
        from sim.mesh.registry import kept_router

        return kept_router(self.routers, name, self.graph, self.job.scenario)


#: per thread (Dask may run tasks in threads): the compiled job, by key
_LOCAL = threading.local()


def compiled(job: SmcJob) -> Compiled:
    """The job compiled in this worker thread (built on first use, then reused; the
    routers' caches are not shared between threads)."""
    cache: dict[str, Compiled] | None = getattr(_LOCAL, "compiled", None)
    if cache is None:
        cache = _LOCAL.compiled = {}
    hit = cache.get(job.key)
    if hit is None:
        from sim.conformance.events import decoder
        from sim.mesh.graph import ProtocolGraph
        from sim.scenario.properties import tool_attributes

        hit = Compiled(
            job, ProtocolGraph.from_scenario(job.scenario), tool_attributes(job.scenario), decoder()
        )
        cache.clear()  # one job at a time per worker
        cache[job.key] = hit
    return hit


class MonitorSink:
    """A text sink for :class:`sim.engine.trace.TraceWriter`: each written block of
    trace lines is split, decoded once and stepped through the monitor (no file)."""

    __slots__ = ("decode", "step")

    def __init__(self, step: Callable[[Any, bytes], None], decode: Callable[[bytes], Any]):
        self.step = step
        self.decode = decode

    def write(self, text: str) -> int:
        step, decode = self.step, self.decode
        for raw in text.encode("utf-8").split(b"\n"):
            if raw:
                step(decode(raw), raw)
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered here."""


class CheckerSink:
    """A text sink for :class:`sim.engine.trace.TraceWriter`: each written block of trace
    lines handed, encoded, to ``feed`` (:meth:`~sim.conformance.checks.stream.Checker.lines`)."""

    __slots__ = ("feed",)

    def __init__(self, feed: Callable[[bytes], None]) -> None:
        self.feed = feed

    def write(self, text: str) -> int:
        self.feed(text.encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered here."""


def replicate(c: Compiled, router: str, rep: int) -> tuple[bool, ...]:
    """Replication ``rep`` of ``router``: per name of :attr:`SmcJob.names`, whether the
    run satisfies it (monitored in process, with the job's checks in the same pass).
    Raises :class:`sim.engine.ReplicationError` on a crash."""
    from sim.properties import Monitor

    monitor = Monitor(c.job.properties, c.tools)
    if c.job.checks:
        return _checked(c, router, rep, monitor)
    _run(c, router, rep, MonitorSink(monitor.step, c.decode))
    return tuple(v.violations == 0 for v in monitor.finish())


def _run(c: Compiled, router: str, rep: int, sink: TextSink) -> None:
    """Run replication ``rep`` of ``router`` with its trace lines written to ``sink``."""
    from sim.engine import ReplicationError
    from sim.engine.simulation import Replication
    from sim.engine.trace import TraceWriter

    scenario = c.job.scenario
    trace = TraceWriter(sink, rep, c.job.level)
    world: Replication | None = None
    try:
        world = Replication(scenario, router, rep, trace, c.graph, c.router(router), c.job.guard)
        world.run()
        trace.flush()
    except Exception as exc:
        now = float(world.env.now) if world is not None else 0.0
        raise ReplicationError(scenario.name, router, rep, now, exc) from exc


def _checked(c: Compiled, router: str, rep: int, monitor: Monitor) -> tuple[bool, ...]:
    """:func:`replicate` with checks: the checks and the monitor fed the trace's lines in
    one pass as the engine writes them (no file)."""
    from sim.conformance.checks.stream import Checker
    from sim.conformance.truth import from_scenario

    if c.truth is None:
        c.truth = from_scenario(c.job.scenario)
    consumers = [monitor] if c.job.properties else []
    checker = Checker("<trace>", c.truth, c.job.checks, consumers=consumers)
    _run(c, router, rep, CheckerSink(checker.lines))
    report = checker.report()
    props = tuple(v.violations == 0 for v in monitor.finish()) if c.job.properties else ()
    return props + tuple(report.verdict(name).ok for name in c.job.checks)


def run_batch(job: SmcJob, routers: tuple[str, ...], start: int, stop: int) -> Verdicts:
    """Replications ``start`` .. ``stop``-1 of each router (a picklable task)."""
    c = compiled(job)
    return {r: [replicate(c, r, k) for k in range(start, stop)] for r in routers}


def run_held_batch(
    fp: str, fields: tuple[Any, ...], routers: tuple[str, ...], start: int, stop: int
) -> Verdicts:
    """:func:`run_batch` of the job with :meth:`SmcJob.fields` ``fields`` and the scenario
    with fingerprint ``fp`` this Dask worker holds (handed over once per command:
    :meth:`~sim.experiments.executors.ExecutorHandle.hand_over`); raises
    :class:`~sim.experiments.worker.ScenarioNotHeld` when it holds none."""
    from sim.experiments.worker import held_scenario

    return run_batch(SmcJob(held_scenario(fp), *fields), routers, start, stop)


@dataclass(frozen=True)
class Rule:
    """How each (property, router) stops: estimation to a CP half-width, or Wald's SPRT
    when ``threshold`` is set; at most ``max_runs`` replications either way."""

    confidence: float = 0.95
    width: float = 0.01
    max_runs: int = MAX_RUNS
    threshold: float | None = None
    delta: float = 0.01
    alpha: float = 0.05
    beta: float = 0.05

    def start(self) -> Estimation | Sprt:
        """A fresh sequential rule (raises ``ValueError`` on bad parameters)."""
        if self.max_runs < 1:
            raise ValueError(f"max-runs must be at least 1 (got {self.max_runs})")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1) (got {self.confidence})")
        if self.threshold is None:
            return Estimation(self.width, self.confidence, self.max_runs)
        return Sprt(self.threshold, self.delta, self.alpha, self.beta)


@dataclass
class Outcome:
    """One (property, router) result (SPEC §10's ``--json`` object)."""

    prop: str  #: the property's name
    router: str
    confidence: float
    rule: Estimation | Sprt
    max_runs: int
    stopped: str | None = None
    first_violation: int | None = None

    def add(self, rep: int, satisfied: bool) -> None:
        """The verdict of replication ``rep`` (they come in order 0, 1, 2, ...)."""
        if not satisfied and self.first_violation is None:
            self.first_violation = rep
        rule = self.rule
        said = rule.add(satisfied)
        if isinstance(rule, Sprt):
            if said is not None:
                self.stopped = "sprt"
            elif rule.runs >= self.max_runs:
                self.stopped = "max-runs"
        else:
            self.stopped = said

    @property
    def runs(self) -> int:
        return self.rule.runs

    @property
    def satisfied(self) -> int:
        return self.rule.satisfied

    @property
    def interval(self) -> tuple[float, float]:
        return clopper_pearson(self.satisfied, self.runs, self.confidence)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {
            "property": self.prop,
            "router": self.router,
            "runs": self.runs,
            "satisfied": self.satisfied,
            "estimate": self.satisfied / self.runs,
            "interval": [lo, hi],
            "confidence": self.confidence,
            "stopped": self.stopped,
            "decision": self.rule.decision if isinstance(self.rule, Sprt) else None,
            "first_violation": self.first_violation,
        }


def estimate(
    job: SmcJob,
    routers: Sequence[str],
    rule: Rule,
    handle: ExecutorHandle,
    *,
    batch: int = BATCH,
    on_batch: Callable[[int], None] | None = None,
) -> list[Outcome]:
    """Run replications in ordered batches on ``handle`` until every (property, router)
    rule stops; the outcomes in (property, router) order. The same routers get the same
    replication indices, hence the same seeds (common random numbers)."""
    names = job.names
    outcomes = {
        (n, r): Outcome(n, r, rule.confidence, rule.start(), rule.max_runs)
        for n in names
        for r in routers
    }
    from sim.experiments.runner import RESENT, missed_hand_over

    window = 1 if handle.kind == "inline" else max(2, 2 * handle.workers)
    in_flight: deque[tuple[int, int, tuple[str, ...], int, Future[Verdicts]]] = deque()
    submitted = 0
    submit = _Submitter(job, handle)

    def live() -> tuple[str, ...]:
        return tuple(r for r in routers if any(outcomes[n, r].stopped is None for n in names))

    try:
        while True:
            active = live()
            if not active:
                break
            while len(in_flight) < window and submitted < rule.max_runs:
                stop = min(submitted + batch, rule.max_runs)
                in_flight.append((submitted, stop, active, 0, submit(active, submitted, stop, 0)))
                submitted = stop
            if not in_flight:  # pragma: no cover - every rule stops at max_runs
                break
            start, stop, ran, resent, future = in_flight.popleft()
            if submit.fp and resent < RESENT and missed_hand_over(future):  # Dask worker after
                handle.hand_over({submit.fp: job.scenario})
                again = submit(ran, start, stop, resent + 1)
                in_flight.appendleft((start, stop, ran, resent + 1, again))
                continue
            got = future.result()
            for r, verdicts in got.items():
                for i, per_property in enumerate(verdicts):
                    for name, ok in zip(names, per_property, strict=True):
                        o = outcomes[name, r]
                        if o.stopped is None:
                            o.add(start + i, ok)
            if on_batch is not None:
                on_batch(start + batch)
    finally:
        for *_, pending in in_flight:
            pending.cancel()
    return [outcomes[n, r] for n in names for r in routers]


class _Submitter:
    """Submits a batch to ``handle``: the job with it on a pool; on Dask the job's scenario
    handed over once (:meth:`~sim.experiments.executors.ExecutorHandle.hand_over`, to the
    workers lacking it) and each batch carrying its fingerprint, under an explicit key."""

    def __init__(self, job: SmcJob, handle: ExecutorHandle) -> None:
        self.job = job
        self.handle = handle
        self.fp = ""
        self.token = ""
        if handle.client is not None:
            import uuid

            from sim.experiments.runner import fingerprint

            self.fp = fingerprint(job.scenario)
            self.token = uuid.uuid4().hex
            handle.hand_over({self.fp: job.scenario})

    def __call__(
        self, routers: tuple[str, ...], start: int, stop: int, resent: int
    ) -> Future[Verdicts]:
        if not self.fp:
            return self.handle.executor.submit(run_batch, self.job, routers, start, stop)
        name = f"protomesh-smc-{self.token}-{start}" + (f"-again-{resent}" if resent else "")
        fields = self.job.fields()
        return self.handle.submit_named(name, run_held_batch, self.fp, fields, routers, start, stop)


def disjoint(a: Outcome, b: Outcome) -> bool:
    """Whether the two outcomes' intervals do not overlap."""
    (alo, ahi), (blo, bhi) = a.interval, b.interval
    return ahi < blo or bhi < alo
