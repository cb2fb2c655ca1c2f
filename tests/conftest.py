"""Shared fixtures: the real data lives in ``../shared/data`` beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` relative to the repository root (CI clones the repo beside it)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA
