"""The live mesh (SPEC §13, docs/live.md): the scenario deployed as real processes on
127.0.0.1, its workload run over real MCP, A2A and JSON-RPC messages, its faults real,
its trace the simulator's.

Layers, one concept a module: :mod:`~sim.live.deploy` (the scenario as processes, the
faults), :mod:`~sim.live.host` (one process: its agents' servers), :mod:`~sim.live.node`
(an agent as a node: hops, translation, relaying), :mod:`~sim.live.toolserver` and
:mod:`~sim.live.realserver` (the tools behind an agent), :mod:`~sim.live.caller`,
:mod:`~sim.live.views` and :mod:`~sim.live.workflows` (an LLM agent), :mod:`~sim.live.wire`
(the real transports), :mod:`~sim.live.merge` and :mod:`~sim.live.metrics` (the run's
trace and metrics), :mod:`~sim.live.run` (one live run per router). It shares the
engine's facts (routes, translation, approval rule, the caller's view, the vocabulary)
through ``mesh``, ``calculus`` and ``vocabulary``, and never imports the engine: the
simulation and the real mesh can disagree, and the disagreement is the measurement.

Importing this package imports nothing heavy (the command line reads its defaults).
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT_DRAIN", "DEFAULT_MAX_PROCESSES"]

DEFAULT_MAX_PROCESSES = 8 * (os.cpu_count() or 1)
"""Processes a machine hosts by default: 8 per core (16 on this project's 2 cores)."""
DEFAULT_DRAIN = 120.0
"""Scenario seconds after ``duration`` that instances still running are given."""
