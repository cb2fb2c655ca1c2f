"""The formal calculus of the paper (SGD and MCP/MCP⁺ as LTSs, Φ, bisimulation, P1–P4).

Imports nothing else of protomesh: only the standard library. See docs/calculus.md.
The names below are imported on first use (a command that needs one module of the
calculus does not load all of it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.calculus.bisim import BisimResult, Distinction, Formula, bisimilar, saturate
    from sim.calculus.lts import (
        LTS,
        TAU,
        AutFormatError,
        Transition,
        accepts,
        hide,
        label,
        parallel,
        parse_label,
        read_aut,
        relabel,
        restrict,
        traces,
        write_aut,
    )
    from sim.calculus.mcp import (
        PROTOCOL_FIELDS,
        Abort,
        Annotations,
        Dependency,
        FailureMode,
        Fallback,
        RecoveryStrategy,
        Relation,
        Retry,
        SideEffect,
        Tool,
        ToolPlus,
        ToolsListError,
        ToolView,
        UserPrompt,
        caller_view,
        load_tools,
        tool_lts,
        tool_plus_from_mapping,
        tools_from_list,
        tools_to_list,
    )
    from sim.calculus.phi import phi, phi_annotated, phi_plus, phi_services
    from sim.calculus.principles import Finding, lint, sem_density
    from sim.calculus.sgd import Intent, SchemaError, Service, Slot, intent_lts, load_schema
    from sim.calculus.theorems import (
        action_equivalence,
        hide_approval,
        intent_tool_bisimilar,
        theorem_report,
    )
    from sim.calculus.unphi import UNKNOWN, Unphi, unphi, unphi_plus, unphi_services

__all__ = [
    "LTS",
    "PROTOCOL_FIELDS",
    "TAU",
    "UNKNOWN",
    "Abort",
    "Annotations",
    "AutFormatError",
    "BisimResult",
    "Dependency",
    "Distinction",
    "FailureMode",
    "Fallback",
    "Finding",
    "Formula",
    "Intent",
    "RecoveryStrategy",
    "Relation",
    "Retry",
    "SchemaError",
    "Service",
    "SideEffect",
    "Slot",
    "Tool",
    "ToolPlus",
    "ToolView",
    "ToolsListError",
    "Transition",
    "Unphi",
    "UserPrompt",
    "accepts",
    "action_equivalence",
    "bisimilar",
    "caller_view",
    "hide",
    "hide_approval",
    "intent_lts",
    "intent_tool_bisimilar",
    "label",
    "lint",
    "load_schema",
    "load_tools",
    "parallel",
    "parse_label",
    "phi",
    "phi_annotated",
    "phi_plus",
    "phi_services",
    "read_aut",
    "relabel",
    "restrict",
    "saturate",
    "sem_density",
    "theorem_report",
    "tool_lts",
    "tool_plus_from_mapping",
    "tools_from_list",
    "tools_to_list",
    "traces",
    "unphi",
    "unphi_plus",
    "unphi_services",
    "write_aut",
]

#: The modules that define the names above, searched in this order on first use (the
#: leaves first: a name another module re-exports is found where it is defined).
_MODULES: tuple[str, ...] = (
    "lts",
    "sgd",
    "mcp",
    "bisim",
    "phi",
    "principles",
    "theorems",
    "unphi",
)


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _MODULES:
            found = importlib.import_module(f"sim.calculus.{module}")
            if name in vars(found):
                value = vars(found)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module 'sim.calculus' has no attribute {name!r}")
