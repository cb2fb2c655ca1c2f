"""Random streams of one replication, and samplers of the scenario's distributions.

Every replication ``r`` owns one :class:`random.Random` per stream name, seeded from
``numpy.random.SeedSequence(entropy=seed, spawn_key=(r, i))`` where ``i`` is the
stream's index in :data:`STREAMS` (the same seeds ``SeedSequence(seed).spawn(...)``
would give child ``r``, grandchild ``i``). Python's ``hash()`` is never used, so the
streams are the same on every machine, process and worker count.

Per event the engine only calls ``random.Random`` methods (no numpy scalar draws).
"""

from __future__ import annotations

import random

import numpy as np

from sim.engine.sampling import sampler_of
from sim.scenario.model import Distribution
from sim.scenario.model.distribution import Sampler as Sampler

#: The streams of a replication, in a fixed order (never reorder: seeds depend on it).
STREAMS: tuple[str, ...] = (
    "arrivals",
    "latency",
    "service",
    "errors",
    "failures",
    "approvals",
    "translation",
    "faults",
)


class Streams:
    """The named generators of one replication (attributes named like :data:`STREAMS`)."""

    __slots__ = STREAMS

    arrivals: random.Random
    latency: random.Random
    service: random.Random
    errors: random.Random
    failures: random.Random
    approvals: random.Random
    translation: random.Random
    faults: random.Random  # the message faults' draws (sim.engine.faults)

    def __init__(self, seed: int, replication: int) -> None:
        for index, name in enumerate(STREAMS):
            state = np.random.SeedSequence(entropy=seed, spawn_key=(replication, index))
            words = state.generate_state(4, dtype=np.uint32)
            value = 0
            for word in words:
                value = (value << 32) | int(word)
            setattr(self, name, random.Random(value))


def sampler(dist: Distribution, rng: random.Random) -> Sampler:
    """A function drawing one duration (seconds, ≥ 0) of ``dist`` from ``rng``: the
    scenario's one law (:meth:`sim.scenario.model.Law.sampler`), as the compiled engine
    draws it (:func:`sim.engine.sampling.sampler_of`: the same draws)."""
    return sampler_of(dist.law(), rng)
