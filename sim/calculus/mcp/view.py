"""What a caller knows of a tool (SPEC §2): the descriptor projected to the fields its protocol
carries, and the approval decision (paper §6.2 WriteApproval, as far as the caller can apply
it)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.calculus.mcp.model import (
    ALL_FIELDS,
    SERVICE_DOWN,
    Annotations,
    RecoveryStrategy,
    Relation,
    Retry,
    SideEffect,
    Tool,
    ToolPlus,
)

__all__ = ["Knowledge", "ToolView", "approval_rule", "caller_view", "knowledge"]


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


@dataclass(frozen=True, slots=True, eq=False)
class Knowledge:
    """What a view tells its caller to do (SPEC §4): the inputs the schema requires, the
    tools it ``Requires``, feeds (``ProducesInputFor``) and excludes (``ExclusiveWith``),
    the recovery of each error (the first failure mode declared for it wins) and the
    re-sends ``Retry(n)`` allows for ServiceDown (0: none)."""

    required: tuple[str, ...]
    requires: tuple[str, ...]
    feeds: tuple[str, ...]
    exclusive: tuple[str, ...]
    recovery: Mapping[str, RecoveryStrategy]
    sd_retries: int


def knowledge(view: ToolView, excluded_by: Collection[str] = ()) -> Knowledge:
    """The :class:`Knowledge` of ``view`` (SPEC §2, §4; unknown fields: nothing required,
    no dependency, no recovery). ``excluded_by``: the tools that declare this one
    ExclusiveWith (:func:`excluders`); a view that keeps ``dependencies`` knows them as
    partners too (the relation binds both tools of a pair), after its own, in name order."""
    d = view.descriptor
    schema = d.input_schema or {}
    deps = d.dependencies or ()
    recovery: dict[str, RecoveryStrategy] = {}
    for fm in d.failure_modes or ():
        recovery.setdefault(fm.error, fm.recovery)
    sd = recovery.get(SERVICE_DOWN)
    exclusive = tuple(x.tool for x in deps if x.relation == Relation.EXCLUSIVE_WITH)
    if excluded_by and "dependencies" in view.fields:
        exclusive += tuple(sorted(set(excluded_by) - set(exclusive)))
    return Knowledge(
        tuple(schema.get("required", ()) or ()),
        tuple(x.tool for x in deps if x.relation == Relation.REQUIRES),
        tuple(x.tool for x in deps if x.relation == Relation.PRODUCES_INPUT_FOR),
        exclusive,
        recovery,
        sd.n if isinstance(sd, Retry) else 0,
    )


def excluders(tools: Iterable[ToolPlus]) -> dict[str, frozenset[str]]:
    """ExclusiveWith is symmetric (paper §6.4, docs/checks/exclusive.md): declared on either
    side, it binds both. Per tool named by a declaration among ``tools``, the tools that
    declare it (its partners its own descriptor may not name); other names are left out."""
    listed = list(tools)
    names = {t.name for t in listed}
    out: dict[str, set[str]] = {}
    for t in listed:
        for dep in t.dependencies or ():
            if dep.relation == Relation.EXCLUSIVE_WITH and dep.tool in names:
                out.setdefault(dep.tool, set()).add(t.name)
    return {name: frozenset(by) for name, by in out.items()}
