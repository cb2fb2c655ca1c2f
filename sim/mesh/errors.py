"""Precise exceptions of the protocol graph and its routers."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sim.spelling import did_you_mean


class MeshError(Exception):
    """Base class of protocol-graph errors."""


class NodeNotFound(MeshError, KeyError):
    """An agent id that is not in the graph."""

    def __init__(self, agent_id: str, known: Iterable[str] = ()) -> None:
        self.agent_id = agent_id
        super().__init__(f"unknown agent '{agent_id}'{did_you_mean(agent_id, known)}")

    def __str__(self) -> str:
        return str(self.args[0])


class ProtocolNotFound(MeshError, KeyError):
    """A protocol that is not in P."""

    def __init__(self, protocol: str, known: Iterable[str] = ()) -> None:
        self.protocol = protocol
        super().__init__(f"unknown protocol '{protocol}'{did_you_mean(protocol, known)}")

    def __str__(self) -> str:
        return str(self.args[0])


class NoRoute(MeshError):
    """No route exists; ``reason`` is a sentence saying why. It may be given as a
    function, called when the reason is first read: explaining can cost a search of
    the whole graph, and most callers (the engine, verify) only fall back."""

    def __init__(self, reason: str | Callable[[], str]) -> None:
        self._reason = reason
        super().__init__()

    @property
    def reason(self) -> str:
        """The sentence (built on first reading when given as a function)."""
        if not isinstance(self._reason, str):
            self._reason = self._reason()
        return self._reason

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self) -> tuple[type[NoRoute], tuple[str]]:
        return (NoRoute, (self.reason,))


class RouterError(MeshError):
    """A router (usually a plug-in) that misbehaved: ``router`` names it."""

    def __init__(self, router: str, reason: str) -> None:
        self.router = router
        self.reason = reason
        super().__init__(f"router '{router}': {reason}")
