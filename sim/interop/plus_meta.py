"""What the MCP⁺ ``_meta`` object of a ``tools/list`` entry carries beyond the descriptor
fields (written by ``export``/``serve``, read by ``import``): one place for both directions.

Under ``_meta["protomesh/mcp-plus"]`` (:data:`sim.calculus.mcp.MCP_PLUS_META`), next to
``side_effects``, ``requires_approval``, ``failure_modes``, ``dependencies`` and ``summary``:

- ``service_time``: the tool's service-time distribution (SPEC §1), unless it is the default;
- ``errors``: error type → probability per execution, unless empty;
- ``protocols``: the ``protocols:`` of the scenario the tool comes from (a name, or
  ``{name, fields}``), whenever the object is written at all.

So a scenario served and imported back keeps its protocols, errors and service times. Other
keys found in the object are kept verbatim (``x-mcp``) and written back by ``export``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.interop.errors import InteropError
from sim.scenario.model import Scenario, ToolSpec

__all__ = [
    "DESCRIPTOR_KEYS",
    "SIMULATION_KEYS",
    "Carried",
    "carried",
    "fragment_protocols",
    "protocol_entries",
    "protocol_name",
    "simulation_keys",
]

DESCRIPTOR_KEYS = frozenset(
    {"side_effects", "requires_approval", "failure_modes", "dependencies", "summary"}
)
"""The MCP⁺ descriptor fields of the object (:meth:`sim.calculus.ToolPlus.meta`)."""
SIMULATION_KEYS = ("service_time", "errors", "protocols")
"""The other keys protomesh writes into the object, in this order."""


def protocol_entries(scenario: Scenario) -> list[Any]:
    """The scenario's ``protocols:`` as written: a name, or ``{name, fields}`` for a protocol
    with its own field set."""
    return [
        p.name if p.fields is None else p.model_dump(mode="json", exclude_none=True)
        for p in scenario.protocols
    ]


def protocol_name(entry: Any) -> str:
    """The name of a ``protocols:`` entry (a name, or a mapping with ``name``)."""
    return str(entry["name"]) if isinstance(entry, Mapping) else str(entry)


def simulation_keys(spec: ToolSpec) -> dict[str, Any]:
    """``service_time`` unless it is the scenario default, ``errors`` unless empty."""
    out: dict[str, Any] = {}
    default = ToolSpec.model_fields["service_time"].get_default(call_default_factory=True)
    if spec.service_time != default:
        out["service_time"] = spec.service_time.model_dump(mode="json", exclude_none=True)
    if spec.errors:
        out["errors"] = dict(spec.errors)
    return out


@dataclass(frozen=True, slots=True)
class Carried:
    """What an entry's MCP⁺ object holds besides the descriptor: the scenario tool fields
    (``service_time``, ``errors``, checked), the source's protocols, and unknown keys."""

    simulation: Mapping[str, Any] = field(default_factory=dict)
    protocols: tuple[Any, ...] = ()
    unknown: Mapping[str, Any] = field(default_factory=dict)


def carried(name: str, plus: Any, path: str) -> Carried:
    """Read the non-descriptor keys of ``plus`` (the MCP⁺ object of tool ``name``, at JSON
    ``path``). Raises :class:`InteropError` naming the path of a bad value."""
    from pydantic import ValidationError

    from sim.scenario.model.mesh import ProtocolSpec

    if not isinstance(plus, Mapping):
        return Carried()
    simulation = {k: plus[k] for k in ("service_time", "errors") if k in plus}
    if simulation:
        try:
            ToolSpec.model_validate({"name": name, **simulation})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InteropError(f"{path}.{where}: {first['msg']}") from None
    protocols = plus.get("protocols", [])
    if not isinstance(protocols, list):
        raise InteropError(f"{path}.protocols: expected a list of protocols")
    for i, entry in enumerate(protocols):
        try:
            ProtocolSpec.model_validate({"name": entry} if isinstance(entry, str) else entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "".join(f".{p}" for p in first["loc"])
            raise InteropError(f"{path}.protocols[{i}]{where}: {first['msg']}") from None
    known = DESCRIPTOR_KEYS | set(SIMULATION_KEYS)
    unknown = {k: v for k, v in plus.items() if k not in known}
    return Carried(simulation, tuple(protocols), unknown)


def fragment_protocols(carried_by_tool: Sequence[Carried], plain: int, plus: int) -> list[Any]:
    """A fragment's ``protocols:``: those its tools carry (first seen first) when any does,
    with ``MCP`` put first for ``plain`` tools if missing (a served scenario's list comes back
    as it was); else ``[MCP]``, ``[MCP+]`` or ``[MCP, MCP+]`` by the kinds of tools."""
    found: list[Any] = []
    names: set[str] = set()
    for c in carried_by_tool:
        for entry in c.protocols:
            if protocol_name(entry) not in names:
                names.add(protocol_name(entry))
                found.append(entry)
    if not found:
        found = ["MCP+"] if plus else []
    if plain and "MCP" not in {protocol_name(e) for e in found}:
        found.insert(0, "MCP")
    return found
