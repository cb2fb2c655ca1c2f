"""What a live caller knows of each tool: the views it learned by real discovery.

A view comes from a real ``tools/list`` reply that walked back along a route
(:class:`~sim.live.payload.Descriptor`, what survived every protocol on the way), read
with the calculus's rule (:meth:`Descriptor.view`, SPEC §2). Each :class:`LiveView`
keeps what the invocations need: the :class:`~sim.calculus.mcp.ToolView`, its
:class:`~sim.calculus.mcp.Knowledge` and one LTS per (gate, dialect), built on first use.
Values; no time.
"""

from __future__ import annotations

from typing import Any

from sim.calculus.lts import LTS
from sim.calculus.mcp import SERVICE_DOWN, ToolView, knowledge
from sim.calculus.mcp.dialects import Dialect
from sim.live.payload import Descriptor

__all__ = ["TOOL_ERROR", "LiveView", "error_type"]

TOOL_ERROR = "ToolError"
"""The error type of an ``isError`` result whose text does not start with one (a real
server's free text)."""


#: what the MCP SDK's high-level server (``MCPServer``, FastMCP) writes before the text of
#: a ``ToolError`` its tool raised: ``Error executing tool NAME: TEXT``
SDK_TOOL_ERROR = "Error executing tool "


def error_type(text: str, known: frozenset[str], tool: str = "") -> str:
    """The error type an ``isError`` text starts with (``Type: ...``), if it is one of
    ``known``, else :data:`TOOL_ERROR`; after the SDK's :data:`SDK_TOOL_ERROR` prefix
    for ``tool``, the type its own text starts with."""
    prefix = f"{SDK_TOOL_ERROR}{tool}: "
    if tool and text.startswith(prefix):
        text = text[len(prefix) :]
    head = text.partition(":")[0].strip()
    return head if head in known else TOOL_ERROR


class LiveView:
    """A caller's view of one tool (see the module); ``error_types``: the errors its
    server can answer (the scenario's, ServiceDown and :data:`TOOL_ERROR`);
    ``excluded_by``: the tools that declare it ExclusiveWith."""

    __slots__ = ("_lts", "descriptor", "error_types", "fields", "known", "view")

    def __init__(
        self,
        descriptor: Descriptor,
        mcp_policy: str,
        error_types: tuple[str, ...],
        excluded_by: frozenset[str] = frozenset(),
    ) -> None:
        self.descriptor = descriptor
        self.view: ToolView = descriptor.view(mcp_policy)
        self.known = knowledge(self.view, excluded_by)
        self.fields = sorted(descriptor.known)
        self.error_types = tuple(sorted({*error_types, SERVICE_DOWN, TOOL_ERROR}))
        self._lts: dict[tuple[bool, Dialect], LTS] = {}

    @property
    def name(self) -> str:
        return self.view.descriptor.name

    def lts(self, gate: bool, dialect: Dialect) -> LTS:
        """The LTS an invocation in ``dialect`` with this gate decision runs."""
        key = (gate, dialect)
        hit = self._lts.get(key)
        if hit is None:
            hit = self._lts[key] = dialect.lts(
                self.view, approval=gate, error_types=self.error_types
            )
        return hit

    def list_detail(self) -> dict[str, Any]:
        """The ``list`` line's detail after ``host``."""
        return {
            "fields": self.fields,
            "approval": self.view.approval,
            "approval_reason": self.view.approval_reason,
        }
