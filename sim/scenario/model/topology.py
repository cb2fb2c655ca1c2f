"""Generated meshes (``topology:``) and parameter sweeps (``sweep:``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from sim.scenario.model.base import (
    Affinity,
    Count,
    Finite,
    NonNegative,
    Probability,
    Spec,
    SpecError,
    Whole,
)
from sim.scenario.model.distribution import Distribution

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

#: The most agents a ``topology:`` block may ask for, checked before anything else (a
#: graph of ``agents: 1000000000`` would exhaust memory while loading); what a block may
#: generate is bounded by :data:`MAX_MESH_SIZE`, estimated before generating.
MAX_GENERATED_AGENTS = 1_000_000
#: The most agents and links together that a ``topology:`` block generates: a run holds
#: about 3.5 KB for each (``benchmarks/bench_routing_scale.py``: 100,000 agents and
#: 200,000 links, 1.3 GB at its peak), so a mesh at the bound stays within the default
#: ``--max-memory`` of 1.5 GB with its workload.
MAX_MESH_SIZE = 350_000


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
    agents: Whole = Field(
        ge=2,
        le=MAX_GENERATED_AGENTS,
        description="Number of generated agents (at most 1,000,000).",
    )
    params: dict[str, Finite] = Field(
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
