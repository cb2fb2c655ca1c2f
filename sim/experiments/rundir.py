"""Where a run's files are: ``base/[point/]router/rep-k`` and the names of its files.

Names and paths only (nothing but :mod:`pathlib`), so that what reads finished runs (the
summary, the figures' drawers, forked before the engine is imported) needs no runner.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

RUN_FILE = "run.json"
METRICS_FILE = "metrics.json"
ERROR_FILE = "error.json"
SERIES_FILE = "series.json"
TRACE_FILE = "trace.jsonl"
#: What a run's reporter receives once its simulation is over and its trace is being
#: checked (in place of a simulated time): the progress display says so.
CHECKING = -1.0
#: The files of a finished run whose digests ``run.json`` records (with the page
#: fragment's, :data:`sim.view.fragment.VIEW_FILE` and ``EVENTS_FILE``, when written).
VERIFIED_FILES = (TRACE_FILE, METRICS_FILE, SERIES_FILE)


#: the characters a folder name keeps of a ``--set`` option as written
_PLAIN = re.compile(r"[A-Za-z0-9._,=-]+")
#: the longest folder name
_NAME_LIMIT = 120


def results_base(scenario: str, settings: Sequence[str]) -> Path:
    """Where ``run`` and ``compare`` write without ``--out``: ``results/<scenario>``, or
    ``results/<scenario>+<set>[+<set>...]`` with the ``--set`` options as given, so that
    runs with different options never share a folder. An option with another character
    (``+`` included), or a name over 120 characters, is written with ``_`` for those
    characters, cut, and ended by ``~`` and a digest of the options: one name per list."""
    if not settings:
        return Path("results") / scenario
    name = "+".join([scenario, *settings])
    if all(_PLAIN.fullmatch(text) for text in settings) and len(name) <= _NAME_LIMIT:
        return Path("results") / name
    digest = hashlib.sha256(json.dumps(list(settings)).encode()).hexdigest()[:12]
    shown = re.sub(r"[^A-Za-z0-9._,=+-]", "_", name)[: _NAME_LIMIT - 13]
    return Path("results") / f"{shown}~{digest}"


def run_dir(base: Path, point: str | None, router: str, rep: int) -> Path:
    """``base/[point/]router/rep-k``."""
    parts = [point] if point else []
    return base.joinpath(*parts, router, f"rep-{rep}")
