"""A small MCP server written with the SDK's high-level API (``MCPServer``, FastMCP in mcp 1.x).

Three tools: one with read-only hints, one with MCP+ metadata under
``_meta["protomesh/mcp-plus"]``, one with no annotations at all.

``python fastmcp_server.py [PIDFILE]`` serves stdio; ``python fastmcp_server.py --http
PORTFILE [TOKEN]`` serves Streamable HTTP on 127.0.0.1 at a free port (written to PORTFILE
once it listens), endpoint ``/mcp``; with TOKEN, a request without ``Authorization: Bearer
TOKEN`` gets HTTP 401.
"""

from __future__ import annotations

import gc
import os
import sys

# The suite starts this server often: no collection scans the SDK's modules while they
# load, and none after (frozen where the server starts: they live to its end).
gc.disable()

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

server = MCPServer("hotel-desk", version="1.2.3")


@server.tool(
    description="Returns the weather forecast for a city on a date.",
    annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True),
)
def get_forecast(city: str, date: str) -> str:
    return f"sunny in {city} on {date}"


@server.tool(
    description="Books a hotel room in a city for a number of nights.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False),
    meta={
        "protomesh/mcp-plus": {
            "side_effects": "write",
            "requires_approval": True,
            "failure_modes": [{"error": "SoldOut", "recovery": {"prompt": "Another date?"}}],
            "dependencies": [{"tool": "get_forecast", "relation": "Requires"}],
            "summary": "Books a hotel room.",
        }
    },
)
def book_room(city: str, nights: int) -> str:
    return f"booked {nights} nights in {city}"


@server.tool(description="Cancels a booking.")
def cancel_booking(booking_id: str) -> str:
    return f"cancelled {booking_id}"


def serve_http(portfile: str, token: str | None) -> None:
    """Streamable HTTP on a free loopback port; the port goes to ``portfile`` when bound."""
    import socket

    import anyio
    import uvicorn
    from starlette.responses import JSONResponse

    app = server.streamable_http_app()
    if token is not None:
        inner = app

        async def app(scope, receive, send):  # type: ignore[no-untyped-def]
            headers = dict(scope.get("headers") or [])
            if scope["type"] == "http" and headers.get(b"authorization") != (
                f"Bearer {token}".encode()
            ):
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
            await inner(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(str(sock.getsockname()[1]))
    os.replace(tmp, portfile)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    gc.freeze()
    gc.enable()
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        serve_http(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        sys.exit(0)
    if len(sys.argv) > 1:  # a PID file for the orphan checks
        with open(sys.argv[1], "w") as fh:
            fh.write(str(os.getpid()))
    server.run()
