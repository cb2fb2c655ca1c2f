"""Progress guards: a replication that passes its event or wall-time budget stops, with
the reason located at the scenario element that drives its events (issue 16, item 7).

The budgets (:class:`Guard`) are enforced by the run loop, :func:`sim.engine.loop.run_until`,
which looks at them once every :data:`~sim.engine.loop.CHECK_EVERY` events; a stop is a
:class:`Runaway`, which :func:`explain` locates.

Timing: ``max_events`` counts SimPy events processed (every stretch of a message, timer,
arrival and outage is one; at trace level ``full`` every hop too, so a budget stops a
``full`` run earlier than a ``protocol`` one); a run stops at the first multiple of
``CHECK_EVERY`` at or past it, which is deterministic (same scenario, seed and level:
the same stop and the same trace so far). ``max_wall`` is seconds of wall-clock time
from the start of the run loop; where it stops depends on the machine. ``max_memory`` is
bytes of the process's resident memory (:func:`resident_bytes`): a run stops at the first
look where it is past ``max_memory − MEMORY_HEADROOM``, so that what the run allocates
until that look and after the stop keeps the process within ``max_memory``; where it
stops depends on the machine too (and on what the process held before the run).
"""

from __future__ import annotations

import resource
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.engine.metrics import Metrics
    from sim.scenario.model import Scenario

#: The default event budget of one replication: 430 times the largest shipped scenario's
#: 46,000 events; 2 to 15 minutes of this engine on one core, by the mix of events.
DEFAULT_MAX_EVENTS = 20_000_000
#: The default resident-memory budget of a process running replications, in bytes (1.5 GB).
DEFAULT_MAX_MEMORY = 1_500_000_000
#: What a run may still allocate after the look that stops it, in bytes (64 MB): 4,096
#: events' worth of growth and the files written after the stop.
MEMORY_HEADROOM = 64_000_000


@dataclass(frozen=True)
class Guard:
    """The budgets of one replication (None: unbounded) and the scenario file that
    locates a stop's reason (None: the reason names the field path only)."""

    max_events: int | None = DEFAULT_MAX_EVENTS
    max_wall: float | None = None
    source: str | None = None
    max_memory: int | None = DEFAULT_MAX_MEMORY


#: The default budgets (``--max-events`` 20,000,000, ``--max-memory`` 1.5 GB, no
#: wall-time limit).
DEFAULT_GUARD = Guard()
#: No budget at all (what ``Environment.run`` did).
UNBOUNDED = Guard(None, None, None, None)


def resident_bytes() -> int:
    """The resident memory of this process now, in bytes (``/proc/self/statm``); where
    ``/proc`` is missing, its peak so far (``ru_maxrss``), which is at least that."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def size_text(size: int) -> str:
    """``size`` bytes as ``--max-memory`` reads them: ``1.5GB``, ``800MB``, ``123B``."""
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= factor:
            return f"{size / factor:.3g}{unit}"
    return f"{size}B"


class Runaway(Exception):
    """A replication stopped by its guard: which budget, what the run did so far, and
    (once :func:`explain` has seen the scenario) the element that drives its events."""

    def __init__(self, budget: str, events: int, wall: float, reason: str = "") -> None:
        self.budget = budget
        self.events = events
        self.wall = wall
        self.reason = reason
        super().__init__(f"stopped after {events:,} events in {wall:.1f} s ({budget}){reason}")


def explain(stop: Runaway, scenario: Scenario, metrics: Metrics, guard: Guard) -> Runaway:
    """``stop`` with its reason: the driver of the events (:func:`driver`), located."""
    from sim.scenario.compose import locate_field

    what, path, value, tally = driver(scenario, metrics)
    where = locate_field(guard.source, path)
    reason = f": {what}: {path[-1]} {value} ({where}); so far {tally}"
    return Runaway(stop.budget, stop.events, stop.wall, reason)


FieldPath = tuple[str | int, ...]


def driver(scenario: Scenario, metrics: Metrics) -> tuple[str, FieldPath, str, str]:
    """What drives the run's events: (sentence, field path, value, counts so far).

    The largest of three counts decides: retries (the tool whose ``retry`` bound is the
    largest, ties by its error probability), instances started (the workflow with the
    most, at its arrival rate or times), outages (the random failure with the shortest
    ``mtbf`` per element)."""
    retries, outages = metrics.retries, metrics.outages
    started = metrics.wf_started
    tally = f"{started:,} instance(s) started, {retries:,} retries, {outages:,} outage(s)"
    retrying = [
        (fm.recovery.retry, t.errors.get(fm.error, 0.0), -i, -j, t.name)
        for i, t in enumerate(scenario.tools)
        for j, fm in enumerate(t.failure_modes)
        if fm.recovery.retry is not None
    ]
    random_failures = [
        (f.random.mtbf / max(1, len(f.random.nodes) + len(f.random.links)), k)
        for k, f in enumerate(scenario.failures)
        if f.random is not None
    ]
    if retrying and retries >= max(started, outages):
        bound, _, i, j, name = max(retrying)
        path: FieldPath = ("tools", -i, "failure_modes", -j, "recovery", "retry")
        return f"tool '{name}' retries without bound", path, str(bound), tally
    if random_failures and outages >= started:
        _, k = min(random_failures)
        spec = scenario.failures[k].random
        assert spec is not None
        elements = ", ".join([*spec.nodes, *("-".join(link) for link in spec.links)])
        sentence = f"failure {k} (random, on {elements}) fails without bound"
        return sentence, ("failures", k, "random", "mtbf"), f"{spec.mtbf:g}", tally
    counts = metrics.by_workflow
    index = {wf.name: i for i, wf in enumerate(scenario.workflows)}
    busiest = max(
        (wf.name for wf in scenario.workflows),
        key=lambda name: (counts[name].started if name in counts else 0, -index[name]),
        default=None,
    )
    if busiest is None:
        return "the run's duration", ("duration",), f"{scenario.duration:g}", tally
    i = index[busiest]
    arrivals = scenario.workflows[i].arrivals
    sentence = f"workflow '{busiest}' starts instances without bound"
    if arrivals.rate is not None:
        return sentence, ("workflows", i, "arrivals", "rate"), f"{arrivals.rate:g}", tally
    times = arrivals.times or []
    return sentence, ("workflows", i, "arrivals", "times"), f"({len(times):,})", tally
