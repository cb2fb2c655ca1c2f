"""A small MCP server written with the SDK's high-level API (``MCPServer``, FastMCP in mcp 1.x).

Three tools: one with read-only hints, one with MCP+ metadata under
``_meta["protomesh/mcp+"]``, one with no annotations at all.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

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
        "protomesh/mcp+": {
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


if __name__ == "__main__":
    if len(sys.argv) > 1:  # a PID file for the orphan checks
        with open(sys.argv[1], "w") as fh:
            fh.write(str(os.getpid()))
    server.run()
