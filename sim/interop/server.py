"""A real MCP server over stdio (the official SDK's low-level ``Server``) exposing a scenario's
tools with simulated behaviour (``serve mcp``).

- ``tools/list``: the tools as ``export mcp`` writes them (MCP⁺ metadata under
  ``_meta["protomesh/mcp-plus"]``), one page.
- ``tools/call``: an unknown tool is a JSON-RPC error -32602 ``Unknown tool: NAME`` (as the real
  time server answers); arguments are validated against the input schema with ``jsonschema``,
  and a bad argument is a JSON-RPC error -32602 ``Invalid arguments for tool NAME: ...``
  (``arg_errors="error"``, the default), or, as the 2025-11-25 servers in ``mcp_wire`` do
  (SEP-1303), an ``isError`` result with that text (``arg_errors="result"``).
- Framing: one JSON-RPC message per line; invalid JSON, non-requests, batches, oversized lines
  and legacy requests before ``initialize`` are answered with JSON-RPC errors
  (:mod:`sim.interop.framing`).
- Execution: at most ``concurrency`` calls at once per hosting agent; the service time is drawn
  from the tool's ``service_time`` and slept for ``sample / speed`` wall-clock seconds (``speed``
  ``None``: instant); then an error type is drawn from the tool's ``errors`` (seeded
  ``random.Random``) and returned as an ``isError`` result whose text starts with the error
  type, else a success whose text is JSON and whose ``structuredContent`` (when the tool has an
  ``outputSchema``) is a minimal instance of that schema.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from sim.interop.errors import InteropError
from sim.interop.tools_list import scenario_tools_list
from sim.scenario.model import Scenario, ToolSpec

__all__ = ["ArgErrors", "Simulation", "build_server", "minimal_instance", "run_stdio"]

ArgErrors = Literal["error", "result"]
INVALID_PARAMS = -32602


def minimal_instance(schema: Any) -> Any:
    """A small value meant to satisfy ``schema`` (required properties only, first enum value,
    zero values); the caller validates it."""
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return minimal_instance(schema[key][0])
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    zero: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal_instance(props.get(k, {})) for k in schema.get("required") or []}
    if kind == "array":
        return []
    return zero.get(str(kind))


@dataclass
class Simulation:
    """The simulated side of ``serve mcp``: tools, seeded randomness, wall-clock scaling."""

    scenario: Scenario
    entries: dict[str, dict[str, Any]]
    speed: float | None = None
    seed: int = 0
    arg_errors: ArgErrors = "error"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from jsonschema import validators

        self.rng = random.Random(self.seed)
        self.specs: dict[str, ToolSpec] = {t.name: t for t in self.scenario.tools}
        self.validators: dict[str, Any] = {}
        self.structured: dict[str, Any] = {}
        for name, entry in self.entries.items():
            schema = entry.get("inputSchema", {})
            cls = validators.validator_for(schema, default=validators.Draft202012Validator)
            self.validators[name] = cls(schema)
            out = entry.get("outputSchema")
            if out is not None:
                value = minimal_instance(out)
                ocls = validators.validator_for(out, default=validators.Draft202012Validator)
                if ocls(out).is_valid(value):
                    self.structured[name] = value
                else:
                    del entry["outputSchema"]
                    self.notes.append(
                        f"{name}: outputSchema not served (no simple instance satisfies it)"
                    )
        self.slots: dict[str, anyio.Semaphore] = {}
        for agent in self.scenario.agents:
            sem = anyio.Semaphore(agent.concurrency)
            for tool in agent.tools:
                self.slots.setdefault(tool, sem)

    def arguments_error(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """The first schema violation of ``arguments``, or None."""
        from jsonschema.exceptions import best_match

        err = best_match(self.validators[name].iter_errors(dict(arguments)))
        if err is None:
            return None
        where = "/".join(str(p) for p in err.absolute_path)
        return f"{err.message}" + (f" at {where}" if where else "")

    def draw_error(self, name: str) -> tuple[str, float] | None:
        """An error type drawn from the tool's ``errors`` (None: success)."""
        u = self.rng.random()
        acc = 0.0
        for etype, p in self.specs[name].errors.items():
            acc += p
            if u < acc:
                return etype, p
        return None

    def service_seconds(self, name: str) -> float:
        """Wall-clock seconds to sleep for one execution (0 when instant)."""
        draw = self.specs[name].service_time.law().draw(self.rng)
        return 0.0 if self.speed is None else draw / self.speed


def build_server(
    scenario: Scenario,
    extension: Mapping[str, Any] | None = None,
    *,
    speed: float | None = None,
    seed: int = 0,
    arg_errors: ArgErrors = "error",
    tools: Sequence[str] = (),
    page_size: int | None = None,
) -> tuple[Any, Simulation]:
    """The SDK server for ``scenario`` (or only ``tools``) and its simulation state.

    ``page_size`` splits ``tools/list`` into pages linked by ``nextCursor`` (the cursor is
    the opaque offset of the next page; a cursor the server did not give is a -32602
    error). Raises :class:`InteropError` for an unknown tool or a scenario without tools."""
    import mcp.types as mt
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    export = scenario_tools_list(scenario, extension, tools)
    if not export.data["tools"]:
        raise InteropError(f"scenario {scenario.name!r} has no tools to serve")
    entries = {e["name"]: e for e in export.data["tools"]}
    sim = Simulation(scenario, entries, speed, seed, arg_errors, list(export.notes))
    listed = [mt.Tool.model_validate(e, by_name=False) for e in entries.values()]

    def text(message: str, is_error: bool, structured: Any = None) -> mt.CallToolResult:
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=message)],
            is_error=is_error,
            structured_content=structured,
        )

    async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
        if page_size is None:
            return mt.ListToolsResult(tools=listed)
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            if not cursor.startswith("offset-") or not cursor[7:].isdigit():
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor}")
            start = int(cursor[7:])
            if not 0 < start < len(listed):
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor}")
        end = start + page_size
        following = f"offset-{end}" if end < len(listed) else None
        return mt.ListToolsResult(tools=listed[start:end], next_cursor=following)

    async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        name = params.name
        if name not in entries:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        arguments = params.arguments or {}
        problem = sim.arguments_error(name, arguments)
        if problem is not None:
            message = f"Invalid arguments for tool {name}: {problem}"
            if sim.arg_errors == "error":
                raise MCPError(code=INVALID_PARAMS, message=message)
            return text(f"MCP error {INVALID_PARAMS}: Input validation error: {message}", True)
        slot = sim.slots.get(name)
        if slot is not None:
            async with slot:
                await anyio.sleep(sim.service_seconds(name))
        else:
            await anyio.sleep(sim.service_seconds(name))
        failure = sim.draw_error(name)
        if failure is not None:
            etype, p = failure
            return text(f"{etype}: simulated error of {name} (probability {p:g})", True)
        body = {"tool": name, "status": "ok", "simulated": True, "arguments": arguments}
        return text(json.dumps(body, ensure_ascii=False), False, sim.structured.get(name))

    server: Any = Server(
        scenario.name,
        version="protomesh",
        instructions=f"Simulated tools of the protomesh scenario {scenario.name!r}.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    return server, sim


def run_stdio(server: Any, *, max_frame: int | None = None) -> None:
    """Serve ``server`` on stdin/stdout until the client closes stdin; the JSON-RPC framing
    (errors for every line that is not a message, the frame limit) is
    :mod:`sim.interop.framing`'s."""
    from sim.interop.framing import MAX_FRAME, serve_stdio

    serve_stdio(server, max_frame=MAX_FRAME if max_frame is None else max_frame)
