"""Small MCP servers the interop tests start as real subprocesses."""
