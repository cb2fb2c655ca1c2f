"""Conformance checks on traces (SPEC §6): the paper's safety properties, checked per run.

``check_trace(path_or_lines, scenario_or_truth)`` → :class:`Report`; ``check_run_dir``
for ``run``; ``check_dialogues`` for SGD dialogues. Reads traces only: never imports
``sim.engine``. See docs/checks/.
"""

from sim.conformance.checks import (
    CHECK_NAMES,
    Report,
    TraceError,
    Verdict,
    check_run_dir,
    check_trace,
)
from sim.conformance.dialogues import DialogueError, check_dialogues

__all__ = [
    "CHECK_NAMES",
    "DialogueError",
    "Report",
    "TraceError",
    "Verdict",
    "check_dialogues",
    "check_run_dir",
    "check_trace",
]
