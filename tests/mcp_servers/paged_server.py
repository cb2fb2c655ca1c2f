"""A low-level SDK server whose ``tools/list`` comes in pages of two (``nextCursor``)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

# The suite starts this server often: no collection scans the SDK's modules while they
# load, and none after (frozen where the server starts: they live to its end).
gc.disable()

import anyio  # noqa: E402
import mcp.types as mt  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

TOOLS = [
    mt.Tool(
        name=f"tool_{i}",
        description=f"Looks up record number {i} in the archive of scanned invoices.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        annotations=mt.ToolAnnotations(read_only_hint=True),
    )
    for i in range(5)
]
PAGE = 2


async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE
    return mt.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


async def main() -> None:
    server: Any = Server("paged-archive", version="0.1", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    gc.freeze()
    gc.enable()
    if len(sys.argv) > 1:  # a PID file for the orphan checks
        with open(sys.argv[1], "w") as fh:
            fh.write(str(os.getpid()))
    anyio.run(main)
