"""A real MCP client session against ``serve mcp --http``: list the tools, call two reads,
book once and accept the approval the server asks for by elicitation.

    python examples/mcp_session.py http://127.0.0.1:8000/mcp

Uses the official ``mcp`` SDK (a dependency of protomesh); prints one line per call. With
``serve mcp --trace FILE`` the session is a trace that ``python -m sim check`` checks
(docs/interop.md).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as mt
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

USER = {"user_id": "u1"}
TRIP = {"from": "8507000", "to": "8508050", "date": "2026-12-01"}


async def accept(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
    """The user's answer to the server's approval question: yes."""
    print(f"asked: {params.message}")
    return mt.ElicitResult(action="accept")


async def session(url: str) -> None:
    """One session: tools/list, fetch_user, check_balance, book_train."""
    async with Client(streamable_http_client(url), elicitation_callback=accept) as client:
        listed = await client.list_tools()
        print(f"{len(listed.tools)} tools: {', '.join(t.name for t in listed.tools)}")
        for name, arguments in (
            ("fetch_user", USER),
            ("check_balance", USER),
            ("book_train", TRIP),
        ):
            result = await client.call_tool(name, arguments)
            print(f"{name}: {'error' if result.is_error else 'ok'}")


if __name__ == "__main__":
    anyio.run(session, sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp")
