"""The simulation engine: SimPy agents driven by the calculus' LTSs (SPEC §4, §5, §8).

``run_replication(scenario, router, rep, out_dir)`` runs one replication and writes
``trace.jsonl`` and ``metrics.json``. See docs/engine.md.
"""

from sim.engine.agents import EngineBug
from sim.engine.simulation import ReplicationError, World, run_replication

__all__ = ["EngineBug", "ReplicationError", "World", "run_replication"]
