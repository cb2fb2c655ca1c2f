"""The mappings Φ (paper §4.1), Φ⁺ (paper §7.2) and their inverses (§5.3, §7.2), the action
equivalence of §4.3, and the approval-hiding under which Theorems 4.3 and 5.7 are compared.

Φ follows Definition 4.1, with three choices where the data demand one (docs/calculus.md):
tool names are ``Service__Intent``; an optional slot's real default becomes JSON Schema
``default`` (``dontcare`` is not a default); a non-categorical slot's example values become
``examples`` (only categorical slots get ``enum``); result slots become ``outputSchema``.
Φ⁻¹ never guesses: what no field carries is :data:`UNKNOWN`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Literal

from sim.calculus.bisim import BisimResult, bisimilar
from sim.calculus.lts import LTS, TAU, label, parse_label, relabel
from sim.calculus.mcp import (
    PROTOCOL_FIELDS,
    VALIDATION_ERROR,
    Abort,
    Annotations,
    Dependency,
    FailureMode,
    Relation,
    SideEffect,
    Tool,
    ToolPlus,
    ToolView,
    caller_view,
    tool_lts,
)
from sim.calculus.sgd import (
    EXECUTION_ERROR,
    MISSING_SLOTS,
    SERVICE_SEPARATOR,
    Intent,
    Service,
    Slot,
    intent_lts,
)

__all__ = [
    "THEOREM_CHECKS",
    "UNKNOWN",
    "ServiceUnphi",
    "TheoremReport",
    "Unknown",
    "Unphi",
    "action_equivalence",
    "extract_deps",
    "extract_errors",
    "first_sentence",
    "hide_approval",
    "intent_tool_bisimilar",
    "phi",
    "phi_annotated",
    "phi_plus",
    "phi_services",
    "schema",
    "theorem_report",
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


def _prop(slot: Slot, default: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": slot.type, "description": slot.description}
    if slot.is_categorical and slot.possible_values:
        out["enum"] = list(slot.possible_values)
    elif slot.possible_values:
        out["examples"] = list(slot.possible_values)
    if default is not None:
        out["default"] = default
    return out


def schema(intent: Intent) -> dict[str, Any]:
    """``schema(R, O)`` of paper §4.1: required = R's names, properties = ``prop(s)`` for
    ``s ∈ R ∪ O``, ``enum`` for categorical slots only, ``default`` for real defaults."""
    props = {s.name: _prop(s) for s in intent.required}
    props.update({s.name: _prop(s, intent.default(s.name)) for s in intent.optional})
    return {
        "type": "object",
        "required": [s.name for s in intent.required],
        "properties": props,
    }


def _output_schema(intent: Intent) -> dict[str, Any] | None:
    if not intent.result_slots:
        return None
    return {"type": "object", "properties": {s.name: _prop(s) for s in intent.result_slots}}


def phi(intent: Intent) -> Tool:
    """Φ(Intent⟨n, d, R, O, t⟩) = Tool⟨n, d, schema(R, O)⟩ (paper §4.1, Definition 4.1):
    ``t`` is dropped."""
    return Tool(
        intent.qualified_name, intent.description, schema(intent), None, _output_schema(intent)
    )


def phi_annotated(intent: Intent) -> Tool:
    """Φ with MCP annotations: a transactional intent gets ``readOnlyHint: false,
    destructiveHint: false, idempotentHint: false``, any other ``readOnlyHint: true``. Not in the
    paper: it measures how much the (untrusted) hints of MCP recover of ``t`` (§5.4)."""
    if intent.transactional:
        ann = Annotations(read_only=False, destructive=False, idempotent=False)
    else:
        ann = Annotations(read_only=True)
    return replace(phi(intent), annotations=ann)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """``first_sentence(d)`` of paper §7.2: up to the first ``.``, ``!`` or ``?`` + space."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def extract_errors(intent: Intent) -> tuple[FailureMode, ...]:
    """``extract_errors(Intent)`` of paper §7.2: the SGD semantics' errors with their recovery.

    SGD's ``Error⟨t, m⟩`` ends the invocation (a new attempt needs a new invocation and, for
    a transactional intent, a new confirmation), so each error type recovers by ``Abort``:
    ``ValidationError`` (the MCP name of ``MissingSlots``, §4.4 Case 2) when there are
    required slots, and ``ExecutionError`` (a failed service call) always.
    """
    modes = [FailureMode(VALIDATION_ERROR, Abort())] if intent.required else []
    modes.append(FailureMode(EXECUTION_ERROR, Abort()))
    return tuple(modes)


def _new_outputs(intent: Intent) -> set[str]:
    inputs = {s.name for s in intent.required} | {s.name for s in intent.optional}
    return {s.name for s in intent.result_slots} - inputs


def extract_deps(intent: Intent, service: Service | None) -> tuple[Dependency, ...]:
    """``extract_deps(Intent)`` of paper §7.2: ``(J, ProducesInputFor)`` for every other intent
    ``J`` of the same service with a required slot that ``intent`` produces as a result
    without taking it as input (e.g. ``SearchHotel`` produces ``hotel_name`` for
    ``ReserveHotel``). Without a service there are none."""
    if service is None:
        return ()
    produced = _new_outputs(intent)
    deps: list[Dependency] = []
    for other in service.intents:
        if other.name == intent.name:
            continue
        if produced & {s.name for s in other.required}:
            deps.append(Dependency(other.qualified_name, Relation.PRODUCES_INPUT_FOR))
    return tuple(deps)


def phi_plus(intent: Intent, service: Service | None = None) -> ToolPlus:
    """Φ⁺(Intent⟨n, d, R, O, t⟩) = Tool⟨n, d, schema(R, O)⟩⁺[meta] (paper §7.2) with
    side_effects = t ? write : read, requires_approval = t, failure_modes = extract_errors,
    summary = first_sentence(d), dependencies = extract_deps (within ``service``)."""
    base = phi(intent)
    return ToolPlus(
        base.name,
        base.description,
        base.input_schema,
        SideEffect.WRITE if intent.transactional else SideEffect.READ,
        intent.transactional,
        extract_errors(intent),
        first_sentence(intent.description),
        extract_deps(intent, service),
        None,
        base.output_schema,
    )


def phi_services(
    services: Sequence[Service], *, plus: bool = False, annotations: bool = False
) -> tuple[Tool | ToolPlus, ...]:
    """Φ (or Φ⁺ with ``plus``; Φ with annotations with ``annotations``) of every intent of
    ``services``, in schema order (paper §4.1 and §7.2, lifted to ``S1 | S2``)."""
    out: list[Tool | ToolPlus] = []
    for svc in services:
        for intent in svc.intents:
            if plus:
                tp = phi_plus(intent, svc)
                if annotations:
                    tp = replace(tp, annotations=phi_annotated(intent).annotations)
                out.append(tp)
            else:
                out.append(phi_annotated(intent) if annotations else phi(intent))
    return tuple(out)


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


def action_equivalence(lab: str) -> str:
    """The action equivalence of paper §4.3 as a renaming of SGD labels into MCP ones:
    ``invoke(n) ≈ call(n)``, ``collect(s) ≈ τ``, ``confirm(n) ≈ approve(n)``,
    ``error(n,MissingSlots) ≈ error(n,ValidationError)``; everything else is unchanged."""
    if lab == TAU:
        return lab
    action, args = parse_label(lab)
    if action == "invoke":
        return label("call", *args)
    if action == "collect":
        return TAU
    if action == "confirm":
        return label("approve", *args)
    if action == "error" and len(args) == 2 and args[1] == MISSING_SLOTS:
        return label("error", args[0], VALIDATION_ERROR)
    return lab


def hide_approval(lts: LTS, *, deny: bool = False) -> LTS:
    """Hide the approval interaction (paper §4.4 proof of Theorem 4.3, which has none):
    ``approve``/``confirm`` become τ and ``deny`` is removed, i.e. ``(P ∥ Grant) \\ {approve,
    deny}`` with an approver that always grants. With ``deny=True`` the approver may also
    refuse: ``deny`` becomes τ as well (an internal choice to cancel)."""

    def rename(lab: str) -> str | None:
        if lab == TAU:
            return lab
        action = parse_label(lab)[0]
        if action in ("approve", "confirm"):
            return TAU
        if action == "deny":
            return TAU if deny else None
        return lab

    return relabel(lts, rename)


def intent_tool_bisimilar(
    intent: Intent,
    tool: Tool | ToolPlus | ToolView,
    *,
    approval: Literal["observable", "hidden", "hidden-deny"] = "observable",
    weak: bool = True,
) -> BisimResult:
    """Decide ``S ~ M`` (paper §4.4) for the LTS of ``intent`` renamed by the action equivalence
    of §4.3 and the LTS of ``tool``, with the approval interaction observable (Theorem 5.7),
    hidden with a granting approver (Theorem 4.3's proof), or hidden with an approver that
    may also deny."""
    s = relabel(intent_lts(intent), action_equivalence)
    m = tool_lts(tool)
    if approval != "observable":
        s = hide_approval(s, deny=approval == "hidden-deny")
        m = hide_approval(m, deny=approval == "hidden-deny")
    return bisimilar(s, m, weak=weak)


@dataclass(frozen=True, slots=True)
class TheoremReport:
    """Theorems 4.3 (§4.4), 5.7 (§5.4) and 7.1 (§7.3) of the paper decided on every intent of a
    schema: for each check, the qualified names of the intents where it holds."""

    services: int
    intents: tuple[str, ...]
    transactional: tuple[str, ...]
    holds: Mapping[str, tuple[str, ...]]

    def count(self, check: str) -> int:
        """How many intents pass ``check``."""
        return len(self.holds[check])

    def fails(self, check: str) -> tuple[str, ...]:
        """The intents where ``check`` does not hold, in schema order."""
        ok = set(self.holds[check])
        return tuple(n for n in self.intents if n not in ok)


THEOREM_CHECKS: Mapping[str, str] = {
    "phi_hidden": "S ~ Φ(S), approval hidden (granting approver; Theorem 4.3's proof)",
    "phi_hidden_deny": "S ~ Φ(S), approval hidden with an approver that may deny",
    "phi_observable": "S ~ Φ(S), approval observable (Theorem 5.7)",
    "phi_plus_hidden": "S ~ Φ⁺(S), approval hidden",
    "phi_plus_observable": "S ~ Φ⁺(S), approval observable (Theorem 7.1.1)",
    "phi_mcp_hints_observable": "S ~ Φ(S) seen by an MCP caller, mcp_policy=hints",
    "phi_annotated_hints_observable": "S ~ Φ_ann(S) seen by an MCP caller, mcp_policy=hints",
    "unphi_plus_phi_plus_id": "(Φ⁺)⁻¹ ∘ Φ⁺ = id (Theorem 7.1.3)",
    "unphi_phi_id": "Φ⁻¹ ∘ Φ = id",
    "unphi_phi_id_except_t": "Φ⁻¹ ∘ Φ = id on every field but t, and t is UNKNOWN",
    "unphi_phi_annotated_recovers_t": "Φ⁻¹ ∘ Φ_ann recovers t (from readOnlyHint)",
    "phi_plus_unphi_plus_id": "Φ⁺ ∘ (Φ⁺)⁻¹ = id on the image (Theorem 7.1.4)",
}
"""The checks of :func:`theorem_report` and what each decides."""


def theorem_report(services: Sequence[Service]) -> TheoremReport:
    """Decide the checks of :data:`THEOREM_CHECKS` (paper §4.4 Theorem 4.3, §5.4 Theorem 5.7,
    §7.3 Theorem 7.1) on every intent of ``services`` by weak bisimulation and round trips."""
    holds: dict[str, list[str]] = {k: [] for k in THEOREM_CHECKS}
    mcp_fields = PROTOCOL_FIELDS["MCP"]
    image = phi_services(services, plus=True)
    back = {u.qualified: u for u in _unphi_intents(image)}
    names: list[str] = []
    for svc in services:
        for s in svc.intents:
            n = s.qualified_name
            names.append(n)
            m, mp = phi(s), phi_plus(s, svc)
            verdicts = {
                "phi_hidden": intent_tool_bisimilar(s, m, approval="hidden"),
                "phi_hidden_deny": intent_tool_bisimilar(s, m, approval="hidden-deny"),
                "phi_observable": intent_tool_bisimilar(s, m),
                "phi_plus_hidden": intent_tool_bisimilar(s, mp, approval="hidden"),
                "phi_plus_observable": intent_tool_bisimilar(s, mp),
                "phi_mcp_hints_observable": intent_tool_bisimilar(
                    s, caller_view(m, mcp_fields, "hints")
                ),
                "phi_annotated_hints_observable": intent_tool_bisimilar(
                    s, caller_view(phi_annotated(s), mcp_fields, "hints")
                ),
            }
            for check, result in verdicts.items():
                if result.equivalent:
                    holds[check].append(n)
            u_plus = unphi_plus(mp)
            if u_plus.unknown == () and u_plus.intent() == s:
                holds["unphi_plus_phi_plus_id"].append(n)
            u = unphi(m)
            if not isinstance(u.transactional, Unknown) and u.intent() == s:
                holds["unphi_phi_id"].append(n)
            if u.transactional is UNKNOWN and u.intent(transactional=s.transactional) == s:
                holds["unphi_phi_id_except_t"].append(n)
            if unphi(phi_annotated(s)).transactional == s.transactional:
                holds["unphi_phi_annotated_recovers_t"].append(n)
            recovered = back[n]
            if phi_plus(recovered.intent, recovered.service) == mp:
                holds["phi_plus_unphi_plus_id"].append(n)
    transactional = tuple(
        i.qualified_name for svc in services for i in svc.intents if i.transactional
    )
    return TheoremReport(
        len(services),
        tuple(names),
        transactional,
        {k: tuple(v) for k, v in holds.items()},
    )


@dataclass(frozen=True, slots=True)
class _Recovered:
    qualified: str
    intent: Intent
    service: Service


def _unphi_intents(tools: Sequence[Tool | ToolPlus]) -> list[_Recovered]:
    out: list[_Recovered] = []
    for group in unphi_services(tools):
        service = group.service()
        for intent in service.intents:
            out.append(_Recovered(intent.qualified_name, intent, service))
    return out
