"""The protocol graph G = (V, E, P, Φ, Γ), translation τ, and the four routers."""

from sim.mesh.errors import MeshError, NodeNotFound, NoRoute, ProtocolNotFound
from sim.mesh.graph import Agent, Link, ProtocolGraph
from sim.mesh.protocols import (
    BUILTIN_FIELDS,
    SEMANTIC_FIELDS,
    PairRule,
    Protocol,
    Transformer,
    TranslationKind,
    TranslationTable,
    derived_loss,
)
from sim.mesh.routing import (
    ROUTERS,
    BfsRouter,
    Candidate,
    DijkstraRouter,
    DownSet,
    ResilientRouter,
    Route,
    Router,
    SemanticRouter,
    Translation,
    make_router,
    route_cost,
)

__all__ = [
    "BUILTIN_FIELDS",
    "ROUTERS",
    "SEMANTIC_FIELDS",
    "Agent",
    "BfsRouter",
    "Candidate",
    "DijkstraRouter",
    "DownSet",
    "Link",
    "MeshError",
    "NoRoute",
    "NodeNotFound",
    "PairRule",
    "Protocol",
    "ProtocolGraph",
    "ProtocolNotFound",
    "ResilientRouter",
    "Route",
    "Router",
    "SemanticRouter",
    "Transformer",
    "Translation",
    "TranslationKind",
    "TranslationTable",
    "derived_loss",
    "make_router",
    "route_cost",
]
