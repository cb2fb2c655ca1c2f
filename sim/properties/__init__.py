"""User properties (SPEC §9): LTLf formulas with past operators and time bounds, parsed
with located errors and monitored on traces per scope (invocation, instance, run).

A leaf package: it imports nothing of protomesh but the trace vocabulary; the
scenario's tool attributes are passed in (:class:`ToolAttributes`).
"""

from sim.properties.ast import Formula
from sim.properties.monitor import SCOPES, Monitor, Property
from sim.properties.parse import FormulaError, ToolAttributes, parse

__all__ = [
    "SCOPES",
    "Formula",
    "FormulaError",
    "Monitor",
    "Property",
    "ToolAttributes",
    "parse",
]
