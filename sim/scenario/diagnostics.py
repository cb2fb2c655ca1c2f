"""Located diagnostics: what is wrong, in which file, at which line, column and field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

#: A field path into the scenario document, e.g. ``("links", 3, "latency", "MCP")``.
FieldPath = tuple[str | int, ...]

Severity = Literal["error", "warning"]


def format_path(path: FieldPath) -> str:
    """Render ``("links", 3, "latency")`` as ``links[3].latency`` (``<root>`` when empty)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in a scenario file; ``line`` and ``column`` are 1-based."""

    file: str
    line: int
    column: int
    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        tag = "" if self.severity == "error" else "warning: "
        return f"{self.file}:{self.line}:{self.column}: {tag}{self.field}: {self.message}"


class ScenarioError(Exception):
    """A scenario that does not load; ``errors`` lists every problem found, in file order."""

    def __init__(self, errors: Sequence[Diagnostic], warnings: Sequence[Diagnostic] = ()) -> None:
        self.errors = tuple(errors)
        self.warnings = tuple(warnings)
        super().__init__("\n".join(str(d) for d in self.errors))
