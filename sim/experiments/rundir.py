"""Where a run's files are: ``base/[point/]router/rep-k`` and the names of its files.

Names and paths only (nothing but :mod:`pathlib`), so that what reads finished runs (the
summary, the figures' drawers, forked before the engine is imported) needs no runner.
"""

from __future__ import annotations

from pathlib import Path

RUN_FILE = "run.json"
METRICS_FILE = "metrics.json"
ERROR_FILE = "error.json"
SERIES_FILE = "series.json"
TRACE_FILE = "trace.jsonl"
#: The files of a finished run whose digests ``run.json`` records (with the page
#: fragment's, :data:`sim.view.fragment.VIEW_FILE` and ``EVENTS_FILE``, when written).
VERIFIED_FILES = (TRACE_FILE, METRICS_FILE, SERIES_FILE)


def run_dir(base: Path, point: str | None, router: str, rep: int) -> Path:
    """``base/[point/]router/rep-k``."""
    parts = [point] if point else []
    return base.joinpath(*parts, router, f"rep-{rep}")
