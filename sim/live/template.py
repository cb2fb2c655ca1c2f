"""What the template of :mod:`sim.live.forked` does once, before it forks any host.

Imported by the template itself (it is the template's one preloaded module), never by a
host: importing it imports :data:`MODULES`, everything a host imports before it serves,
and does the work each host would otherwise repeat: the scenario model's validator
(built at its first use, ``defer_build``) and the senders' TLS context
(:func:`sim.live.wire.tls`). A forked host inherits all of it, frozen out of its
collector's scans.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal

from sim.live.forked import PARENT
from sim.longlived import freeze

__all__ = ["MODULES"]

MODULES = (
    "sim.live.host",
    "sim.live.agent",
    "sim.live.realserver",
    "sim.live.workflows",
    "sim.live.wire.mcp",
    "sim.live.wire.a2a",
    "sim.live.wire.jsonrpc",
    "sim.mesh.registry",
    "anyio._backends._asyncio",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "certifi",
    "h11",
    "httpcore",
    "httpcore2",
    "httpx",
    "httpx2",
    "truststore",
    "uvicorn",
    "uvicorn.lifespan.on",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.websockets.auto",
    "starlette.routing",
    "mcp",
    "mcp.client.streamable_http",
    "mcp.server.lowlevel",
    "a2a.client",
    "a2a.helpers",
    "a2a.server.agent_execution",
    "a2a.server.request_handlers",
    "a2a.server.routes",
    "a2a.server.tasks",
    "google.protobuf.json_format",
)
"""Everything a host imports before it serves."""


def _prepare() -> None:
    """Each step is a head start only: one that fails (a module missing or broken, a TLS
    store that cannot load) is skipped, so the template still forks, and the host that
    needs it fails at that step itself, reported with its agent like any failed start."""
    from sim.processes import die_with_parent

    die_with_parent()  # even while it imports: it reads its pipe from protomesh only after
    parent = os.environ.pop(PARENT, "")
    if parent.isdigit() and os.getppid() != int(parent):  # protomesh died before that
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel would have
    for name in MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        from sim.live.wire import tls
        from sim.scenario.model import Scenario

        Scenario.model_rebuild(force=True)
        tls()
    gc.collect()
    freeze()  # a host's collections never scan what it inherits (and never copy its pages)


_prepare()
