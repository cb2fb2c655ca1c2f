"""The engine's own bugs: an exception raised on a state the engine should never reach.

Not compiled (:mod:`sim.native`): mypyc's native classes may derive from ``Exception``
but not from ``RuntimeError``, which :class:`EngineBug` is (it is no user input's fault).
"""

from __future__ import annotations


class EngineBug(RuntimeError):
    """The engine tried a transition its LTS does not enable (a bug, never user input)."""
