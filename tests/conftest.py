"""Shared fixtures: the real data the tests use is shipped in the repository's ``data/``."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The repository's ``data/`` folder (real SGD, MCP tool lists, wire captures, MCP schemas)."""
    assert DATA.is_dir(), f"the repository's data folder is missing: {DATA}"
    return DATA
