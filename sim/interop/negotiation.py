"""Which MCP revision a client gets: the SDK's negotiation narrowed to what ``serve mcp``
implements.

The SDK's server accepts every revision reachable by the ``initialize`` handshake
(2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) and answers in the 2025-11-25 shape
whatever was negotiated. ``serve mcp`` implements 2025-11-25 and 2026-07-28 only, so an
``initialize`` offering an older revision gets what the lifecycle prescribes for a version
the server does not support: the server's own latest handshake revision (2025-11-25) in
the ``InitializeResult``, which the client accepts or disconnects from; a later HTTP request
whose ``MCP-Protocol-Version`` header names an older revision is refused (400). The SDK
reads the set of handshake revisions from a module global in two places (the runner's
negotiation, the HTTP manager's routing): :func:`narrow` sets both, once, and fails loudly
if the SDK no longer has them (``mcp`` is pinned to the 2.3 series for this).
"""

from __future__ import annotations

from sim.interop.errors import InteropError
from sim.interop.revision import LEGACY

__all__ = ["HANDSHAKE", "narrow"]

HANDSHAKE: tuple[str, ...] = (LEGACY,)
"""The ``initialize`` revisions served."""


def narrow() -> None:
    """Make the SDK's server negotiate only :data:`HANDSHAKE` (idempotent)."""
    import mcp.server.runner as runner
    import mcp.server.streamable_http_manager as manager
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    if LATEST_HANDSHAKE_VERSION != LEGACY:
        raise InteropError(
            f"the mcp SDK's latest handshake revision is {LATEST_HANDSHAKE_VERSION}, not "
            f"{LEGACY}: serve mcp does not implement it"
        )
    for module in (runner, manager):
        known = getattr(module, "HANDSHAKE_PROTOCOL_VERSIONS", None)
        if not isinstance(known, tuple) or LEGACY not in known:
            raise InteropError(
                f"{module.__name__}.HANDSHAKE_PROTOCOL_VERSIONS is gone or changed: the mcp "
                "SDK is not the 2.3 series serve mcp narrows"
            )
        module.HANDSHAKE_PROTOCOL_VERSIONS = HANDSHAKE  # type: ignore[attr-defined]
