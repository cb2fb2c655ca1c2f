"""The one error type of :mod:`sim.interop`: bad input, a server that misbehaves."""

from __future__ import annotations

__all__ = ["InteropError"]


class InteropError(Exception):
    """A user-facing one-line problem (the command line prints it and exits 2)."""
