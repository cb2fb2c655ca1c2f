"""A2A agent cards ↔ scenarios: ``import a2a`` (a card → a fragment) and ``export a2a``
(a scenario's agents → their cards). See docs/a2a.md.

A card ``c`` becomes two agents: ``c`` itself (``LLM_AGENT`` or ``COORDINATOR``: an A2A
agent is an agent, not a tool server) speaking A2A, its capabilities the skills' ids; and
``c-skills``, the ``TOOL_SERVER`` doing the skills (only a tool server serves calls in a
scenario), a tool per skill (name = the skill's id, description = the skill's, an open
object as input schema: a skill declares none; the MCP⁺ fields a card does not carry are
labelled guesses as for ``import mcp``, except what a skill's tags carry when they are the
tags ``export a2a`` writes for a tool: ``tool``, its side effect, ``requires-approval``),
linked to ``c`` over A2A. Every field of the card the scenario does not model is kept
under the top-level key ``x-a2a`` (:data:`A2A_KEY`):
``x-a2a.agents.<id>.card`` the card without its skills, ``.skills`` each skill as the card
gave it (protobuf JSON: id, name, description, tags, examples, inputModes, outputModes,
securityRequirements), ``.host`` the skills' host; the card's securitySchemes,
securityRequirements, capabilities.extensions, provider, signatures, ... are in ``card``.

``export a2a`` writes a card per agent: an agent with an ``x-a2a`` entry gets its card
back (its skills: those of its capabilities, in their order, as kept; a capability with
no kept skill gets a built one; a skill's description is its tool's where the host has
it, and so are its tool tags); any other agent a card built by
:func:`sim.interop.a2a_card.agent_card` (a skill per capability, then per hosted tool not
among them, tagged :func:`tool_tags`; an agent with neither offers ``relay``). Import then
export gives the card back field for field, export then import a tool's carried fields.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sim.calculus.mcp import MCP_PLUS_META, SideEffect, ToolsListError, tools_from_list
from sim.interop.a2a_card import (
    RELAY,
    SkillEntry,
    agent_card,
    card_dict,
    card_from_json,
    checked_card,
)
from sim.interop.errors import InteropError
from sim.interop.fragments import Fragment, _render, imported_tools, lint_summary, slug
from sim.scenario.model import Scenario, Wire

__all__ = [
    "A2A_KEY",
    "AGENT_TYPES",
    "fragment_from_card",
    "read_a2a_extension",
    "scenario_cards",
    "tags_carry",
    "tool_tags",
]

A2A_KEY = "x-a2a"
"""Top-level scenario extension holding what a card carries and the scenario does not."""
HOST_SUFFIX = "-skills"
"""An imported agent ``a``'s skills are tools hosted by the ``TOOL_SERVER`` ``a-skills``."""
AGENT_TYPES = ("LLM_AGENT", "COORDINATOR")
"""The types an imported A2A agent may take (an A2A agent is an agent, not a tool server)."""
OPEN: Mapping[str, Any] = {"type": "object"}
"""The input schema of a tool made from a skill (a skill declares none)."""
_TOOLS_PATH = re.compile(r"^\$\.tools\[(\d+)\]\.name")
TOOL_TAG = "tool"
"""The first tag of a hosted tool's skill (then its side effect, maybe :data:`APPROVAL_TAG`)."""
APPROVAL_TAG = "requires-approval"
"""The tag of a hosted tool's skill when the tool requires approval."""
_SIDE_EFFECTS = frozenset(e.value for e in SideEffect)


def tool_tags(tool: Any) -> list[str]:
    """The tags of a hosted tool's skill: ``tool``, its side effect, ``requires-approval``
    when it requires approval."""
    tags = [TOOL_TAG, str(tool.side_effects.value)]
    if tool.requires_approval:
        tags.append(APPROVAL_TAG)
    return tags


def tags_carry(tags: Sequence[str]) -> dict[str, Any] | None:
    """The MCP⁺ fields in a skill's tags when they are exactly :func:`tool_tags`'s shape;
    None for any other tags (another's card: its tools' fields stay guesses)."""
    tags = list(tags)
    side = tags[1] if len(tags) in (2, 3) and tags[0] == TOOL_TAG else None
    if side in _SIDE_EFFECTS and tags[2:] in ([], [APPROVAL_TAG]):
        return {"side_effects": side, "requires_approval": len(tags) == 3}
    return None


def _listed(skill: Mapping[str, Any]) -> dict[str, Any]:
    """A skill as a ``tools/list`` entry, its tags' MCP⁺ fields under ``_meta``."""
    entry: dict[str, Any] = {"name": skill["id"], "inputSchema": OPEN}
    entry["description"] = skill.get("description", "")
    carried = tags_carry(skill.get("tags", ()))
    if carried is not None:
        entry["_meta"] = {MCP_PLUS_META: carried}
    return entry


def fragment_from_card(
    card: Any,
    *,
    source: str,
    agent_type: str = "LLM_AGENT",
    name: str | None = None,
    out: str | Path | None = None,
    where: str = "card",
) -> Fragment:
    """The fragment of one SDK ``AgentCard`` (``source`` says where it came from in the
    header, ``where`` names it in errors)."""
    if agent_type not in AGENT_TYPES:
        raise InteropError(f"--type must be one of {', '.join(AGENT_TYPES)}, not {agent_type!r}")
    kept = card_dict(card)
    skills: list[dict[str, Any]] = kept.pop("skills", [])
    seen: set[str] = set()
    for i, skill in enumerate(skills):
        if skill["id"] in seen:
            raise InteropError(f"{where}: skills[{i}].id: duplicate skill id {skill['id']!r}")
        seen.add(skill["id"])
    listing = {"tools": [_listed(s) for s in skills]}
    try:
        tools = imported_tools(listing)
        received = tools_from_list(listing)
    except (InteropError, ToolsListError) as exc:
        text = _TOOLS_PATH.sub(lambda m: f"skills[{m.group(1)}].id", str(exc))
        raise InteropError(f"{where}: {text}") from None
    agent = slug(card.name)
    host = agent + HOST_SUFFIX
    ids = [s["id"] for s in skills]
    header = [
        f"Scenario fragment imported by protomesh from the A2A agent card of {card.name!r} "
        f"({source}).",
        f"{agent!r}: the {agent_type} the card describes, speaking A2A, its {len(ids)} skills "
        f"as capabilities; {host!r}: the TOOL_SERVER doing its skills",
        "(a tool per skill, name = skill id), reached over A2A. The card's other fields are "
        f"under {A2A_KEY} for `export a2a`.",
        f"Add a caller linked to {agent!r} over A2A and a workflow calling the skills to run it.",
    ]
    return _render(
        name=slug(name or card.name),
        description=card.description,
        header=header,
        protocols=["A2A"],
        servers=[(host, tools)],
        out=out,
        lint_of=lint_summary(received),
        agents=[
            {"id": agent, "type": agent_type, "capabilities": ids, "protocols": {"A2A": 1.0}},
            {"id": host, "type": "TOOL_SERVER", "protocols": {"A2A": 1.0}, "tools": list(ids)},
        ],
        extensions=[
            (
                "links",
                f"{agent!r} reaches the host of its skills over A2A",
                [{"between": [agent, host], "latency": {"A2A": 0.0}}],
            ),
            (
                A2A_KEY,
                "the agent card's fields the scenario does not model, for `export a2a` "
                "(protobuf JSON, as the card gave them)",
                {"agents": {agent: {"card": kept, "skills": skills, "host": host}}},
            ),
        ],
    )


def read_a2a_extension(path: str | Path) -> Mapping[str, Mapping[str, Any]]:
    """``x-a2a.agents`` of a scenario file (``{}`` if none); :class:`InteropError` naming
    the key on a bad shape."""
    from sim.interop.tools_list import scenario_extension

    ext = scenario_extension(path, A2A_KEY)
    if ext is None:
        return {}
    agents = ext.get("agents") if isinstance(ext, Mapping) else None
    if not isinstance(agents, Mapping):
        raise InteropError(f"{path}: {A2A_KEY}.agents: expected a mapping of agent ids")
    for aid, entry in agents.items():
        where = f"{path}: {A2A_KEY}.agents.{aid}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("card"), Mapping):
            raise InteropError(f"{where}.card: expected the card's fields (a mapping)")
        skills = entry.get("skills", [])
        if not isinstance(skills, list) or not all(
            isinstance(s, Mapping) and isinstance(s.get("id"), str) for s in skills
        ):
            raise InteropError(f"{where}.skills: expected a list of skills, each with an id")
    return agents


def _built_skills(agent: Any, tools: Mapping[str, Any]) -> list[SkillEntry]:
    """The skills of an agent without a kept card: its capabilities, then its tools
    (``tools``: the scenario's tools the agent or its skills' host serves, by name)."""
    out: list[SkillEntry] = []
    for cap in agent.capabilities:
        tool = tools.get(cap)
        text = tool.description if tool is not None and tool.description else f"capability {cap}"
        out.append(SkillEntry(cap, cap, text, ("capability",)))
    for name in agent.tools:
        if name in agent.capabilities:
            continue
        tool = tools[name]
        out.append(SkillEntry(name, name, tool.description or name, tuple(tool_tags(tool))))
    return out


def _kept_card(agent: Any, entry: Mapping[str, Any], tools: Mapping[str, Any], where: str) -> Any:
    """The card kept for ``agent`` with its skills rebuilt from its capabilities."""
    from a2a.types import AgentSkill

    kept = {s["id"]: s for s in entry.get("skills", [])}
    data = copy.deepcopy(dict(entry["card"]))
    skills: list[dict[str, Any]] = []
    for cap in agent.capabilities:
        skill = copy.deepcopy(dict(kept[cap])) if cap in kept else None
        if skill is None:
            built = _built_skills(agent.model_copy(update={"capabilities": [cap]}), tools)[0]
            skill = card_dict(
                AgentSkill(id=built.id, name=built.name, description=built.description)
            )
            skill["tags"] = list(built.tags)
        tool = tools.get(cap)
        if tool is not None and tool.description:
            skill["description"] = tool.description
        if tool is not None and tags_carry(skill.get("tags", ())) is not None:
            skill["tags"] = tool_tags(tool)  # the tool's fields, as edited in the scenario
        skills.append(skill)
    data["skills"] = skills
    return card_from_json(data, where)


def scenario_cards(
    scenario: Scenario,
    extension: Mapping[str, Mapping[str, Any]],
    agents: Sequence[str],
    base_url: str | None,
    where: str,
) -> list[tuple[str, Any]]:
    """``(agent id, AgentCard)`` for ``agents`` (default: every agent speaking a protocol on
    the A2A wire: A2A, or one declaring ``wire: a2a``), each
    valid by the SDK's models. ``base_url`` replaces a built card's default
    ``http://127.0.0.1:<live.port or 8000>``; a kept card keeps its interfaces."""
    by_id = {a.id: a for a in scenario.agents}
    unknown = [a for a in agents if a not in by_id]
    if unknown:
        raise InteropError(f"--agent {unknown[0]!r}: no such agent (agents: {', '.join(by_id)})")
    carried = scenario.on_wire(Wire.A2A)
    chosen = list(agents) or [a.id for a in scenario.agents if carried & a.protocols.keys()]
    if not chosen:
        raise InteropError(f"{where}: no agent speaks A2A (name one with --agent)")
    hosts = {str(e.get("host")) for e in extension.values()}
    if not agents:
        chosen = [a for a in chosen if a not in hosts]
    by_name = {t.name: t for t in scenario.tools}
    out: list[tuple[str, Any]] = []
    for aid in chosen:
        agent = by_id[aid]
        entry = extension.get(aid)
        served = {*agent.tools}
        if entry is not None and entry.get("host") in by_id:
            served |= {*by_id[str(entry["host"])].tools}
        tools = {n: by_name[n] for n in served if n in by_name}
        if entry is not None:
            out.append((aid, _kept_card(agent, entry, tools, f"{where}: {A2A_KEY}.agents.{aid}")))
            continue
        port = agent.live.port if agent.live is not None and agent.live.port else 8000
        base = base_url or f"http://127.0.0.1:{port}"
        skills = _built_skills(agent, tools) or [RELAY]
        described = f"protomesh agent {aid} ({agent.type.value})"
        card = agent_card(aid, base, skills, description=described)
        out.append((aid, checked_card(card, f"{where}: agent {aid!r}")))
    return out
