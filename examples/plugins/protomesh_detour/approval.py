"""An example approval-policy plug-in for protomesh (docs/reference/routing.md#router-plug-ins): ask only for the calls whose
fare-class argument is one of the named classes.

In a scenario::

    approval:
      policy: {plugin: "protomesh_detour.approval:FareClassGate", options: {classes: [business]}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sim import ApprovalPolicy, ToolView


class FareClassGate(ApprovalPolicy):
    """Ask when the built-in rule would (the caller knows the tool writes or needs
    approval) *and* the call's ``argument`` is one of ``classes``; never otherwise.

    An economy booking, or a write with no fare class at all, goes ahead unasked: the
    conformance check ``write_approval`` reports each such execution of a write tool."""

    def __init__(self, classes: Iterable[str] = ("business",), argument: str = "class") -> None:
        self.classes = frozenset(classes)
        self.argument = argument

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        return view.approval and arguments.get(self.argument) in self.classes

    def reason(self, view: ToolView, arguments: Mapping[str, Any]) -> str:
        return f"{self.argument}={arguments.get(self.argument)}, {view.approval_reason}"
