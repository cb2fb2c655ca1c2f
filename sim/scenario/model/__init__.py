"""The scenario YAML contract (docs/scenario.md) as pydantic models.

These models check the *shape* of each field (types, ranges, enumerations, which
parameters a distribution needs). Rules that relate fields to each other (ids that
must exist, protocols both ends must speak, ≺ acyclic, router names known, ...) live
in :mod:`sim.scenario.rules`, so that one file reports every error at once.

Units: simulated time in seconds; costs in seconds-equivalent; probabilities in [0, 1].
Pydantic stays at the edge: the engine and the routers never see these classes on
their hot paths.
"""

from sim.scenario.model.base import (
    BUILTIN_PROTOCOLS,
    BUILTIN_WIRES,
    Affinity,
    AgentType,
    Count,
    McpPolicy,
    NonNegative,
    Positive,
    Probability,
    SideEffects,
    Spec,
    SpecError,
    TraceLevel,
    Whole,
    Wire,
)
from sim.scenario.model.distribution import Distribution, Law
from sim.scenario.model.faults import (
    FAULT_KINDS,
    FaultSpec,
    LinkFaultSpec,
    LinkLossSpec,
    register_fault_kind,
)
from sim.scenario.model.live import LiveSpec
from sim.scenario.model.mesh import (
    AgentSpec,
    ApprovalPolicySpec,
    ApprovalSpec,
    LinkSpec,
    ProtocolSpec,
    RouterSpec,
    RoutingSpec,
    TranslationSpec,
)
from sim.scenario.model.properties import PropertySpec
from sim.scenario.model.scenario import Scenario
from sim.scenario.model.tools import (
    AnnotationsSpec,
    DependencySpec,
    FailureModeSpec,
    RecoverySpec,
    ToolSpec,
)
from sim.scenario.model.topology import (
    GENERATORS,
    MAX_MESH_SIZE,
    AffinityRangeSpec,
    AttachSpec,
    SweepSpec,
    ToolPlacementSpec,
    TopologySpec,
)
from sim.scenario.model.workload import (
    ArrivalsSpec,
    FailureSpec,
    InitiatorsSpec,
    RandomFailureSpec,
    TaskSpec,
    WorkflowSpec,
)

__all__ = [
    "BUILTIN_PROTOCOLS",
    "BUILTIN_WIRES",
    "FAULT_KINDS",
    "GENERATORS",
    "MAX_MESH_SIZE",
    "Affinity",
    "AffinityRangeSpec",
    "AgentSpec",
    "AgentType",
    "AnnotationsSpec",
    "ApprovalPolicySpec",
    "ApprovalSpec",
    "ArrivalsSpec",
    "AttachSpec",
    "Count",
    "DependencySpec",
    "Distribution",
    "FailureModeSpec",
    "FailureSpec",
    "FaultSpec",
    "InitiatorsSpec",
    "Law",
    "LinkFaultSpec",
    "LinkLossSpec",
    "LinkSpec",
    "LiveSpec",
    "McpPolicy",
    "NonNegative",
    "Positive",
    "Probability",
    "PropertySpec",
    "ProtocolSpec",
    "RandomFailureSpec",
    "RecoverySpec",
    "RouterSpec",
    "RoutingSpec",
    "Scenario",
    "SideEffects",
    "Spec",
    "SpecError",
    "SweepSpec",
    "TaskSpec",
    "ToolPlacementSpec",
    "ToolSpec",
    "TopologySpec",
    "TraceLevel",
    "TranslationSpec",
    "Whole",
    "Wire",
    "WorkflowSpec",
    "register_fault_kind",
]
