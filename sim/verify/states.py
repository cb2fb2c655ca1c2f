"""The vocabulary of the model's states: task codes, invocation phases, events, tasks.

Plain values (see :mod:`sim.verify.model` for the state layout); no behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# task codes (as the engine's workflows)
PENDING, SUCCEEDED, FAILED, CANCELLED, SKIPPED, WAITING, PREPARING, RUNNING = range(8)
DONE_OK = (SUCCEEDED, SKIPPED)
# invocation phases
ASK, FLIGHT, EXEC, RESUME, COLLECT = range(5)
#: Fallback chains longer than this fail the task (the engine's MAX_FALLBACK_DEPTH).
MAX_FALLBACK_DEPTH = 8
SGD = "SGD"
INIT: tuple[Any, ...] = ("init",)
END: tuple[Any, ...] = ("end",)

INITIATOR_DOWN = (("status", "failed"), ("reason", "initiator_down"))
Event = tuple[str, int, str | None, str, str | None, tuple[tuple[str, Any], ...]]
Transition = tuple[int, tuple[Event, ...], Any]


class Task:
    """A compiled task of the verified workflow."""

    __slots__ = ("after", "args", "capability", "id", "index", "need", "rho", "tool")

    def __init__(self, index: int, spec: Any, wf: Any, order: Mapping[str, int]) -> None:
        self.index = index
        self.id: str = spec.id
        self.tool: str | None = spec.tool
        self.capability: str | None = spec.capability
        self.need: str = spec.tool if spec.tool is not None else spec.capability
        self.args: dict[str, Any] = dict(spec.args)
        self.rho: str = spec.protocol or wf.protocol
        self.after: tuple[int, ...] = tuple(order[a] for a in spec.after)


def code_of(state: Any) -> int:
    """A task state's code (its int, or the first member of its tuple)."""
    return state if isinstance(state, int) else state[0]
