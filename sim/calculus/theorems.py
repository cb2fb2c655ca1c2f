"""The action equivalence of paper §4.3, the approval hiding under which Theorems 4.3 and 5.7
are compared, and the theorem report: Theorems 4.3 (§4.4), 5.7 (§5.4) and 7.1 (§7.3) decided
on every intent of a schema by weak bisimulation and round trips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from sim.calculus.bisim import BisimResult, bisimilar
from sim.calculus.lts import LTS, TAU, label, parse_label, relabel
from sim.calculus.mcp import (
    PROTOCOL_FIELDS,
    VALIDATION_ERROR,
    Tool,
    ToolPlus,
    ToolView,
    caller_view,
    tool_lts,
)
from sim.calculus.phi import phi, phi_annotated, phi_plus, phi_services
from sim.calculus.sgd import MISSING_SLOTS, Intent, Service, intent_lts
from sim.calculus.unphi import UNKNOWN, Unknown, unphi, unphi_plus, unphi_services

__all__ = [
    "THEOREM_CHECKS",
    "TheoremReport",
    "action_equivalence",
    "hide_approval",
    "intent_tool_bisimilar",
    "theorem_report",
    "tool_unphi_plus_bisimilar",
]


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


def tool_unphi_plus_bisimilar(tool: ToolPlus) -> BisimResult:
    """Theorem 7.1.2 of the paper (§7.3) on one MCP⁺ tool: ``T ~ (Φ⁺)⁻¹(T)``, the tool's LTS
    against the LTS of the intent (Φ⁺)⁻¹ recovers, renamed by the action equivalence, with
    approval observable. False for a tool whose failure modes recover by ``Retry``,
    ``UserPrompt`` or ``Fallback``: an SGD intent's errors end the invocation (``abort``),
    so those branches have no SGD counterpart (docs/calculus.md). A tool without
    ``side_effects`` has an unknown ``t``; it is read as not transactional here."""
    u = unphi_plus(tool)
    intent = u.intent(transactional=False if isinstance(u.transactional, Unknown) else None)
    return intent_tool_bisimilar(intent, tool)
