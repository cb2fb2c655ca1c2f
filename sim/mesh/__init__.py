"""The protocol graph G = (V, E, P, Φ, Γ), translation τ, the routers and their registry."""

from sim.mesh.bfs import BfsRouter
from sim.mesh.errors import MeshError, NodeNotFound, NoRoute, ProtocolNotFound, RouterError
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
from sim.mesh.registry import known_routers, make_router
from sim.mesh.route import NO_DOWN, DownSet, Route, Translation, route_cost
from sim.mesh.routing import DijkstraRouter, ResilientRouter, Router
from sim.mesh.semantic import Candidate, SemanticRouter

__all__ = [
    "BUILTIN_FIELDS",
    "NO_DOWN",
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
    "RouterError",
    "SemanticRouter",
    "Transformer",
    "Translation",
    "TranslationKind",
    "TranslationTable",
    "derived_loss",
    "known_routers",
    "make_router",
    "route_cost",
]
