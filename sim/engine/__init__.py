"""The simulation engine: SimPy components driven by the calculus' LTSs (SPEC §4, §5, §8).

``run_replication(scenario, router, rep, out_dir)`` runs one replication and writes
``trace.jsonl`` and ``metrics.json``. The components and their timing: docs/engine.md.
"""

from sim.engine.invocation import EngineBug
from sim.engine.simulation import Replication, ReplicationError, World, run_replication

__all__ = ["EngineBug", "Replication", "ReplicationError", "World", "run_replication"]
