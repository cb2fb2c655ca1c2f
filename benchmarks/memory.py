"""Memory figures of this process: its resident set now and its own peak, in bytes.

A benchmark that runs a child and reports the child's peak must not use ``ru_maxrss``:
on Linux a process's ``ru_maxrss`` starts from its parent's resident set at the fork
(the exec keeps the high-water mark of the memory it replaced), so a small child of a
large ``python -m benchmarks.run`` reports the parent's size. ``VmHWM`` belongs to the
memory the exec created and counts the child alone; :func:`reset_peak_rss` starts it
again from the resident set now, for a peak of one step of a long process.
"""

from __future__ import annotations

import contextlib
import resource
from pathlib import Path


def status(key: str) -> int:
    """``VmRSS``, ``VmHWM`` (any ``kB`` line of ``/proc/self/status``) in bytes; 0 where
    ``/proc`` is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def own_peak_rss() -> int:
    """This process's peak resident set since its exec, in bytes (``VmHWM``); where
    ``/proc`` is missing, ``ru_maxrss``, which may include the parent's (see the module)."""
    return status("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss() -> None:
    """Start ``VmHWM`` again from this process's resident set now (where the kernel
    allows it: ``/proc/self/clear_refs``)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
