"""The simulation engine: SimPy components driven by the calculus' LTSs (SPEC §4, §5, §8).

``run_replication(scenario, router, rep, out_dir)`` runs one replication and writes
``trace.jsonl`` and ``metrics.json``. The components and their timing: docs/engine.md.
Its per-event modules run compiled when a current build exists (:mod:`sim.engine.compiled`).
"""

from sim.engine.compiled import activate

activate()

from sim.engine.simulation import Replication, ReplicationError, World, run_replication  # noqa: E402
from sim.engine.views import EngineBug  # noqa: E402

__all__ = ["EngineBug", "Replication", "ReplicationError", "World", "run_replication"]
