"""Long-lived objects skip the collector's young generations, a freeze is left as found,
and neither loading nor running often keeps dead worlds from the collector."""

from __future__ import annotations

import gc
import weakref

from sim.longlived import freeze, frozen, is_frozen, long_lived, unfreeze


def test_long_lived_objects_join_the_oldest_generation_unfrozen() -> None:
    assert gc.get_freeze_count() == 0
    with long_lived():
        assert not gc.isenabled()  # no scan while they are made
        made = [[k] for k in range(50)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in oldest for o in made)


def test_long_lived_leaves_a_freeze_it_found_as_it_was() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with long_lived():
            made = [[k] for k in range(50)]
        assert gc.get_freeze_count() == before  # theirs, neither undone nor grown
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(o) in oldest for o in made)
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_long_lived_keeps_the_count_that_starts_a_full_collection() -> None:
    """Issue 38, item 10: a freeze zeroes the collector's counts, the number of young
    collections since the last full one too; loading froze, so a process loading often
    (a fuzzed mutant, a replication building its graph) never collected in full."""
    gc.collect()
    for _ in range(3):
        gc.collect(1)
    before = gc.get_count()[2]
    with long_lived():
        made = [[k] for k in range(50)]
    assert gc.get_count()[2] == before + 1  # its own young collection, nothing zeroed
    assert made


class Node:
    """A cyclic object: freed only by the cyclic collector."""

    def __init__(self) -> None:
        self.me = self


def _young_cycles(n: int) -> list[Node]:
    """``n`` cycles, all in the youngest generation."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [Node() for _ in range(n)]
    finally:
        if collecting:
            gc.enable()


def test_a_small_world_is_not_frozen() -> None:
    world = _young_cycles(10)
    with frozen(large=False):
        assert gc.get_freeze_count() == 0
    del world


def test_garbage_is_collected_before_a_world_is_frozen() -> None:
    earlier = weakref.ref(_young_cycles(1)[0])  # an earlier run's world, garbage now
    world = _young_cycles(50)
    with frozen(large=True):
        assert gc.get_freeze_count() > 0
        assert earlier() is None  # not frozen with the live world, to outlive the block
    assert gc.get_freeze_count() == 0
    del world


def test_young_garbage_does_not_join_long_lived_objects() -> None:
    """Issue 38, item 10: the freeze of ``long_lived`` moved the young garbage of earlier
    replications (their worlds) into the oldest generation too, where only a full
    collection finds it."""
    gc.collect()
    dead = weakref.ref(_young_cycles(1)[0])
    with long_lived():
        kept = [[k] for k in range(10)]
    assert dead() is None
    assert kept


def test_a_freeze_made_here_is_known_and_a_run_adds_none() -> None:
    """Whether this program froze is known without :func:`gc.get_freeze_count` (a walk
    over every frozen object, at each run); a large world's run inside such a freeze
    neither collects in full nor unfreezes it."""
    assert not is_frozen()
    freeze()
    try:
        assert is_frozen()
        full: list[int] = []

        def note(phase: str, info: dict[str, int]) -> None:
            if phase == "start" and info["generation"] == 2:
                full.append(1)

        gc.callbacks.append(note)
        try:
            with frozen(large=True):
                assert is_frozen()
        finally:
            gc.callbacks.remove(note)
        assert full == [] and is_frozen() and gc.get_freeze_count() > 0
    finally:
        unfreeze()
    assert not is_frozen() and gc.get_freeze_count() == 0
