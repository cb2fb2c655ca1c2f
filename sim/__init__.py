"""protomesh: a discrete-event simulator of multi-protocol AI-agent meshes.

The public API, re-exported lazily (``import sim`` stays cheap for the command line)::

    from sim import load_scenario, ProtocolGraph, make_router, run_replication, check_trace
    from sim import compare, smc, verify

    scenario = load_scenario("scenarios/train_booking.yaml")       # located ScenarioError
    router = make_router("resilient", ProtocolGraph.from_scenario(scenario))
    route = router.route("planner", "tickets", source_protocol="MCP+")
    metrics = run_replication(scenario, "resilient", 0, "results/demo")
    report = check_trace("results/demo/trace.jsonl", scenario)
    summary = compare(scenario, replications=1, out="results/demo-compare")   # summary.json
    # smc(scenario, ["recovery"], width=0.05) and verify(scenario, router="resilient")
    # return what smc --json and verify --json print

docs/api.md shows them at work.
"""

from __future__ import annotations

# Nothing imported at run time: ``python -m sim`` runs this before it can arm its stops
# (sim/__main__.py), so that a signal here meets Python's own handling as briefly as can be.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

#: public name → the module that defines it
_EXPORTS: dict[str, str] = {
    "Scenario": "sim.scenario",
    "ScenarioError": "sim.scenario",
    "load_scenario": "sim.admission",
    "parse_scenario": "sim.admission",
    "ProtocolGraph": "sim.mesh",
    "Route": "sim.mesh",
    "DownSet": "sim.mesh",
    "NoRoute": "sim.mesh",
    "NodeNotFound": "sim.mesh",
    "ProtocolNotFound": "sim.mesh",
    "make_router": "sim.mesh",
    "DijkstraRouter": "sim.mesh",
    "ApprovalPolicy": "sim.approval",
    "ToolView": "sim.calculus",
    "LTS": "sim.calculus",
    "Intent": "sim.calculus",
    "Tool": "sim.calculus",
    "ToolPlus": "sim.calculus",
    "phi": "sim.calculus",
    "phi_plus": "sim.calculus",
    "bisimilar": "sim.calculus",
    "run_replication": "sim.engine",
    "ReplicationError": "sim.engine",
    "check_trace": "sim.conformance",
    "Report": "sim.conformance",
    "compare": "sim.api",
    "smc": "sim.api",
}

__all__ = ["__version__", *_EXPORTS, "verify"]

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from sim.admission import (
        load_scenario as load_scenario,
    )
    from sim.admission import (
        parse_scenario as parse_scenario,
    )
    from sim.api import (
        compare as compare,
    )
    from sim.api import (
        smc as smc,
    )
    from sim.approval import (
        ApprovalPolicy as ApprovalPolicy,
    )
    from sim.calculus import (
        LTS as LTS,
    )
    from sim.calculus import (
        Intent as Intent,
    )
    from sim.calculus import (
        Tool as Tool,
    )
    from sim.calculus import (
        ToolPlus as ToolPlus,
    )
    from sim.calculus import (
        ToolView as ToolView,
    )
    from sim.calculus import (
        bisimilar as bisimilar,
    )
    from sim.calculus import (
        phi as phi,
    )
    from sim.calculus import (
        phi_plus as phi_plus,
    )
    from sim.conformance import (
        Report as Report,
    )
    from sim.conformance import (
        check_trace as check_trace,
    )
    from sim.engine import (
        ReplicationError as ReplicationError,
    )
    from sim.engine import (
        run_replication as run_replication,
    )
    from sim.mesh import (
        DijkstraRouter as DijkstraRouter,
    )
    from sim.mesh import (
        DownSet as DownSet,
    )
    from sim.mesh import (
        NodeNotFound as NodeNotFound,
    )
    from sim.mesh import (
        NoRoute as NoRoute,
    )
    from sim.mesh import (
        ProtocolGraph as ProtocolGraph,
    )
    from sim.mesh import (
        ProtocolNotFound as ProtocolNotFound,
    )
    from sim.mesh import (
        Route as Route,
    )
    from sim.mesh import (
        make_router as make_router,
    )
    from sim.scenario import (
        Scenario as Scenario,
    )
    from sim.scenario import (
        ScenarioError as ScenarioError,
    )


def __getattr__(name: str) -> Any:
    if name == "verify":  # the package sim.verify, callable as sim.verify.decisions.verify
        import importlib

        return importlib.import_module("sim.verify")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
