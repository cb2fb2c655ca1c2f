"""The small mesh scenario (tests/fixtures/scenarios/small_mesh.yaml): its path and its text."""

from __future__ import annotations

from tests.harness.paths import FIXTURES

#: the scenario of conftest's ``small_drawn`` and of the compare and store tests
SMALL_FILE = FIXTURES / "scenarios" / "small_mesh.yaml"
SMALL = SMALL_FILE.read_text(encoding="utf-8")
