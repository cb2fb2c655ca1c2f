"""Commands of the formal calculus: lts, bisim, phi, unphi, lint."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add this group's commands to ``sub`` (an argparse subparsers action)."""
    del sub
