"""What every live message carries besides its protocol's own content: the envelope.

The caller chooses the route; each relay forwards along it. So a request carries its
route and its place on it, the ids its trace lines need, and its timing:

- ``route``: the path, the protocol of each link, the protocol the message was issued
  in (``start``, the task's ρ) and each translation with its position (a
  :class:`~sim.mesh.route.Route` and its start, :func:`route_json`);
- ``i``: the position of the node the message is sent to; ``kind``: ``request``,
  ``list``, ``response`` or ``list_reply``; ``msg``: the message id;
- ``owner``: the invocation's (or discovery's) owner fields; ``attempt``;
- ``sent``: scenario time the message left the previous node (after the link's
  latency); ``deadline``: the attempt's deadline (a queued request whose deadline has
  passed is discarded, as MCP's ``notifications/cancelled`` would have it);
- ``gate``: the approval gate of the caller's view for this call (its reason), or None;
- ``traceparent``: the W3C trace context of the request's workflow instance (minted by
  its caller, :func:`sim.otel.context.instance_context`), passed on unchanged at every
  hop; a request also carries it as ``_meta["traceparent"]`` (MCP, SEP-414; A2A: the
  message's metadata; JSON-RPC: ``params._meta``), where any MCP server reads it.

On MCP it travels as ``_meta["protomesh/route"]``, on A2A as the message's metadata
under the same key, on JSON-RPC as ``params._meta["protomesh/route"]``. A reply carries
the reply's own ``msg``, ``kind`` and ``sent``; ``silent`` marks a reply that stands for
no reply at all (the message was dropped on the way: drops notify nobody, SPEC §4, so a
caller treats it as silence and waits for its timeout).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sim.live.parts import Owner
from sim.mesh.graph import ProtocolGraph
from sim.mesh.route import (
    Route,
    Translation,
    TranslationStep,
    arrival,
    position_of,
    reversed_route,
    translation_step,
)

__all__ = ["ENVELOPE_KEY", "Envelope", "Leg", "arriving", "request_meta", "route_json"]

ENVELOPE_KEY = "protomesh/route"
"""The ``_meta`` (and A2A metadata) key of the envelope."""


def route_json(route: Route, start: str) -> dict[str, Any]:
    """The envelope's ``route``: path, protocols, start and positioned translations."""
    return {
        "path": list(route.path),
        "protocols": list(route.protocols),
        "start": start,
        "translations": [
            [tr.at, tr.source, tr.target, position_of(route, tr)] for tr in route.translations
        ],
        "router": route.router,
        "cost": route.cost,
    }


@dataclass(frozen=True, slots=True)
class Leg:
    """One direction of a route as the nodes on it see it: ``steps[i]`` the translation
    steps at position ``i`` (None: none), ``start`` the protocol the message begins in,
    ``end`` the one it arrives in."""

    route: Route
    start: str
    steps: tuple[tuple[TranslationStep, ...] | None, ...]
    end: str

    @staticmethod
    def of(graph: ProtocolGraph, route: Route, start: str) -> Leg:
        steps: list[tuple[TranslationStep, ...] | None] = [None] * len(route.path)
        for tr in route.translations:
            pos = position_of(route, tr)
            step = translation_step(graph, tr.at, tr.source, tr.target)
            steps[pos] = (*(steps[pos] or ()), step)
        return Leg(route, start, tuple(steps), arrival(route, start))

    @staticmethod
    def from_json(graph: ProtocolGraph, data: Mapping[str, Any]) -> Leg:
        """The leg of an envelope's ``route`` (KeyError/ValueError/TypeError if malformed)."""
        path = tuple(str(x) for x in data["path"])
        protocols = tuple(str(x) for x in data["protocols"])
        if len(protocols) != len(path) - 1:
            raise ValueError("a route has one protocol per link")
        translations = tuple(
            Translation(str(at), str(a), str(b), int(pos)) for at, a, b, pos in data["translations"]
        )
        route = Route(str(data.get("router", "")), path, protocols, translations, 0.0)
        return Leg.of(graph, route, str(data["start"]))

    def reverse(self, graph: ProtocolGraph) -> Leg:
        """The reply's leg: the path walked back, each translation undone."""
        back = reversed_route(self.route)
        start = self.route.protocols[-1] if self.route.protocols else self.end
        return Leg.of(graph, back, start)

    @property
    def last(self) -> int:
        return len(self.route.path) - 1

    def arriving(self, i: int) -> str:
        """The protocol a message is in when it arrives at position ``i``."""
        return self.start if i == 0 else self.route.protocols[i - 1]


@dataclass(frozen=True, slots=True)
class Envelope:
    """The envelope of one message (see the module)."""

    route: Mapping[str, Any]
    i: int
    kind: str
    msg: int
    owner: Owner
    attempt: int
    sent: float
    deadline: float | None = None
    gate: str | None = None
    caller: str = ""
    silent: bool = False
    traceparent: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "route": dict(self.route),
            "i": self.i,
            "kind": self.kind,
            "msg": self.msg,
            "owner": self.owner.to_json(),
            "attempt": self.attempt,
            "sent": self.sent,
            "caller": self.caller,
        }
        if self.deadline is not None:
            out["deadline"] = self.deadline
        if self.gate is not None:
            out["gate"] = self.gate
        if self.silent:
            out["silent"] = True
        if self.traceparent is not None:
            out["traceparent"] = self.traceparent
        return out

    @staticmethod
    def from_json(data: Any) -> Envelope:
        """Raises ValueError naming what is malformed."""
        if not isinstance(data, Mapping):
            raise ValueError(f"the {ENVELOPE_KEY} envelope is not an object")
        try:
            return Envelope(
                route=data["route"],
                i=int(data["i"]),
                kind=str(data["kind"]),
                msg=int(data["msg"]),
                owner=Owner.of(data["owner"]),
                attempt=int(data["attempt"]),
                sent=float(data["sent"]),
                deadline=None if data.get("deadline") is None else float(data["deadline"]),
                gate=None if data.get("gate") is None else str(data["gate"]),
                caller=str(data.get("caller", "")),
                silent=bool(data.get("silent", False)),
                traceparent=None if data.get("traceparent") is None else str(data["traceparent"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed {ENVELOPE_KEY} envelope: {exc!r}") from None

    def at(self, i: int, sent: float) -> Envelope:
        """The same message sent on to position ``i`` at ``sent``."""
        return replace(self, i=i, sent=sent)


def request_meta(env: Envelope) -> dict[str, Any]:
    """What a request's ``_meta`` (A2A: metadata) carries: the envelope, and its
    ``traceparent`` under the standard key."""
    out: dict[str, Any] = {ENVELOPE_KEY: env.to_json()}
    if env.traceparent is not None:
        out["traceparent"] = env.traceparent
    return out


def arriving(env: Envelope) -> str:
    """The protocol of the link a request or ``list`` came over to position ``env.i``
    (ValueError when the envelope's route has no such link)."""
    protocols = env.route.get("protocols") or []
    if not 0 < env.i <= len(protocols):
        raise ValueError(f"the envelope's position {env.i} is not on its route")
    return str(protocols[env.i - 1])
