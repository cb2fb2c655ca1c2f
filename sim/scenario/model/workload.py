"""The workload: workflows W = (T, ≺, ρ), their arrivals and initiators, and the
scheduled or random failures (docs/scenario.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from sim.scenario.model.base import AgentType, NonNegative, Positive, Spec, SpecError


class ArrivalsSpec(Spec):
    """When instances of a workflow start: a Poisson process or listed times."""

    process: Literal["poisson"] | None = Field(None, description="poisson: exponential gaps.")
    rate: Positive | None = Field(None, description="Poisson rate, instances per second.")
    times: list[NonNegative] | None = Field(
        None, description="Explicit start times, seconds (non-decreasing)."
    )

    @model_validator(mode="after")
    def _one_form(self) -> ArrivalsSpec:
        if self.times is not None:
            if self.process is not None or self.rate is not None:
                raise SpecError(
                    "give either times or {process: poisson, rate}, not both",
                    "process" if self.process is not None else "rate",
                )
            for k in range(1, len(self.times)):
                if self.times[k] < self.times[k - 1]:
                    raise SpecError(
                        f"arrival times must be non-decreasing ({self.times[k]:g} s comes "
                        f"after {self.times[k - 1]:g} s)",
                        "times",
                        k,
                    )
        elif self.process is None or self.rate is None:
            raise SpecError(
                "arrivals need {process: poisson, rate: R} or {times: [...]}",
                "rate" if self.process is not None else "process",
            )
        return self


class TaskSpec(Spec):
    """A task t ∈ T: one tool call (or a capability the semantic router resolves)."""

    id: str = Field(min_length=1, description="Task id, unique in its workflow.")
    tool: str | None = Field(None, description="The tool to call.")
    capability: str | None = Field(
        None, description="Instead of a tool: a capability the semantic router resolves."
    )
    args: dict[str, Any] = Field(default_factory=dict, description="Call arguments.")
    after: list[str] = Field(default_factory=list, description="≺: tasks that must succeed first.")
    protocol: str | None = Field(None, description="ρ override for this task.")
    timeout: Positive | None = Field(None, description="Per-call timeout override, seconds.")

    @model_validator(mode="after")
    def _tool_or_capability(self) -> TaskSpec:
        if self.tool is not None and self.capability is not None:
            raise SpecError(
                "a task names exactly one of tool or capability, not both", "capability"
            )
        if self.tool is None and self.capability is None:
            raise SpecError("a task names a tool or a capability (neither given)")
        return self


class InitiatorsSpec(Spec):
    """Several initiators: each instance starts at one of them, drawn uniformly at random
    (from the arrivals stream). Exactly one of ``type`` and ``agents``."""

    type: AgentType | None = Field(
        None,
        description="Every agent of this type that speaks the workflow's protocols "
        "(ρ and the tasks' overrides), e.g. the LLM agents of a generated mesh.",
    )
    agents: list[str] | None = Field(None, min_length=1, description="These agent ids.")

    @model_validator(mode="after")
    def _one_form(self) -> InitiatorsSpec:
        if (self.type is None) == (self.agents is None):
            raise ValueError("initiators take exactly one of `type` or `agents`")
        return self


class WorkflowSpec(Spec):
    """A workflow W = (T, ≺, ρ) with its initiator(s) and arrival process."""

    name: str = Field(min_length=1, description="Unique workflow name.")
    initiator: str | None = Field(None, description="Agent id that runs the instances.")
    initiators: InitiatorsSpec | None = Field(
        None, description="Instead of `initiator`: several agents, one drawn per instance."
    )
    protocol: str = Field(description="ρ: the protocol the tasks are issued in.")
    arrivals: ArrivalsSpec = Field(description="When instances start.")
    tasks: list[TaskSpec] = Field(min_length=1, description="T, with ≺ given by `after`.")
    timeout: Positive = Field(30.0, description="Per-call timeout, seconds.")

    @model_validator(mode="after")
    def _initiator_or_initiators(self) -> WorkflowSpec:
        if (self.initiator is None) == (self.initiators is None):
            raise SpecError("a workflow names exactly one of initiator or initiators", "initiator")
        return self

    def protocols_issued(self) -> frozenset[str]:
        """ρ and every task's protocol override: what an initiator must speak."""
        return frozenset((self.protocol, *(t.protocol for t in self.tasks if t.protocol)))

    def rho_of(self, task: TaskSpec) -> str:
        """The protocol ``task`` is issued in: its own override, else ρ
        (docs/reference/routing.md)."""
        return task.protocol or self.protocol


class RandomFailureSpec(Spec):
    """Exponential up and down times for each listed node or link."""

    nodes: list[str] = Field(default_factory=list, description="Agent ids that fail at random.")
    links: list[list[str]] = Field(
        default_factory=list, description="Links (pairs of agent ids) that fail at random."
    )
    mtbf: Positive = Field(description="Mean time between failures, seconds.")
    mttr: Positive = Field(description="Mean time to repair, seconds.")


class FailureSpec(Spec):
    """A scheduled outage of a node or link, or a random failure process."""

    node: str | None = Field(None, description="Agent id that goes down.")
    link: list[str] | None = Field(
        None, min_length=2, max_length=2, description="Link (pair of agent ids) that goes down."
    )
    at: NonNegative | None = Field(None, description="Outage start, seconds.")
    for_: NonNegative | None = Field(None, alias="for", description="Outage length, seconds.")
    random: RandomFailureSpec | None = Field(None, description="Random failures.")
    kill: bool = Field(
        False,
        description="The live mesh: kill the agent's process and restart it after the "
        "outage (default: stop it with SIGSTOP and resume it with SIGCONT).",
    )

    @model_validator(mode="after")
    def _one_form(self) -> FailureSpec:
        scheduled = self.node is not None or self.link is not None
        if self.random is not None:
            if scheduled or self.at is not None or self.for_ is not None:
                raise SpecError(
                    "a random failure takes only `random:` (not node, link, at or for)", "random"
                )
        elif not scheduled:
            raise SpecError("a failure names a node, a link, or random")
        elif self.node is not None and self.link is not None:
            raise SpecError("a scheduled failure names a node or a link, not both", "link")
        elif self.at is None or self.for_ is None:
            raise SpecError("a scheduled failure needs `at` and `for` (start and length, seconds)")
        if self.kill and self.node is None and (self.random is None or not self.random.nodes):
            raise SpecError("kill applies to a node's outage (a link has no process)", "kill")
        return self
