"""One sweep point's verdict as ``summary.json``'s ``verdict`` holds it: the sentences
saying which router is better on which metric, each router's why, and the side-by-side
table. :mod:`sim.experiments.verdict` makes it from the summary; this module is the
type alone, so the summary can hold and read it back without importing the verdict's
makers (which read the summary)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SideBySide:
    """Every metric of a point side by side: ``columns`` (``metric``, ``unit``, then the
    routers) and one row of texts per metric, as long as ``columns``."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "rows": [list(row) for row in self.rows]}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> SideBySide:
        return SideBySide(tuple(data["columns"]), tuple(tuple(row) for row in data["rows"]))


@dataclass(frozen=True, slots=True)
class PointVerdict:
    """The verdict at sweep point ``point`` (None without a sweep; ``params`` its values):
    ``sentences`` in the routers' pair order, ``why`` per router (in the routers' order)
    and the ``table``."""

    point: str | None
    params: Mapping[str, Any]
    sentences: tuple[str, ...]
    why: Mapping[str, str]
    table: SideBySide

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "params": dict(self.params),
            "sentences": list(self.sentences),
            "why": dict(self.why),
            "table": self.table.to_json(),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> PointVerdict:
        return PointVerdict(
            data["point"],
            dict(data["params"]),
            tuple(data["sentences"]),
            dict(data["why"]),
            SideBySide.from_json(data["table"]),
        )
