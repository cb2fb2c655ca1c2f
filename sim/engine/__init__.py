"""The simulation engine: SimPy components driven by the calculus' LTSs (SPEC §4, §5, §8).

``run_replication(scenario, router, rep, out_dir)`` runs one replication and writes
``trace.jsonl`` and ``metrics.json``. The components and their timing: docs/engine.md.
Its per-event modules run compiled when the installation was built so
(:mod:`sim.native`); a compiled engine older than its sources is refused here.
"""

from sim.native import verify

verify()

from sim.engine.bugs import EngineBug  # noqa: E402
from sim.engine.simulation import Replication, ReplicationError, World, run_replication  # noqa: E402

__all__ = ["EngineBug", "Replication", "ReplicationError", "World", "run_replication"]
