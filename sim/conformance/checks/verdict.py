"""What the checks report: one :class:`Verdict` per check, a :class:`Report` per trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.vocabulary.counterexamples import Counterexample

#: The note of a report on a trace with no events.
EMPTY_NOTE = "empty trace: nothing to check"
#: The note of ``check_run_dir`` on an empty trace.
NOT_CHECKED_NOTE = "empty trace (trace level off): nothing was checked"


@dataclass
class Verdict:
    """One check's outcome."""

    name: str
    examined: int
    violations: int
    message: str = ""
    counterexample: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    more: list[str] = field(default_factory=list)
    #: violations per workflow (``"None"``: events without a workflow)
    by_workflow: dict[str, int] = field(default_factory=dict)
    #: False when the trace holds none of what the check needs (e.g. no ``send`` events
    #: at trace level ``protocol``): it holds vacuously and has no meaningful count
    applicable: bool = True
    #: the earliest ``KEEP_COUNTEREXAMPLES`` violations (the first is ``message`` /
    #: ``counterexample``); not part of :meth:`to_json` (SPEC §6 prints the first)
    counterexamples: list[Counterexample] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.violations == 0

    def to_json(self) -> dict[str, Any]:
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


@dataclass
class Report:
    """All verdicts on one trace."""

    source: str
    events: int
    verdicts: list[Verdict]
    seconds: float = 0.0
    truth: str = ""
    instances: int = 0

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def note(self) -> str:
        """Why the verdicts say nothing, if they do not (an empty trace)."""
        return EMPTY_NOTE if self.events == 0 else ""

    def verdict(self, name: str) -> Verdict:
        for v in self.verdicts:
            if v.name == name:
                return v
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.source,
            "truth": self.truth,
            "events": self.events,
            "instances": self.instances,
            "ok": self.ok,
            **({"note": self.note} if self.note else {}),
            "violations": sum(v.violations for v in self.verdicts),
            "checks": [v.to_json() for v in self.verdicts],
        }
