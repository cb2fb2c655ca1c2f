"""Long-lived objects skip the collector's young generations, and a freeze is left as found."""

from __future__ import annotations

import gc

from sim.longlived import long_lived


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
        assert not any(id(o) in oldest for o in made)  # nothing done meanwhile
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
