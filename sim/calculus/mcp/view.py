"""What a caller knows of a tool (SPEC §2): the descriptor projected to the fields its protocol
carries, and the approval decision (paper §6.2 WriteApproval, as far as the caller can apply
it)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from sim.calculus.mcp.model import ALL_FIELDS, Annotations, SideEffect, Tool, ToolPlus

__all__ = ["ToolView", "caller_view"]


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
    """Project ``tool`` to ``fields`` and decide the approval gate as SPEC §2 prescribes:
    ``requires_approval`` if known; else ``side_effects`` (ask for write or delete); else
    ``mcp_policy``: ``hints`` (ask unless ``readOnlyHint`` is true, an absent hint taking the
    MCP default false), ``never`` or ``always``."""
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
    if d.requires_approval is not None:
        return ToolView(d, keep, d.requires_approval, "requires_approval")
    if d.side_effects is not None:
        ask = d.side_effects in (SideEffect.WRITE, SideEffect.DELETE)
        return ToolView(d, keep, ask, f"side_effects={d.side_effects.value}")
    if mcp_policy == "hints":
        read_only = (d.annotations or Annotations()).effective("readOnlyHint")
        return ToolView(d, keep, not read_only, f"mcp_policy=hints, readOnlyHint={read_only}")
    return ToolView(d, keep, mcp_policy == "always", f"mcp_policy={mcp_policy}")
