"""The kernel of one replication: the clock, the id counter, the random streams, the recorder.

Every component receives what it uses of the kernel (``env``, ``later``, one stream, the
recorder, ``new_id``) at construction, never the kernel itself. Timing: ``later(delay,
value, callback)`` runs ``callback`` at ``now + delay`` (:mod:`sim.engine.clock`); the
clock starts at 0 and only the run advances it. ``later``'s callbacks wait on one
:class:`~sim.engine.clock.Agenda` (only its earliest on SimPy's queue): they are the
long waits of a run (approvals, backoffs, outages), and SimPy's heap, which every
stretch of a message passes through, stays as small as the messages and executions in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import simpy

from sim.engine.clock import Agenda
from sim.engine.metrics import Metrics
from sim.engine.randomness import Streams
from sim.engine.recorder import Recorder
from sim.engine.trace import TraceWriter


class Kernel:
    """Environment, ``later``, invocation ids, streams and recorder of one replication."""

    __slots__ = ("env", "later", "metrics", "new_id", "recorder", "streams")

    def __init__(self, seed: int, replication: int, writer: TraceWriter) -> None:
        self.env = simpy.Environment(initial_time=0.0)
        self.later = Agenda(self.env).later
        self.streams = Streams(seed, replication)
        self.metrics = Metrics()
        self.recorder = Recorder(writer, self.metrics)
        #: a fresh invocation (or discovery) id: 0, 1, 2, ... in order of creation (a
        #: counter's ``__next__``: no Python call per id)
        self.new_id: Callable[[], int] = count().__next__
