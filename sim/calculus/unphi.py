"""The inverses Φ⁻¹ (paper §5.3) and (Φ⁺)⁻¹ (paper §7.2): MCP tools back to SGD intents.

Φ⁻¹ never guesses: what no field carries is :data:`UNKNOWN` (the paper's ``?``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from sim.calculus.mcp import Annotations, Dependency, FailureMode, SideEffect, Tool, ToolPlus
from sim.calculus.phi import phi_plus
from sim.calculus.sgd import SERVICE_SEPARATOR, Intent, Service, Slot

__all__ = [
    "UNKNOWN",
    "ServiceUnphi",
    "Unknown",
    "Unphi",
    "unphi",
    "unphi_plus",
    "unphi_services",
]


class Unknown(Enum):
    """The value of a field that Φ⁻¹ cannot recover (paper §5.4: ``?``)."""

    UNKNOWN = "unknown"

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown.UNKNOWN
"""The paper's ``?`` (§5.3): a field no MCP field carries; never replaced by a default."""


@dataclass(frozen=True, slots=True)
class Unphi:
    """Φ⁻¹ or (Φ⁺)⁻¹ of one tool (paper §5.3, §7.2): the intent's fields, each recovered or
    :data:`UNKNOWN`; ``provenance`` says where an inferred field came from, ``notes`` list what
    was lossy or shows the tool is outside the image of Φ⁺."""

    name: str
    service: str | Unknown
    description: str
    required: tuple[Slot, ...]
    optional: tuple[Slot, ...]
    defaults: tuple[tuple[str, str], ...]
    result_slots: tuple[Slot, ...]
    transactional: bool | Unknown
    failure_modes: tuple[FailureMode, ...] | Unknown
    dependencies: tuple[Dependency, ...] | Unknown
    provenance: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def unknown(self) -> tuple[str, ...]:
        """The names of the fields that could not be recovered."""
        fields = ("service", "transactional", "failure_modes", "dependencies")
        return tuple(f for f in fields if getattr(self, f) is UNKNOWN)

    def intent(self, transactional: bool | None = None) -> Intent:
        """The recovered ``Intent``; an unknown ``t`` must be supplied explicitly (no default)."""
        t = self.transactional
        if transactional is not None:
            t = transactional
        if isinstance(t, Unknown):
            raise ValueError(f"{self.name}: the transactional flag is unknown (paper §5.4)")
        service = self.service if isinstance(self.service, str) else ""
        return Intent(
            self.name,
            self.description,
            self.required,
            self.optional,
            t,
            self.defaults,
            self.result_slots,
            service,
        )


def _slot(name: str, prop: Any, notes: list[str], where: str) -> Slot:
    if not isinstance(prop, Mapping):
        notes.append(f"{where}: property is not an object; slot without description")
        return Slot(name, "")
    desc = prop.get("description")
    if not isinstance(desc, str):
        notes.append(f"{where}: no description")
        desc = ""
    ptype = prop.get("type", "string")
    if ptype != "string":
        notes.append(f"{where}: type {ptype!r} becomes a string slot (SGD values are strings)")
    enum = prop.get("enum")
    if isinstance(enum, list):
        return Slot(name, desc, True, tuple(str(v) for v in enum))
    examples = prop.get("examples")
    values = tuple(str(v) for v in examples) if isinstance(examples, list) else ()
    return Slot(name, desc, False, values)


def _split_name(tool_name: str) -> tuple[str | Unknown, str]:
    if SERVICE_SEPARATOR in tool_name:
        svc, _, intent = tool_name.partition(SERVICE_SEPARATOR)
        return svc, intent
    return UNKNOWN, tool_name


def unphi(tool: Tool) -> Unphi:
    """Φ⁻¹(Tool⟨n, d, schema⟩) = Intent⟨n, d, R(schema), O(schema), ?⟩ (paper §5.3).

    ``t``, failure modes and dependencies are :data:`UNKNOWN`; an explicit ``readOnlyHint``
    recovers ``t`` as a hint (recorded in ``provenance``), never a missing one.
    """
    return _unphi_common(
        tool.name, tool.description, tool.input_schema, tool.output_schema, tool.annotations
    )


def _unphi_common(
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None,
    annotations: Annotations | None,
) -> Unphi:
    notes: list[str] = []
    props = input_schema.get("properties") or {}
    req_names = list(input_schema.get("required") or [])
    for r in req_names:
        if r not in props:
            notes.append(f"inputSchema.required: {r!r} has no property")
    required = tuple(
        _slot(r, props.get(r, {}), notes, f"inputSchema.properties.{r}") for r in req_names
    )
    optional: list[Slot] = []
    defaults: list[tuple[str, str]] = []
    for pname, prop in props.items():
        if pname in req_names:
            continue
        optional.append(_slot(pname, prop, notes, f"inputSchema.properties.{pname}"))
        if isinstance(prop, Mapping) and "default" in prop:
            defaults.append((pname, str(prop["default"])))
    out_props = (output_schema or {}).get("properties") or {}
    results = tuple(
        _slot(r, p, notes, f"outputSchema.properties.{r}") for r, p in out_props.items()
    )
    service, intent_name = _split_name(name)
    transactional: bool | Unknown = UNKNOWN
    provenance: list[tuple[str, str]] = []
    if annotations is not None and annotations.read_only is not None:
        transactional = not annotations.read_only
        provenance.append(
            ("transactional", "annotations.readOnlyHint (a hint, untrusted per the MCP spec)")
        )
    return Unphi(
        intent_name,
        service,
        description,
        required,
        tuple(optional),
        tuple(defaults),
        results,
        transactional,
        UNKNOWN,
        UNKNOWN,
        tuple(provenance),
        tuple(notes),
    )


def unphi_plus(tool: ToolPlus) -> Unphi:
    """(Φ⁺)⁻¹(Tool⟨n, d, schema⟩⁺[meta]) = Intent⟨n, d, R(schema), O(schema), t⟩ with
    ``t = side_effects ∈ {write, delete}`` (paper §7.2). Notes record a WriteApproval violation
    and any metadata that Φ⁺ of the recovered intent would not reproduce (outside the image)."""
    base = _unphi_common(
        tool.name,
        tool.description or "",
        tool.input_schema or {"type": "object"},
        tool.output_schema,
        None,
    )
    notes = list(base.notes)
    transactional: bool | Unknown = UNKNOWN
    provenance: list[tuple[str, str]] = []
    if tool.side_effects is not None:
        transactional = tool.side_effects in (SideEffect.WRITE, SideEffect.DELETE)
        provenance.append(("transactional", "side_effects"))
        if transactional and tool.requires_approval is not True:
            notes.append("violates WriteApproval: side_effects is write/delete without approval")
    if tool.description is None:
        notes.append("description: missing")
    failure_modes: tuple[FailureMode, ...] | Unknown = (
        UNKNOWN if tool.failure_modes is None else tool.failure_modes
    )
    dependencies: tuple[Dependency, ...] | Unknown = (
        UNKNOWN if tool.dependencies is None else tool.dependencies
    )
    result = replace(
        base,
        transactional=transactional,
        failure_modes=failure_modes,
        dependencies=dependencies,
        provenance=tuple(provenance),
        notes=tuple(notes),
    )
    if not isinstance(transactional, Unknown):
        image = phi_plus(result.intent())
        for fname in ("requires_approval", "summary", "failure_modes"):
            if getattr(image, fname) != getattr(tool, fname):
                notes.append(
                    f"{fname}: not what Φ⁺ of the recovered intent gives (outside Image(Φ⁺))"
                )
        result = replace(result, notes=tuple(notes))
    return result


@dataclass(frozen=True, slots=True)
class ServiceUnphi:
    """Φ⁻¹ (paper §5.3) of a tool list grouped by service prefix; the service description is
    carried by no MCP field and is always :data:`UNKNOWN`."""

    name: str
    description: Unknown
    intents: tuple[Unphi, ...]

    def service(self, description: str = "") -> Service:
        """The recovered ``Service`` (every intent must have a known ``t``)."""
        intents = tuple(u.intent() for u in self.intents)
        slots: dict[str, Slot] = {}
        for it in intents:
            for s in (*it.required, *it.optional, *it.result_slots):
                slots.setdefault(s.name, s)
        return Service(self.name, description, tuple(slots.values()), intents)


def unphi_services(
    tools: Sequence[Tool | ToolPlus], default_service: str = "tools"
) -> tuple[ServiceUnphi, ...]:
    """Φ⁻¹ / (Φ⁺)⁻¹ of a whole tool list (paper §5.3, §7.2), grouped into services by the
    ``Service__`` name prefix (tools without one go to ``default_service``)."""
    groups: dict[str, list[Unphi]] = {}
    for t in tools:
        u = unphi_plus(t) if isinstance(t, ToolPlus) else unphi(t)
        key = u.service if isinstance(u.service, str) else default_service
        groups.setdefault(key, []).append(replace(u, service=key))
    return tuple(ServiceUnphi(name, UNKNOWN, tuple(us)) for name, us in groups.items())
