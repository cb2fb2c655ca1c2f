"""Streamable HTTP for ``serve mcp --http HOST:PORT``, through the official SDK's transport.

The SDK's Streamable HTTP application (``Server.streamable_http_app``: one endpoint ``/mcp``,
POST with JSON or SSE answers, ``Mcp-Session-Id`` sessions for 2025-11-25 clients, the
stateless per-request path for 2026-07-28 clients, Origin/Host checks against DNS rebinding
on loopback addresses) served by ``uvicorn`` on a socket bound here, so that port 0 (any
free port) can be reported before the first request. The server's handlers are the same
objects stdio serves (:func:`sim.interop.server.build_server`); only the framing differs
(the SDK parses HTTP bodies itself, behind :mod:`sim.interop.http_framing`'s screen, which
answers what stdio's :mod:`sim.interop.framing` answers).
"""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import Callable
from typing import Any

from sim.interop.errors import InteropError

__all__ = ["ENDPOINT", "is_loopback", "listen", "parse_address", "run_app", "serve_http"]

ENDPOINT = "/mcp"
"""The MCP endpoint's path (the path the SDK's clients and the Inspector default to)."""
STOP_GRACE = 0.25
"""Seconds a stop waits for open requests (a pending approval question) before it
cancels them."""
LAST_WRITE = 0.25
"""Seconds the SDK may spend on each last write to a request it abandons (its courtesy
cancel of a pending elicitation, 5 s in the SDK; its shutdown error answers, 1 s), so that
a stop while a question is pending takes well under a second."""


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as ``(host, port)``; port 0 = any free one.
    Raises :class:`InteropError` naming what is wrong."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise InteropError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise InteropError(f"--http {text!r}: write an IPv6 host in brackets, e.g. [::1]:8000")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise InteropError(f"--http {text!r}: the port must be a number from 0 to 65535")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A non-blocking socket listening on ``host:port`` (port 0: any free one), so that
    the real port is known before the server runs; :class:`InteropError` naming the
    address when it cannot."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InteropError(f"--http {host}:{port}: cannot resolve {host!r}: {exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InteropError(f"--http {host}:{port}: cannot listen: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


def serve_http(
    server: Any,
    host: str,
    port: int,
    *,
    ready: Callable[[str], None],
    max_body: int | None = None,
) -> None:
    """Serve ``server`` (the SDK's low-level ``Server``) over Streamable HTTP on
    ``host:port`` until SIGINT or SIGTERM; ``ready(url)`` is called once the socket listens
    (with the real port when ``port`` is 0). A request body over ``max_body`` bytes (default
    :data:`sim.interop.framing.MAX_FRAME`, as on stdio) is refused by the SDK (413)."""
    from sim.interop.framing import MAX_FRAME
    from sim.interop.http_framing import Screened

    _bound_last_writes()
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    limit = MAX_FRAME if max_body is None else max_body
    app = server.streamable_http_app(
        host=host, streamable_http_path=ENDPOINT, max_request_body_size=limit
    )
    url = f"http://{shown}:{bound}{ENDPOINT}"
    graceful = STOP_GRACE  # asyncio.timeout(it): uvicorn annotates it as an int
    run_app(
        Screened(app, limit),
        sock,
        ready=lambda: ready(url),
        lifespan="on",
        timeout_graceful_shutdown=graceful,
    )


def run_app(
    app: Any, sock: socket.socket, *, ready: Callable[[], None] = lambda: None, **options: Any
) -> None:
    """Serve the ASGI ``app`` with uvicorn on the listening ``sock`` until SIGINT or
    SIGTERM, then return (a stopped server exits 0); ``ready()`` announces it (a client
    may stop it from then on); ``options`` go to ``uvicorn.Config``.

    The stop handler is in place before ``ready()``: a signal between the announcement
    and uvicorn's own handlers (installed when it starts serving) stops the server as soon
    as it has started, instead of being lost (the server kept running) or killing the
    process by the signal. Once uvicorn has shut down it raises the signal again with the
    handler it found, this one: nothing is left to do then."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, **options)
    server = uvicorn.Server(config)

    def stop(signum: int, frame: Any) -> None:
        server.should_exit = True  # read by uvicorn after its start-up and on every tick

    stops = (signal.SIGINT, signal.SIGTERM)
    found = {sig: signal.signal(sig, stop) for sig in stops}
    try:
        ready()
        server.run(sockets=[sock])
    finally:
        for sig, handler in found.items():
            signal.signal(sig, handler)


def _bound_last_writes() -> None:
    """Set the SDK dispatcher's two last-write bounds (private module globals of the 2.3
    series, which pyproject.toml pins) to :data:`LAST_WRITE`; fails loudly if they moved."""
    from mcp.shared import jsonrpc_dispatcher as dispatcher

    for name in ("_ABANDON_WRITE_TIMEOUT", "_SHUTDOWN_WRITE_TIMEOUT"):
        if not isinstance(getattr(dispatcher, name, None), int | float):
            raise InteropError(f"mcp.shared.jsonrpc_dispatcher.{name} is gone: not the 2.3 SDK")
        setattr(dispatcher, name, LAST_WRITE)
