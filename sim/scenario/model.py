"""The scenario YAML contract (SPEC §1) as pydantic models.

These models check the *shape* of each field (types, ranges, enumerations, which
parameters a distribution needs). Rules that relate fields to each other (ids that
must exist, protocols both ends must speak, ≺ acyclic, ...) live in
:mod:`sim.scenario.rules`, so that one file reports every error at once.

Units: simulated time in seconds; costs in seconds-equivalent; probabilities in [0, 1].
Pydantic stays at the edge: the engine and the routers never see these classes on
their hot paths.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from sim.calculus.mcp import DescriptorField, Relation, SideEffect
from sim.scenario.properties_rules import PropertySpec

#: The protocols protomesh knows without a ``fields:`` declaration (SPEC §2).
BUILTIN_PROTOCOLS: tuple[str, ...] = ("MCP", "MCP+", "A2A", "ANP", "SGD")

#: Router strategies (SPEC §3).
ROUTERS: tuple[str, ...] = ("dijkstra", "bfs", "resilient", "semantic")


def _not_boolean(value: Any) -> Any:
    """YAML's ``true``/``yes``/``on`` are not numbers (pydantic would read them as 1)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not the boolean {str(value).lower()}")
    return value


_NOT_BOOLEAN = BeforeValidator(_not_boolean)
# Constraints come before the validator in each alias, so pydantic keeps them in the
# JSON Schema (exclusiveMinimum, maximum, ...) for editors.
#: A whole number (booleans rejected).
Whole = Annotated[int, _NOT_BOOLEAN]
Count = Annotated[int, Field(ge=0), _NOT_BOOLEAN]
#: Finite real numbers (booleans, ``.inf`` and ``.nan`` rejected) in a range.
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False), _NOT_BOOLEAN]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False), _NOT_BOOLEAN]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False), _NOT_BOOLEAN]
Affinity = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False), _NOT_BOOLEAN]


class SpecError(ValueError):
    """A model-level error about one of the model's own fields.

    ``where`` is the path of that field relative to the model, e.g. ``("times", 3)``;
    the loader points the diagnostic there (the nearest part present in the file).
    """

    def __init__(self, message: str, *where: str | int) -> None:
        super().__init__(message)
        self.where: tuple[str | int, ...] = where


class Spec(BaseModel):
    """Base of every scenario model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class AgentType(StrEnum):
    """The node types of the Protocol Graph Model."""

    LLM_AGENT = "LLM_AGENT"
    TOOL_SERVER = "TOOL_SERVER"
    COORDINATOR = "COORDINATOR"
    GATEWAY = "GATEWAY"


#: A tool's ground-truth side effect (paper §6.2, P2): the calculus's enumeration.
SideEffects = SideEffect


class McpPolicy(StrEnum):
    """How a caller that cannot see ``requires_approval`` or ``side_effects`` decides."""

    HINTS = "hints"
    NEVER = "never"
    ALWAYS = "always"


class TraceLevel(StrEnum):
    """How much of a run the trace records (SPEC §5)."""

    FULL = "full"
    PROTOCOL = "protocol"
    OFF = "off"


_DIST_ORDER: tuple[str, ...] = ("value", "mean", "median", "sigma", "low", "high")

_DIST_PARAMS: dict[str, tuple[str, ...]] = {
    "constant": ("value",),
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),
    "uniform": ("low", "high"),
}


class Distribution(Spec):
    """A non-negative random duration in seconds.

    ``constant`` {value}; ``exponential`` {mean}; ``lognormal`` {median, sigma}
    (sigma of the underlying normal); ``uniform`` {low, high}.
    """

    dist: Literal["constant", "exponential", "lognormal", "uniform"] = Field(
        description="Distribution family: constant | exponential | lognormal | uniform."
    )
    value: NonNegative | None = Field(None, description="constant: the value, seconds.")
    mean: NonNegative | None = Field(None, description="exponential: the mean, seconds.")
    median: NonNegative | None = Field(None, description="lognormal: the median, seconds.")
    sigma: NonNegative | None = Field(
        None, description="lognormal: standard deviation of log(duration), dimensionless."
    )
    low: NonNegative | None = Field(None, description="uniform: lower bound, seconds.")
    high: NonNegative | None = Field(None, description="uniform: upper bound, seconds.")

    @model_validator(mode="after")
    def _parameters_match_family(self) -> Distribution:
        needed = _DIST_PARAMS[self.dist]
        given = {k for k in _DIST_ORDER if getattr(self, k) is not None}
        missing = [k for k in needed if k not in given]
        extra = [k for k in _DIST_ORDER if k in given and k not in needed]
        if missing or extra:
            article = "an" if self.dist[0] in "aeiou" else "a"
            message = f"{article} {self.dist} distribution takes {', '.join(needed)}"
            if extra:
                message += f", not {', '.join(extra)}"
            if missing:
                message += f" (missing: {', '.join(missing)})"
            raise SpecError(message, *(extra[:1] or ["dist"]))
        if self.dist == "uniform" and (self.low or 0.0) > (self.high or 0.0):
            raise SpecError(
                f"uniform low ({self.low:g}) must not be above high ({self.high:g})", "low"
            )
        return self

    def mean_value(self) -> float:
        """The distribution's mean, seconds."""
        import math

        if self.dist == "constant":
            return float(self.value or 0.0)
        if self.dist == "exponential":
            return float(self.mean or 0.0)
        if self.dist == "lognormal":
            return float(self.median or 0.0) * math.exp(float(self.sigma or 0.0) ** 2 / 2)
        return (float(self.low or 0.0) + float(self.high or 0.0)) / 2


def _trace_level(value: Any) -> Any:
    """YAML 1.1 reads a bare ``off`` as false: take it as the trace level ``off``."""
    return "off" if value is False else value


def _protocol_entry(value: Any) -> Any:
    """Accept ``MCP`` as shorthand for ``{name: MCP}``."""
    return {"name": value} if isinstance(value, str) else value


class ProtocolSpec(Spec):
    """A protocol of P: a built-in name, or a user-defined one with its field set."""

    name: str = Field(min_length=1, description="Protocol name, e.g. MCP, MCP+, A2A, ANP, SGD.")
    fields: list[DescriptorField] | None = Field(
        None,
        description="Descriptor fields this protocol represents; required for a protocol "
        "that is not built in, optional override for a built-in one.",
    )


class RoutingSpec(Spec):
    """Router parameters shared by all strategies."""

    loss_penalty: NonNegative = Field(
        1.0, description="Weight of semantic loss in τ, seconds-equivalent per unit of loss."
    )
    translation_delay: NonNegative = Field(
        0.002, description="Default translation time at a node, seconds."
    )
    suspect_ttl: Positive = Field(
        30.0, description="How long the resilient router avoids a suspected node or link, seconds."
    )


class ApprovalSpec(Spec):
    """The human (or policy) behind approval gates."""

    latency: Distribution = Field(
        default_factory=lambda: Distribution(dist="constant", value=1.0),
        description="Time from approval request to answer, seconds.",
    )
    grant_probability: Probability = Field(
        0.95, description="Probability that an approval request is granted."
    )
    mcp_policy: McpPolicy = Field(
        McpPolicy.HINTS,
        description="How a caller that sees neither requires_approval nor side_effects "
        "decides: hints (ask unless readOnlyHint is true) | never | always.",
    )


class AgentSpec(Spec):
    """A node v of G: an agent with its type, capabilities and protocols Γ(v, ·)."""

    id: str = Field(min_length=1, description="Unique agent id.")
    type: AgentType = Field(description="LLM_AGENT | TOOL_SERVER | COORDINATOR | GATEWAY.")
    capabilities: list[str] = Field(
        default_factory=list, description="Capability names, matched by the semantic router."
    )
    protocols: dict[str, Affinity] = Field(
        min_length=1,
        description="Protocols spoken, each with its affinity Γ(v, p) in (0, 1].",
    )
    translation_delay: NonNegative | None = Field(
        None, description="This node's translation time, seconds (overrides every default)."
    )
    tools: list[str] = Field(default_factory=list, description="Names of the tools hosted here.")
    concurrency: Whole = Field(
        8, ge=1, description="Tool executions served at once; more wait in a FIFO queue."
    )


class LinkSpec(Spec):
    """An edge e of G with Φ(e) and the latency w_e(p) of each protocol."""

    between: list[str] = Field(
        min_length=2, max_length=2, description="The two agent ids this link joins (undirected)."
    )
    latency: dict[str, NonNegative] = Field(
        min_length=1,
        description="Φ(e): protocols carried, each with its mean one-way latency w_e(p), seconds.",
    )
    jitter: NonNegative = Field(
        0.0, description="Mean of the exponential extra latency per hop, seconds (0: none)."
    )


class TranslationSpec(Spec):
    """A rule for one ordered protocol pair p → p' (forbid, destroy or calibrate it)."""

    from_: str = Field(alias="from", description="Source protocol p.")
    to: str = Field(description="Target protocol p'.")
    allowed: bool = Field(True, description="False forbids translating p → p' anywhere.")
    loss: Probability | None = Field(
        None, description="Measured loss in [0, 1], overriding the derived field loss."
    )
    delay: NonNegative | None = Field(
        None, description="Measured translation time, seconds (a node's own delay still wins)."
    )
    destructive: bool = Field(False, description="The translation can fail (⊥).")
    fail: Probability = Field(
        0.0, description="Probability that a destructive translation fails (⊥)."
    )


class RecoverySpec(Spec):
    """One recovery strategy (paper §6.3): exactly one of retry, fallback, prompt, abort."""

    retry: Count | None = Field(None, description="Retry(n): retry at most n times.")
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
    """A tool's ground-truth descriptor: the MCP+ fields plus MCP annotations (SPEC §2)."""

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
        return self


#: Generators of the ``topology:`` block and the parameters each takes
#: (name → (required, optional)); see :mod:`sim.scenario.generate`.
GENERATORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "barabasi_albert": (("m",), ()),
    "waxman": ((), ("alpha", "beta")),
    "grid": ((), ("rows", "cols")),
    "erdos_renyi": ((), ("p", "degree")),
    "random_regular": (("degree",), ()),
    "watts_strogatz": (("k",), ("p",)),
}


class AffinityRangeSpec(Spec):
    """Affinities Γ(v, p) of generated agents: uniform in [min, max]."""

    min: Affinity = Field(0.5, description="Lowest affinity.")
    max: Affinity = Field(1.0, description="Highest affinity.")

    @model_validator(mode="after")
    def _ordered(self) -> AffinityRangeSpec:
        if self.min > self.max:
            raise SpecError(f"min ({self.min:g}) must not be above max ({self.max:g})", "min")
        return self


class ToolPlacementSpec(Spec):
    """A declared tool hosted on ``replicas`` generated TOOL_SERVER agents."""

    name: str = Field(min_length=1, description="Tool name (declared in `tools:`).")
    replicas: Whole = Field(1, ge=1, description="How many generated tool servers host it.")


class AttachSpec(Spec):
    """Links from an explicit agent into the generated mesh."""

    agent: str = Field(min_length=1, description="Id of an agent declared in `agents:`.")
    links: Whole = Field(
        1,
        ge=1,
        description="Links to generated agents (gateways first, then any that share a "
        "protocol), chosen with the topology's seed.",
    )


class TopologySpec(Spec):
    """A generated mesh: agents and links built with a networkx generator, seeded."""

    generator: Literal[
        "barabasi_albert", "waxman", "grid", "erdos_renyi", "random_regular", "watts_strogatz"
    ] = Field(description="networkx generator of the link structure.")
    agents: Whole = Field(ge=2, description="Number of generated agents.")
    params: dict[str, float] = Field(
        default_factory=dict,
        description="Generator parameters: barabasi_albert {m}; waxman {alpha, beta}; grid "
        "{rows, cols}; erdos_renyi {p | degree}; random_regular {degree}; watts_strogatz {k, p}.",
    )
    seed: Count | None = Field(None, description="Seed of the generator (default: `seed`).")
    id_prefix: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")] = Field(
        "n", description="Generated ids are this prefix and the index: n0, n1, ..."
    )
    protocols: dict[str, Probability] = Field(
        min_length=1,
        description="Share of the (non-gateway) agents speaking each protocol; every agent "
        "speaks at least one.",
    )
    gateways: Probability = Field(
        0.05, description="Share of agents that are gateways speaking every listed protocol."
    )
    types: dict[Literal["LLM_AGENT", "TOOL_SERVER", "COORDINATOR"], NonNegative] = Field(
        default_factory=lambda: {"LLM_AGENT": 0.8, "TOOL_SERVER": 0.2},  # type: ignore[arg-type]
        description="Relative shares of the other agents' types.",
    )
    affinity: AffinityRangeSpec = Field(
        default_factory=AffinityRangeSpec, description="Range of the affinities Γ(v, p)."
    )
    latency: Distribution | dict[str, Distribution] = Field(
        default_factory=lambda: Distribution(dist="uniform", low=0.001, high=0.02),
        description="Mean one-way latency w_e(p) of each generated link and protocol, drawn "
        "from this distribution (seconds); or one distribution per protocol.",
    )
    jitter: NonNegative = Field(0.0, description="Jitter of generated links, seconds.")
    tools: list[ToolPlacementSpec] = Field(
        default_factory=list, description="Tools placed on generated TOOL_SERVER agents."
    )
    concurrency: Whole = Field(8, ge=1, description="Concurrency of generated tool servers.")
    attach: list[AttachSpec] = Field(
        default_factory=list, description="Explicit agents linked into the generated mesh."
    )

    @model_validator(mode="after")
    def _generator_params(self) -> TopologySpec:
        required, optional = GENERATORS[self.generator]
        for name in self.params:
            if name not in required + optional:
                allowed = ", ".join(required + optional) or "none"
                raise SpecError(
                    f"{self.generator} takes no parameter '{name}' (takes: {allowed})",
                    "params",
                    name,
                )
        missing = [name for name in required if name not in self.params]
        if missing:
            raise SpecError(f"{self.generator} needs params {', '.join(missing)}", "params")
        if sum(self.types.values()) <= 0 and self.gateways < 1:
            raise SpecError("types: at least one share must be above 0", "types")
        return self


class SweepSpec(Spec):
    """Parameter values to run the experiment at: a cross product or listed points."""

    mode: Literal["product", "points"] = Field(
        "product",
        description="product: every combination of `parameters`; points: the i-th values of "
        "every parameter together (equal lengths), or the mappings listed in `points`.",
    )
    parameters: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(
        default_factory=dict,
        description="Field path (e.g. routing.loss_penalty, failures.0.for) → values.",
    )
    points: list[Annotated[dict[str, Any], Field(min_length=1)]] = Field(
        default_factory=list, description="Listed points: each a mapping field path → value."
    )

    @model_validator(mode="after")
    def _one_form(self) -> SweepSpec:
        if self.points and self.parameters:
            raise SpecError("give either `parameters` or `points`, not both", "points")
        if self.points and self.mode != "points":
            raise SpecError("listed `points` need `mode: points`", "mode")
        if not self.points and not self.parameters:
            raise SpecError("a sweep needs `parameters` or `points`")
        if self.mode == "points" and self.parameters:
            lengths = {name: len(v) for name, v in self.parameters.items()}
            if len(set(lengths.values())) > 1:
                shown = ", ".join(f"{k}: {n}" for k, n in lengths.items())
                raise SpecError(
                    f"mode points pairs the i-th values of every parameter: the lists need "
                    f"equal lengths ({shown})",
                    "parameters",
                )
        return self


class Scenario(Spec):
    """One mesh and one experiment (SPEC §1)."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$")] = Field(
        description="Scenario name, [a-z0-9-]+; names the results folder."
    )
    description: str = Field("", description="Free text.")
    seed: Whole = Field(0, ge=0, description="Root seed of every random stream.")
    duration: Positive = Field(
        3600.0, description="Simulated seconds during which workflows arrive; work then drains."
    )
    replications: Whole = Field(1, ge=1, description="Independent replications per router.")
    routers: list[Literal["dijkstra", "bfs", "resilient", "semantic"]] = Field(
        default_factory=lambda: ["dijkstra"],  # type: ignore[arg-type]
        min_length=1,
        description="Strategies `run`/`compare` evaluate; the first is the default.",
    )
    trace: Annotated[
        TraceLevel, BeforeValidator(_trace_level, json_schema_input_type=TraceLevel)
    ] = Field(TraceLevel.FULL, description="Trace level: full | protocol | off.")
    protocols: list[
        Annotated[
            ProtocolSpec,
            BeforeValidator(_protocol_entry, json_schema_input_type=str | ProtocolSpec),
        ]
    ] = Field(
        min_length=1,
        description="P: the protocols of the mesh, each a name (MCP) or {name, fields}.",
    )
    routing: RoutingSpec = Field(default_factory=RoutingSpec, description="Router parameters.")
    translations: list[TranslationSpec] = Field(
        default_factory=list, description="Forbidden, destructive and calibrated pairs."
    )
    approval: ApprovalSpec = Field(
        default_factory=ApprovalSpec, description="The approver behind approval gates."
    )
    agents: list[AgentSpec] = Field(min_length=1, description="V: the agents.")
    links: list[LinkSpec] = Field(default_factory=list, description="E with Φ and w.")
    tools: list[ToolSpec] = Field(default_factory=list, description="Tool descriptors.")
    workflows: list[WorkflowSpec] = Field(default_factory=list, description="The workload.")
    failures: list[FailureSpec] = Field(default_factory=list, description="Outages.")
    topology: TopologySpec | None = Field(
        None,
        description="A generated mesh: its agents and links are added to `agents` and `links`.",
    )
    sweep: SweepSpec | None = Field(
        None, description="Parameter values `compare` runs the experiment at."
    )
    properties: list[PropertySpec] = Field(default_factory=list, description="SPEC §9 formulas.")

    def tool(self, name: str) -> ToolSpec:
        """The tool called ``name``; ``KeyError`` if there is none."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    def initiators_of(self, workflow: WorkflowSpec) -> tuple[str, ...]:
        """The agents that may start ``workflow``'s instances, in scenario order."""
        if workflow.initiator is not None:
            return (workflow.initiator,)
        chosen = workflow.initiators
        if chosen is None:
            return ()
        if chosen.agents is not None:
            return tuple(chosen.agents)
        needed = workflow.protocols_issued()
        return tuple(
            a.id for a in self.agents if a.type == chosen.type and needed <= a.protocols.keys()
        )

    def agent(self, agent_id: str) -> AgentSpec:
        """The agent with id ``agent_id``; ``KeyError`` if there is none."""
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise KeyError(agent_id)
