"""A replay fed alone by the conformance pass: the page tests' consumer."""

from __future__ import annotations

from typing import Any


class ReplayAlone:
    """A :class:`~sim.view.replay.Replay` as the pass's only consumer (its handlers;
    nothing at an instance's or the trace's end)."""

    def __init__(self, replay: Any) -> None:
        self.replay = replay

    def handlers(self) -> Any:
        return self.replay.handlers()

    def end_instance(self, key: Any, invs: Any) -> None:
        pass

    def end_trace(self) -> None:
        pass
