"""The trace explorer: one self-contained HTML page (mesh replay, sequence charts,
counterexamples, results) built from the files the runs wrote. Reads results, never
runs: imports neither ``sim.engine`` nor ``sim.experiments``. See docs/view.md.

The names below are imported on first use: a run stores its page data
(:mod:`sim.view.fragment`) without loading the page's builder and writer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.view.data import Budget, ViewError, build_index
    from sim.view.page import render_page, write_page

__all__ = ["Budget", "ViewError", "build_index", "render_page", "write_page"]

#: The modules that define the names above, searched in this order on first use.
_MODULES = ("data", "page")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _MODULES:
            found = vars(importlib.import_module(f"sim.view.{module}"))
            if name in found:
                globals()[name] = found[name]
                return found[name]
    raise AttributeError(f"module 'sim.view' has no attribute {name!r}")
