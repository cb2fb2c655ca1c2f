"""A tool's ground-truth descriptor: MCP+ fields, MCP annotations, failure modes,
dependencies, service time and error rates (docs/reference/routing.md, paper §6)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from sim.calculus.mcp import (
    Abort,
    Annotations,
    Dependency,
    FailureMode,
    Fallback,
    RecoveryStrategy,
    Relation,
    Retry,
    ToolPlus,
    UserPrompt,
)
from sim.calculus.mcp.invocation import RETRY_STATES
from sim.scenario.model.base import Probability, Retries, SideEffects, Spec, SpecError
from sim.scenario.model.distribution import Distribution


class RecoverySpec(Spec):
    """One recovery strategy (paper §6.3): exactly one of retry, fallback, prompt, abort."""

    retry: Retries | None = Field(
        None,
        description=f"Retry(n): retry at most n times (n ≤ {RETRY_STATES}: the invocation LTS "
        "counts every retry up to it exactly).",
    )
    fallback: str | None = Field(None, description="Fallback(tool): call this tool instead.")
    prompt: str | None = Field(None, description="UserPrompt(m): ask the user this message.")
    abort: Literal[True] | None = Field(None, description="Abort: give up the task.")

    @model_validator(mode="after")
    def _exactly_one(self) -> RecoverySpec:
        chosen = [
            k for k in ("retry", "fallback", "prompt", "abort") if getattr(self, k) is not None
        ]
        if len(chosen) != 1:
            raise SpecError(
                "a recovery is exactly one of retry, fallback, prompt, abort"
                + (f" (got {', '.join(chosen)})" if chosen else " (got none)"),
                *chosen[1:2],
            )
        return self


def _strategy(spec: RecoverySpec) -> RecoveryStrategy:
    """The calculus's recovery strategy of one checked ``recovery:`` entry."""
    if spec.retry is not None:
        return Retry(spec.retry)
    if spec.fallback is not None:
        return Fallback(spec.fallback)
    if spec.prompt is not None:
        return UserPrompt(spec.prompt)
    return Abort()


class FailureModeSpec(Spec):
    """A declared (ErrorType, RecoveryStrategy) pair (paper §6.3, P3)."""

    error: str = Field(min_length=1, description="Error type, e.g. ServiceDown, NotFound.")
    recovery: RecoverySpec = Field(description="What the caller does after this error.")


class DependencySpec(Spec):
    """A declared (tool, relation) pair (paper §6.4, P4)."""

    tool: str = Field(min_length=1, description="The other tool's name.")
    relation: Relation = Field(description="Requires | ProducesInputFor | ExclusiveWith.")


class AnnotationsSpec(Spec):
    """MCP tool annotations as the server declares them (hints; all optional)."""

    title: str | None = Field(None, description="Human-readable title.")
    readOnlyHint: bool | None = Field(None, description="MCP default false.")
    destructiveHint: bool | None = Field(None, description="MCP default true.")
    idempotentHint: bool | None = Field(None, description="MCP default false.")
    openWorldHint: bool | None = Field(None, description="MCP default true.")


class ToolSpec(Spec):
    """A tool's ground-truth descriptor: the MCP+ fields plus MCP annotations
    (docs/reference/routing.md)."""

    name: str = Field(min_length=1, description="Unique tool name.")
    description: str = Field("", description="Natural-language description (P1).")
    summary: str | None = Field(None, description="MCP+ one-sentence summary.")
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments.",
    )
    side_effects: SideEffects = Field(
        SideEffects.NONE, description="Ground truth: none | read | write | delete."
    )
    requires_approval: bool = Field(
        False, description="MCP+: an approval gate precedes every execution."
    )
    annotations: AnnotationsSpec = Field(
        default_factory=AnnotationsSpec, description="MCP hints as the server declares them."
    )
    failure_modes: list[FailureModeSpec] = Field(
        default_factory=list, description="Declared errors and their recoveries (P3)."
    )
    dependencies: list[DependencySpec] = Field(
        default_factory=list, description="Declared relations to other tools (P4)."
    )
    service_time: Distribution = Field(
        default_factory=lambda: Distribution(dist="constant", value=0.1),
        description="Execution time at the tool server, seconds.",
    )
    errors: dict[str, Probability] = Field(
        default_factory=dict,
        description="Error type → probability per execution; their sum is at most 1.",
    )

    @model_validator(mode="after")
    def _error_mass(self) -> ToolSpec:
        total = sum(self.errors.values())
        if total > 1.0 + 1e-12:
            raise SpecError(
                f"error probabilities sum to {total:g}; at most 1 per execution", "errors"
            )
        return self

    def descriptor(self) -> ToolPlus:
        """This tool's ground truth as the calculus's ``Tool⁺`` (paper §7.1): every MCP⁺
        field declared (none left unknown), its annotations as the server declares them."""
        notes = self.annotations
        return ToolPlus(
            self.name,
            self.description,
            self.input_schema,
            self.side_effects,
            self.requires_approval,
            tuple(FailureMode(fm.error, _strategy(fm.recovery)) for fm in self.failure_modes),
            self.summary,
            tuple(Dependency(d.tool, d.relation) for d in self.dependencies),
            Annotations(
                read_only=notes.readOnlyHint,
                destructive=notes.destructiveHint,
                idempotent=notes.idempotentHint,
                open_world=notes.openWorldHint,
                title=notes.title,
            ),
        )
