"""The content of live messages, apart from any protocol's wire format, and its
translation (SPEC §2) on the real message.

A relay decodes what arrives in protocol p (:mod:`sim.live.wire`), translates it to p'
here, and encodes it in p': the next hop receives only what p' can represent.

- :class:`Descriptor`: a tool descriptor as one message knows it: ``values`` in the
  scenario's tool-entry shape (``name``, ``description``, ``input_schema``,
  ``side_effects``, ``requires_approval``, ``failure_modes``, ``dependencies``,
  ``summary``, ``annotations``; output schemas do not travel in the live mesh) and
  ``known``, the fields it carries. A field that is known but has no value was not
  declared (MCP's defaults apply); a field not known was lost on the way.
- :class:`Call`: a ``tools/call``: the tool, its arguments, ``plus`` (the MCP⁺ request
  metadata: ``requires_approval``, whether the caller's approval gate is taken for this
  call, first-class in MCP⁺, and ``side_effects`` when the caller's view knows it; kept
  field by field where the protocol represents it) and
  ``answer`` (an approval's answer and the server's state, the MCP 2026-07-28
  multi-round-trip pattern).
- :class:`Outcome`: a reply to a call: success, an error type, or a request for
  approval (``ask``: the elicitation's message and the state to echo back).

Translating p → p' through a chain keeps the fields every protocol of the chain
represents (:meth:`Descriptor.through`); the fields lost are what the ``translate``
line's ``dropped`` lists (the step's, from :func:`sim.mesh.route.translation_step`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.calculus.mcp import ALL_FIELDS, ToolPlus, caller_view, tool_plus_from_mapping
from sim.calculus.mcp.view import ToolView

__all__ = ["PLUS_FIELDS", "Ask", "Call", "Descriptor", "Outcome", "fields_of"]

PLUS_FIELDS = ("side_effects", "requires_approval")
"""The descriptor fields an MCP⁺ ``tools/call`` carries: whether the call requires
approval (the caller's gate) and the side effect the caller's view knows."""


def fields_of(table: Any, protocol: str) -> frozenset[str]:
    """The descriptor fields ``protocol`` represents (the scenario's translation table)."""
    return frozenset(table.fields(protocol))


@dataclass(frozen=True, slots=True)
class Descriptor:
    """A tool descriptor as one message knows it (see the module)."""

    values: Mapping[str, Any]
    known: frozenset[str]

    @staticmethod
    def of_truth(truth: ToolPlus) -> Descriptor:
        """The ground truth: every field known (a None field is undeclared)."""
        return Descriptor(truth.to_mapping(), ALL_FIELDS)

    def keep(self, fields: Iterable[str]) -> Descriptor:
        """Only ``fields`` (``name`` always)."""
        known = (self.known & frozenset(fields)) | {"name"}
        return Descriptor({k: v for k, v in self.values.items() if k in known}, known)

    def through(self, table: Any, chain: Iterable[str]) -> Descriptor:
        """Translated through every protocol of ``chain`` (each keeps its fields)."""
        out = self
        for protocol in chain:
            out = out.keep(fields_of(table, protocol))
        return out

    def plus(self) -> ToolPlus:
        """The known values as a calculus descriptor (unknown fields None)."""
        return tool_plus_from_mapping({"name": self.values["name"], **self.values})

    def view(self, mcp_policy: str) -> ToolView:
        """What a caller holding this descriptor knows (SPEC §2)."""
        return caller_view(self.plus(), self.known, mcp_policy)


@dataclass(frozen=True, slots=True)
class Call:
    """A ``tools/call`` (see the module)."""

    name: str
    arguments: Mapping[str, Any]
    plus: Mapping[str, Any] = field(default_factory=dict)
    answer: Mapping[str, Any] | None = None

    def keep(self, fields: Iterable[str]) -> Call:
        """The MCP⁺ request metadata the protocol represents."""
        wanted = frozenset(fields)
        return Call(
            self.name,
            self.arguments,
            {k: v for k, v in self.plus.items() if k in wanted},
            self.answer,
        )

    def through(self, table: Any, chain: Iterable[str]) -> Call:
        out = self
        for protocol in chain:
            out = out.keep(fields_of(table, protocol))
        return out


@dataclass(frozen=True, slots=True)
class Ask:
    """A server's request for the user's approval (an elicitation): its ``message`` and
    the opaque ``state`` to echo with the answer."""

    message: str
    state: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """A reply to a call: ``error`` None for a success, else the error type; ``text``
    the content's text; ``ask`` a request for approval instead of an outcome; ``cause``
    why an error is no outcome of the tool (``server_exit``: the agent's real server had
    died), the ``error`` line's ``cause``."""

    error: str | None = None
    text: str = ""
    structured: Any = None
    ask: Ask | None = None
    cause: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None
