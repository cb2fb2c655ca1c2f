"""Paths the live tests share."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "scenarios" / "live_tiny.yaml"
SMALL = ROOT / "scenarios" / "live_small.yaml"
