"""One live invocation's state, and what the caller and the workflows exchange about it:
the :class:`Task` as the caller runs it, how an invocation :class:`Ended`, and the
invocation's walk through its LTS (:class:`Run`, the live caller's
:class:`~sim.live.caller.Caller` steps it; :class:`LiveBug` for a label the LTS does not
enable). Values and state; no time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sim.calculus.mcp.dialects import MCP, Dialect
from sim.live.parts import Owner
from sim.mesh.route import Route

__all__ = ["Ended", "LiveBug", "Run", "Task", "inv_of"]


class LiveBug(RuntimeError):
    """The live caller tried a transition its LTS does not enable (a bug)."""


@dataclass(frozen=True, slots=True)
class Task:
    """A task of a workflow as the caller runs it."""

    wf: str
    id: str
    index: int
    tool: str | None
    capability: str | None
    args: Mapping[str, Any]
    rho: str
    timeout: float
    after: tuple[int, ...]
    dialect: Dialect = MCP  #: how ρ's invocations go, as its protocol declares

    @property
    def need(self) -> str:
        return self.tool if self.tool is not None else str(self.capability)


@dataclass(frozen=True, slots=True)
class Ended:
    """How an invocation ended: ``status`` succeeded, failed or cancelled (with the
    task's ``reason``), or ``fallback`` to ``tool``."""

    status: str
    reason: str = ""
    tool: str = ""
    inv: int = -1


def inv_of(owner: Owner) -> int:
    """The owner's invocation id (-1 for none)."""
    return owner.inv if owner.inv is not None else -1


class Run:
    """The state of one invocation: its LTS state, route and counters."""

    __slots__ = ("attempt", "lts", "owner", "resends", "retries", "route", "sent", "state", "tool")

    def __init__(self, lts: Any, tool: str, route: Route, owner: Owner) -> None:
        self.lts = lts
        self.state = lts.initial
        self.tool = tool
        self.route = route
        self.owner = owner
        self.attempt = 0
        self.resends = 0
        self.retries = 0
        self.sent = 0

    def take(self, lab: str) -> None:
        nxt = self.lts.step(self.state, lab)
        if nxt is None:
            enabled = [a for a, _ in self.lts.enabled(self.state)]
            raise LiveBug(f"{self.tool}: '{lab}' is not enabled (enabled: {enabled})")
        self.state = nxt
