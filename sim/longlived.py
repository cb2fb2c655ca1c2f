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
    would grow as n²), and they join its oldest generation at once, unscanned
    (:func:`gc.freeze` then :func:`gc.unfreeze`): the collections that follow do not walk
    them through the young generations first, nor count them as new old objects (which
    would start a full collection). Skipped while objects are frozen (by a run, or for a
    fork: another thread's freeze is never undone, nor one left behind)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()
