"""Commands on scenarios and the protocol graph: validate, schema, route."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add this group's commands to ``sub`` (an argparse subparsers action)."""
    del sub
