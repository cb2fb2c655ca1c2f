"""Real protocol artifacts in and out (issue 7, docs/interop.md).

``fragments`` (tools → scenario fragment YAML), ``tools_list`` (scenario → MCP ``tools/list``
with MCP⁺ metadata), ``client`` (a live MCP server over stdio, official SDK), ``server`` (a
scenario served as a real MCP server; ``framing`` for stdio, ``streamable`` for HTTP,
``revision``, ``elicitation``, ``session_trace``, ``output``), ``errors``. The SDK is
imported only by ``client``, ``server`` and ``streamable``, inside their functions.
"""

from sim.interop.errors import InteropError

__all__ = ["InteropError"]
