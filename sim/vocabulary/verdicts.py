"""What a check or a property reports on a trace: the one :class:`Verdict` type.

A check's verdict (SPEC §6) and a property's (SPEC §9: ``scope`` and ``formula`` set)
share the counts and the first counterexample; each prints its own SPEC §11 JSON shape
(:meth:`Verdict.to_json`: a property's is told by its ``scope``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.vocabulary.counterexamples import Counterexample


@dataclass
class Verdict:
    """One check's or one property's outcome: ``examined`` (a check: the events whose
    label it reads; a property: the scopes decided), ``violations``, and the first
    counterexample (``message``, ``counterexample``: the earliest by ``seq``)."""

    name: str
    examined: int = 0
    violations: int = 0
    message: str = ""
    counterexample: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    more: list[str] = field(default_factory=list)
    #: violations per workflow (``"None"``: events without a workflow); a check's
    by_workflow: dict[str, int] = field(default_factory=dict)
    #: False when the trace holds none of what the check needs (e.g. no ``send`` events
    #: at trace level ``protocol``): it holds vacuously and has no meaningful count
    applicable: bool = True
    #: the earliest ``KEEP_COUNTEREXAMPLES`` violations (the first is ``message`` /
    #: ``counterexample``); not part of :meth:`to_json` (SPEC §6 prints the first)
    counterexamples: list[Counterexample] = field(default_factory=list)
    #: a property's scope (invocation | instance | run); ``""`` for a check
    scope: str = ""
    #: a property's formula, as written
    formula: str = ""
    #: a property's counterexample events left out of it (it keeps the first and last)
    elided: int = 0
    #: a property's violated scope keys, in the order they were decided (when recorded)
    violated: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.violations == 0

    def to_json(self) -> dict[str, Any]:
        """SPEC §11's object: a check's (``checks`` of ``check --json``) or, with a
        ``scope``, a property's (``properties``)."""
        if self.scope:
            return self._property_json()
        out: dict[str, Any] = {
            "name": self.name,
            "examined": self.examined,
            "violations": self.violations,
            "ok": self.ok,
        }
        if self.note:
            out["note"] = self.note
        if not self.applicable:
            out["applicable"] = False
        if self.violations:
            out["by_workflow"] = self.by_workflow
            out["first"] = {"message": self.message, "events": self.counterexample}
            if self.more:
                out["next_messages"] = self.more
        return out

    def _property_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "scope": self.scope,
            "formula": self.formula,
            "examined": self.examined,
            "violations": self.violations,
            "ok": self.ok,
        }
        if self.violations:
            out["first"] = {
                "message": self.message,
                "events": self.counterexample,
                "elided": self.elided,
            }
        return out
