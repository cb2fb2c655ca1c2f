"""What the checks report: one :class:`~sim.vocabulary.verdicts.Verdict` per check (the
one verdict type, a property's too), a :class:`Report` per trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.vocabulary.verdicts import Verdict as Verdict

#: The note of a report on a trace with no events.
EMPTY_NOTE = "empty trace: nothing to check"
#: The note of ``check_run_dir`` on an empty trace.
NOT_CHECKED_NOTE = "empty trace (trace level off): nothing was checked"


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
