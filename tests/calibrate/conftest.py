"""Fixtures of the calibration tests (the hand-written traces' helpers are in
``calibrate_traces.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.calibrate.calibration import Source, load
from tests.harness.calibrate_traces import MESH


@pytest.fixture
def mesh_file(tmp_path: Path) -> Path:
    path = tmp_path / "mesh.yaml"
    path.write_text(MESH, encoding="utf-8")
    return path


@pytest.fixture
def mesh(mesh_file: Path) -> Source:
    return load(mesh_file)
