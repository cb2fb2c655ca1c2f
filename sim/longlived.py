"""Objects a process keeps to its end, and the cyclic garbage collector.

No import beyond :mod:`gc` (a process forked early, e.g. the figures' drawers, uses it
without importing the scenario's modules).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Build, in the block, objects that live long (a scenario and what is built from it:
    a large file makes hundreds of thousands of objects, all kept). The cyclic collector
    never scans them while they are made (it would scan them again and again: the time
    would grow as n²); at the end one young collection scans them once and moves them to
    its oldest generation, counted there as the collector counts what it promotes (so
    they are not walked through the young generations again).

    Not :func:`gc.freeze` then :func:`gc.unfreeze`, which this did: that moved the young
    garbage of earlier replications (their worlds) into the oldest generation uncounted,
    and a freeze zeroes the count that starts a full collection, so a process loading
    often never collected in full and kept every dead world."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(1)
        if collecting:
            gc.enable()


#: whether this process froze its objects through :func:`freeze` (and has not
#: :func:`unfreeze`-d them): a forked child inherits it with the frozen objects
_FROZEN: list[bool] = [False]


def freeze() -> None:
    """:func:`gc.freeze`, noted (:func:`is_frozen`): every freeze of this program is made
    here, so that whether one is in place is known in constant time
    (:func:`gc.get_freeze_count` walks every frozen object: 0.02-0.1 s for the 330,000
    to 490,000 a worker of the 10,000-agent mesh holds, at every run)."""
    gc.freeze()
    _FROZEN[0] = True


def unfreeze() -> None:
    """:func:`gc.unfreeze`, noted."""
    gc.unfreeze()
    _FROZEN[0] = False


def is_frozen() -> bool:
    """Whether this process froze its objects (:func:`freeze`), in constant time."""
    return _FROZEN[0]


@contextlib.contextmanager
def frozen(large: bool) -> Iterator[None]:
    """Keep the objects that exist now out of the collector's scans in the block (a run:
    the world it runs is built by then, and would be scanned again at each collection),
    when the world is ``large`` (a small one costs the collector little) and no object
    is frozen already by :func:`freeze` (then nothing is done).

    A full collection runs first, so that only live objects are frozen, and they are in
    the oldest generation as the collector counts it: frozen garbage (an earlier run's
    world) would outlive the block, objects that were young would join the oldest
    generation at the unfreeze without being counted toward the next full collection,
    and the freeze zeroes the count that starts one: a process running 20,000 small
    replications, each run frozen, held 1.5 GB of their worlds so. What dies in the
    block is collected as usual. (Nothing here lists the collector's objects:
    :func:`gc.get_objects` would hand another thread's tuple under construction a second
    reference, and its resize would fail.)"""
    if not large or is_frozen():
        yield
        return
    gc.collect()
    freeze()
    try:
        yield
    finally:
        unfreeze()
