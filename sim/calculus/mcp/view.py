"""What a caller knows of a tool (SPEC §2): the descriptor projected to the fields its protocol
carries, and the approval decision (paper §6.2 WriteApproval, as far as the caller can apply
it)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from sim.calculus.mcp.model import ALL_FIELDS, Annotations, SideEffect, Tool, ToolPlus

__all__ = ["ToolView", "approval_rule", "caller_view"]


@dataclass(frozen=True, slots=True)
class ToolView:
    """What a caller knows of a tool (SPEC §2): the descriptor projected to ``fields`` and the
    approval decision (paper §6.2 WriteApproval, as far as the caller can apply it)."""

    descriptor: ToolPlus
    fields: frozenset[str]
    approval: bool
    approval_reason: str = field(default="")


def caller_view(
    tool: Tool | ToolPlus, fields: Collection[str] = ALL_FIELDS, mcp_policy: str = "hints"
) -> ToolView:
    """Project ``tool`` to ``fields`` and decide the approval gate by :func:`approval_rule`
    (SPEC §2)."""
    if mcp_policy not in ("hints", "never", "always"):
        raise ValueError(f"mcp_policy must be hints|never|always, not {mcp_policy!r}")
    full = ToolPlus.from_tool(tool) if isinstance(tool, Tool) else tool
    keep = frozenset(fields)
    unknown = sorted(keep - ALL_FIELDS)
    if unknown:
        raise ValueError(f"unknown descriptor fields: {', '.join(unknown)}")

    def pick(name: str, value: Any) -> Any:
        return value if name in keep else None

    d = ToolPlus(
        full.name,
        pick("description", full.description),
        pick("input_schema", full.input_schema),
        pick("side_effects", full.side_effects),
        pick("requires_approval", full.requires_approval),
        pick("failure_modes", full.failure_modes),
        pick("summary", full.summary),
        pick("dependencies", full.dependencies),
        pick("annotations", full.annotations),
        full.output_schema if "input_schema" in keep else None,
    )
    ask, reason = approval_rule(d, mcp_policy)
    return ToolView(d, keep, ask, reason)


def approval_rule(known: ToolPlus, mcp_policy: str = "hints") -> tuple[bool, str]:
    """Whether a caller that knows ``known`` (unknown fields None) asks for approval, and
    why (SPEC §2): ``requires_approval`` if known; else ``side_effects`` (ask for write or
    delete); else ``mcp_policy``: ``hints`` (ask unless ``readOnlyHint`` is true, an absent
    hint taking the MCP default false), ``never`` or ``always``."""
    if known.requires_approval is not None:
        return known.requires_approval, "requires_approval"
    if known.side_effects is not None:
        ask = known.side_effects in (SideEffect.WRITE, SideEffect.DELETE)
        return ask, f"side_effects={known.side_effects.value}"
    if mcp_policy == "hints":
        read_only = (known.annotations or Annotations()).effective("readOnlyHint")
        return not read_only, f"mcp_policy=hints, readOnlyHint={read_only}"
    return mcp_policy == "always", f"mcp_policy={mcp_policy}"
