"""A2A agent cards through the official ``a2a-sdk`` (1.3, A2A protocol 1.0): built for a
protomesh agent, read from JSON or fetched from a live agent, checked by the SDK's models.

One place for the card's shape (the live mesh's cards, ``export a2a`` and ``serve a2a``
are built here): one interface ``<base>/a2a`` (``JSONRPC``, protocol 1.0), input and
output modes ``application/json``, one skill per entry. A card read from elsewhere is
parsed by the SDK's own reader (``parse_agent_card``: the protobuf JSON mapping, with the
SDK's upgrade of 0.3 cards) and must hold every field the SDK marks required
(``validate_proto_required_fields``); anything else is an :class:`InteropError` naming the
field. Imports of the SDK are local: nothing here costs a command that does not use A2A.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sim.interop.errors import InteropError

__all__ = [
    "BINDING",
    "CARD_PATH",
    "ENDPOINT",
    "MEDIA",
    "PROTOCOL_VERSION",
    "RELAY",
    "SkillEntry",
    "agent_card",
    "card_dict",
    "card_from_json",
    "checked_card",
    "fetch_card",
    "skill_dict",
    "unknown_fields",
]

ENDPOINT = "/a2a"
MEDIA = "application/json"
BINDING = "JSONRPC"
PROTOCOL_VERSION = "1.0"
CARD_PATH = "/.well-known/agent-card.json"
"""The well-known path of an agent's public card (the SDK's ``AGENT_CARD_WELL_KNOWN_PATH``)."""


class SkillEntry(NamedTuple):
    """One skill of a card as protomesh builds it."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]


RELAY = SkillEntry(
    "relay", "relay", "forwards protomesh messages along the route they carry", ("relay",)
)
"""The skill of an agent that offers nothing of its own (a gateway)."""


def agent_card(
    name: str,
    base_url: str,
    skills: Iterable[SkillEntry],
    *,
    description: str,
    streaming: bool = False,
) -> Any:
    """The SDK ``AgentCard`` of agent ``name`` served at ``base_url`` (its JSON-RPC
    endpoint at ``<base_url>/a2a``), version protomesh's."""
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    from sim import __version__

    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[
            AgentInterface(
                url=base_url.rstrip("/") + ENDPOINT,
                protocol_binding=BINDING,
                protocol_version=PROTOCOL_VERSION,
            )
        ],
        version=__version__,
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=False),
        default_input_modes=[MEDIA],
        default_output_modes=[MEDIA],
        skills=[
            AgentSkill(id=s.id, name=s.name, description=s.description, tags=list(s.tags))
            for s in skills
        ],
    )


def card_dict(card: Any) -> dict[str, Any]:
    """A card as the protobuf JSON mapping writes it (camelCase, defaults left out)."""
    from google.protobuf.json_format import MessageToDict

    out: dict[str, Any] = MessageToDict(card)
    return out


def skill_dict(skill: Any) -> dict[str, Any]:
    """One ``AgentSkill`` as the protobuf JSON mapping writes it."""
    from google.protobuf.json_format import MessageToDict

    out: dict[str, Any] = MessageToDict(skill)
    return out


def checked_card(card: Any, where: str) -> Any:
    """``card`` when it holds every field the SDK requires; else the first missing one."""
    from a2a.utils.errors import InvalidParamsError
    from a2a.utils.proto_utils import validate_proto_required_fields

    try:
        validate_proto_required_fields(card)
    except InvalidParamsError as exc:
        errors = (exc.data or {}).get("errors") or [{"field": "?", "message": exc.message}]
        shown = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors)
        raise InteropError(f"{where}: not a valid A2A agent card: {shown}") from None
    return card


_LEGACY = frozenset(
    {
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    }
)
"""A 0.3 card's fields the SDK's reader maps onto the 1.0 model."""


def unknown_fields(data: Any) -> list[str]:
    """The fields of a JSON card (top level and each skill) that the SDK's model does not
    hold: its reader drops them (``skills[i].key`` for a skill's)."""
    from a2a.types import AgentCard, AgentSkill

    def known(message: Any) -> set[str]:
        return {f.json_name for f in message.DESCRIPTOR.fields} | {
            f.name for f in message.DESCRIPTOR.fields
        }

    if not isinstance(data, Mapping):
        return []
    card, skill = known(AgentCard), known(AgentSkill) | {"security"}
    out = [k for k in data if k not in card and k not in _LEGACY]
    for i, entry in enumerate(data.get("skills") or []):
        if isinstance(entry, Mapping):
            out += [f"skills[{i}].{k}" for k in entry if k not in skill]
    return out


def card_from_json(data: Any, where: str) -> Any:
    """The SDK ``AgentCard`` of a decoded JSON card (``where`` names it in errors)."""
    import copy

    from a2a.client.card_resolver import parse_agent_card
    from google.protobuf.json_format import ParseError

    if not isinstance(data, Mapping):
        raise InteropError(f"{where}: an agent card is a JSON object, not {type(data).__name__}")
    try:
        card = parse_agent_card(copy.deepcopy(dict(data)))
    except ParseError as exc:
        raise InteropError(f"{where}: not an A2A agent card: {exc}") from None
    return checked_card(card, where)


def fetch_card(url: str, headers: Mapping[str, str], timeout: float) -> Any:
    """The card of the live agent at ``url`` (its base URL, or the card's own URL when
    it ends in ``.json``) through the SDK's ``A2ACardResolver``; ``timeout`` in seconds.
    :class:`InteropError` when nothing answers, the answer is no card, or the card is
    invalid."""
    import anyio
    import httpx
    from a2a.client import A2ACardResolver
    from a2a.client.errors import A2AClientError

    own = url.rstrip("/").endswith(".json")

    async def fetch() -> Any:
        async with httpx.AsyncClient(headers=dict(headers), timeout=timeout) as http:
            resolver = (
                A2ACardResolver(http, url, agent_card_path="")
                if own
                else A2ACardResolver(http, url)
            )
            return await resolver.get_agent_card()

    try:
        card = anyio.run(fetch)
    except A2AClientError as exc:
        cause = exc.__cause__
        status = getattr(exc, "status_code", None)
        if isinstance(cause, httpx.RequestError):
            why = f"{type(cause).__name__}: {cause}"
        elif status is not None:
            asked = cause.request.url if isinstance(cause, httpx.HTTPStatusError) else url
            why = f"HTTP {status} for {asked}"
        else:
            why = " ".join(str(exc).split())
        raise InteropError(f"{url}: no A2A agent card: {why}") from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        raise InteropError(f"{url}: no A2A agent card: {type(exc).__name__}: {exc}") from None
    return checked_card(card, url)
