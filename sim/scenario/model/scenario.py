"""One mesh and one experiment: the root of the scenario YAML contract (docs/scenario.md)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from sim.calculus.mcp.dialects import Dialect
from sim.scenario.model.base import MAX_FOLDER_NAME, Positive, Spec, TraceLevel, Whole, Wire
from sim.scenario.model.faults import FaultEntry
from sim.scenario.model.mesh import (
    AgentSpec,
    ApprovalSpec,
    LinkSpec,
    ProtocolSpec,
    RouterSpec,
    RoutingSpec,
    TranslationSpec,
    protocol_entry,
    router_entry,
)
from sim.scenario.model.properties import PropertySpec
from sim.scenario.model.tools import ToolSpec
from sim.scenario.model.topology import SweepSpec, TopologySpec
from sim.scenario.model.workload import FailureSpec, WorkflowSpec


def _trace_level(value: Any) -> Any:
    """YAML 1.1 reads a bare ``off`` as false: take it as the trace level ``off``."""
    return "off" if value is False else value


class Scenario(Spec):
    """One mesh and one experiment (docs/scenario.md)."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$", max_length=MAX_FOLDER_NAME)] = Field(
        description=f"Scenario name, [a-z0-9-]+, at most {MAX_FOLDER_NAME} characters; names "
        "the results folder."
    )
    description: str = Field("", description="Free text.")
    seed: Whole = Field(0, ge=0, description="Root seed of every random stream.")
    duration: Positive = Field(
        3600.0, description="Simulated seconds during which workflows arrive; work then drains."
    )
    replications: Whole = Field(1, ge=1, description="Independent replications per router.")
    routers: list[
        Annotated[
            RouterSpec,
            BeforeValidator(router_entry, json_schema_input_type=str | RouterSpec),
        ]
    ] = Field(
        default_factory=lambda: [RouterSpec(name="dijkstra")],
        min_length=1,
        description="Strategies `run`/`compare` evaluate, each a name (dijkstra, bfs, "
        "resilient, semantic, an installed plug-in) or {name, plugin, options}; the first "
        "is the default.",
    )
    trace: Annotated[
        TraceLevel, BeforeValidator(_trace_level, json_schema_input_type=TraceLevel)
    ] = Field(TraceLevel.FULL, description="Trace level: full | protocol | off.")
    protocols: list[
        Annotated[
            ProtocolSpec,
            BeforeValidator(protocol_entry, json_schema_input_type=str | ProtocolSpec),
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
    faults: list[FaultEntry] = Field(
        default_factory=list,
        description="Other faults, each {kind, ...} of a registered fault kind (e.g. loss).",
    )
    topology: TopologySpec | None = Field(
        None,
        description="A generated mesh: its agents and links are added to `agents` and `links`.",
    )
    sweep: SweepSpec | None = Field(
        None, description="Parameter values `compare` runs the experiment at."
    )
    properties: list[PropertySpec] = Field(
        default_factory=list, description="LTLf formulas (docs/properties.md)."
    )

    @property
    def router_names(self) -> list[str]:
        """The names of :attr:`routers`, in order (the first is the default)."""
        return [r.name for r in self.routers]

    def router(self, name: str) -> RouterSpec | None:
        """The ``routers:`` entry called ``name``, or None."""
        for router in self.routers:
            if router.name == name:
                return router
        return None

    def tool(self, name: str) -> ToolSpec:
        """The tool called ``name``; ``KeyError`` if there is none."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    def dialects(self) -> dict[str, Dialect]:
        """Each protocol's invocation dialect (its declared one, else the built-in's)."""
        return {p.name: p.behaviour() for p in self.protocols}

    def wires(self) -> dict[str, Wire]:
        """Each protocol's live wire (:meth:`ProtocolSpec.transport`)."""
        return {p.name: p.transport() for p in self.protocols}

    def on_wire(self, wire: Wire) -> frozenset[str]:
        """The protocols that ``wire`` carries."""
        return frozenset(p.name for p in self.protocols if p.transport() == wire)

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
