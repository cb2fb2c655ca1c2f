"""The error type of a real server's ``isError`` text (sim/live/views.py ``error_type``):
its first word when the tool declares it, after the prefix the MCP SDK's high-level
server puts before a tool's own ``ToolError`` text; otherwise ToolError."""

from __future__ import annotations

import anyio
import pytest

from sim.live.views import TOOL_ERROR, error_type

KNOWN = frozenset({"Kaboom", "ServiceDown", TOOL_ERROR})


def _sdk_text(name: str, raised: str) -> str:
    """The text the real SDK's high-level server answers when tool ``name`` raises
    ``ToolError(raised)`` (its own ``call_tool``, no transport)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("errors")

    @server.tool(name=name)
    def boom() -> str:
        raise ToolError(raised)

    async def call() -> str:
        try:
            await server.call_tool(name, {})
        except ToolError as exc:
            return str(exc)
        raise AssertionError("the tool did not raise")

    return anyio.run(call)


def test_a_plain_text_names_its_type_by_its_first_word() -> None:
    assert error_type("Kaboom: the disk is on fire", KNOWN, "boom") == "Kaboom"
    assert error_type("Fizzle: unknown", KNOWN, "boom") == TOOL_ERROR


@pytest.mark.parametrize(("raised", "expected"), [("Kaboom: on fire", "Kaboom"), ("x", TOOL_ERROR)])
def test_the_sdk_servers_prefix_is_read_past(raised: str, expected: str) -> None:
    text = _sdk_text("boom", raised)
    assert text == f"Error executing tool boom: {raised}"  # the SDK's own words, this version
    assert error_type(text, KNOWN, "boom") == expected
    # without the tool's name the prefix is not recognised (before: always ToolError)
    assert error_type(text, KNOWN) == TOOL_ERROR
