"""The trace explorer: one self-contained HTML page (mesh replay, sequence charts,
counterexamples, results) built from the files the runs wrote. Reads results, never
runs: imports neither ``sim.engine`` nor ``sim.experiments``. See docs/view.md."""

from sim.view.data import Budget, ViewError, build_index
from sim.view.page import render_page, write_page

__all__ = ["Budget", "ViewError", "build_index", "render_page", "write_page"]
