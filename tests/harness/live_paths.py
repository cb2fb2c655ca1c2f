"""Paths the live tests share."""

from tests.harness.paths import REPO as ROOT

TINY = ROOT / "tests" / "fixtures" / "scenarios" / "live_tiny.yaml"
SMALL = ROOT / "scenarios" / "live_small.yaml"
