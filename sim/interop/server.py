"""A real MCP server (the official SDK's low-level ``Server``) exposing a scenario's tools with
simulated behaviour (``serve mcp``), over stdio or Streamable HTTP, to 2025-11-25 and
2026-07-28 clients alike.

- ``tools/list``: the tools as ``export mcp`` writes them, in scenario order, in the shape of
  the request's revision (:mod:`sim.interop.revision`), MCP⁺ metadata under
  ``_meta[MCP_PLUS_META]``. The entries go out as given: unknown annotation keys, ``_meta``
  and output schemas included (the SDK's result models would drop unknown keys, so the
  served dicts replace its tool list on the way out); ``execution.taskSupport`` never (no
  tasks here). With ``page_size``, pages are linked by ``nextCursor`` ``offset-K``; only a
  cursor this server issues (K a multiple of the page size inside the list) is accepted,
  any other is -32602.
- ``tools/call``: an unknown tool is a JSON-RPC error -32602 ``Unknown tool: NAME``; arguments
  are validated with ``jsonschema``, a violation being an ``isError`` result
  ``Invalid arguments for tool NAME: ...`` (``arg_errors="result"``, the default, as
  2025-11-25 asks) or a JSON-RPC error -32602 (``"protocol"``). Then the approval gate: when
  the scenario's approval policy, on the descriptor as the client sees it, asks, the user is
  asked by elicitation (:mod:`sim.interop.elicitation`) before anything executes.
- Execution: at most ``concurrency`` calls at once per hosting agent; the service time drawn
  from the tool's ``service_time`` is slept for ``sample / speed`` wall-clock seconds
  (``speed`` None: instant); an error type drawn from the tool's ``errors`` (seeded
  ``random.Random``) is an ``isError`` result whose text starts with the type, else a
  success whose text is JSON and whose ``structuredContent`` (a tool with an
  ``outputSchema``) validates against the schema (:mod:`sim.interop.output`).
- ``serverInfo``: the scenario's name, protomesh's version. ``trace``: every call as SPEC §5
  events (:mod:`sim.interop.session_trace`); a W3C ``traceparent`` in the request's
  ``_meta`` (or the HTTP header) is recorded on its ``call``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from sim.interop.elicitation import ELICITATION_TIMEOUT
from sim.interop.errors import InteropError
from sim.interop.session_trace import CLIENT_AGENT, LiveTrace, TraceFailed
from sim.scenario.model import Scenario, ToolSpec

__all__ = ["ArgErrors", "Simulation", "build_server", "run_stdio"]

ArgErrors = Literal["result", "protocol"]
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
VALIDATION_ERROR = "ValidationError"


@dataclass
class Simulation:
    """The simulated side of ``serve mcp``: tools, seeded randomness, wall-clock scaling,
    the approval policy and what each served descriptor tells a client."""

    scenario: Scenario
    entries: dict[str, dict[str, Any]]
    speed: float | None = None
    seed: int = 0
    arg_errors: ArgErrors = "result"
    notes: list[str] = field(default_factory=list)
    elicitation_timeout: float = ELICITATION_TIMEOUT

    def __post_init__(self) -> None:
        from jsonschema import validators

        from sim.approval import make_policy
        from sim.calculus.mcp import MCP_PLUS_META, caller_view, tools_from_list
        from sim.interop.output import structured_output

        self.rng = random.Random(self.seed)
        self.specs: dict[str, ToolSpec] = {t.name: t for t in self.scenario.tools}
        #: each tool's ground truth (its demand in the approval decision), built once
        self.truths = {t.name: t.descriptor() for t in self.scenario.tools}
        self.policy = make_policy(self.scenario.approval)
        #: the scenario's policy grants no approval: nobody is asked (deny reason policy)
        self.grants_nothing = self.scenario.approval.grant_probability <= 0.0
        mcp_policy = self.scenario.approval.mcp_policy.value
        self.validators: dict[str, Any] = {}
        self.structured: dict[str, Any] = {}
        self.text_only: dict[str, str] = {}
        self.views: dict[str, Any] = {}
        self.protos: dict[str, str] = {}
        for name, entry in self.entries.items():
            schema = entry.get("inputSchema", {})
            cls = validators.validator_for(schema, default=validators.Draft202012Validator)
            self.validators[name] = cls(schema)
            out = entry.get("outputSchema")
            if isinstance(out, Mapping):
                value, why = structured_output(out)
                if why:
                    self.text_only[name] = why
                    self.notes.append(f"{name}: outputSchema served as given, but {why}")
                else:
                    self.structured[name] = value
            (tool,) = tools_from_list({"tools": [entry]}, f"tools[{name}]")
            self.views[name] = caller_view(tool, mcp_policy=mcp_policy)
            self.protos[name] = "MCP+" if MCP_PLUS_META in (entry.get("_meta") or {}) else "MCP"
        self.slots: dict[str, anyio.Semaphore] = {}
        self.hosts: dict[str, str] = {}
        for agent in self.scenario.agents:
            sem = anyio.Semaphore(agent.concurrency)
            for tool_name in agent.tools:
                self.slots.setdefault(tool_name, sem)
                self.hosts.setdefault(tool_name, agent.id)

    def arguments_error(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """The first schema violation of ``arguments``, or None."""
        from jsonschema.exceptions import best_match

        err = best_match(self.validators[name].iter_errors(dict(arguments)))
        if err is None:
            return None
        where = "/".join(str(p) for p in err.absolute_path)
        return f"{err.message}" + (f" at {where}" if where else "")

    def asks(self, name: str, arguments: Mapping[str, Any]) -> tuple[bool, str]:
        """Whether the approval policy, on the client's view of ``name``, asks; and why."""
        from sim.approval import approval

        d = approval(self.truths[name], self.views[name], self.policy, arguments)
        return d.asks, d.reason

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


def _client_key(ctx: Any) -> Hashable:
    """Who is calling, for the trace's ``inst``: the HTTP session, the 2026-07-28 client's
    ``clientInfo``, else the connection (one stdio process)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    if session:
        return ("session", session)
    from sim.interop.revision import is_modern

    if not is_modern(ctx.protocol_version):  # 2025-11-25: initialize made a connection
        return ("connection", id(ctx.session.client_params))
    meta = ctx.meta if isinstance(ctx.meta, Mapping) else {}
    info = meta.get("io.modelcontextprotocol/clientInfo")
    if isinstance(info, Mapping):
        return ("client", str(info.get("name")), str(info.get("version")))
    return ("client",)


def _traced(ctx: Any) -> dict[str, str]:
    """``{"traceparent": value}`` for a valid W3C ``traceparent`` in the request's
    ``_meta`` (MCP 2026-07-28, SEP-414), else in the HTTP header; ``{}`` without one."""
    from sim.otel.context import TRACEPARENT, parse_traceparent

    meta = ctx.meta if isinstance(ctx.meta, Mapping) else {}
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    header = headers.get(TRACEPARENT) if headers is not None else None
    for value in (meta.get(TRACEPARENT), header):
        if parse_traceparent(value) is not None:
            return {TRACEPARENT: str(value)}
    return {}


def build_server(
    scenario: Scenario,
    extension: Mapping[str, Any] | None = None,
    *,
    speed: float | None = None,
    seed: int = 0,
    arg_errors: ArgErrors = "result",
    tools: Sequence[str] = (),
    page_size: int | None = None,
    trace: LiveTrace | None = None,
    log: Callable[[str], None] | None = None,
    elicitation_timeout: float = ELICITATION_TIMEOUT,
    stop: Callable[[], None] | None = None,
) -> tuple[Any, Simulation]:
    """The SDK server for ``scenario`` (or only ``tools``) and its simulation state;
    ``log`` gets one line per approval decision; ``stop`` is called once the trace refused
    a write (the server should end: the command then exits 2). Raises :class:`InteropError` for an
    unknown tool or a scenario without tools."""
    import mcp.types as mt
    from mcp.server.caching import CacheHint
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from sim import __version__
    from sim.interop import elicitation as el
    from sim.interop.negotiation import narrow
    from sim.interop.revision import (
        LEGACY,
        MODERN,
        TOOLS_TTL_MS,
        is_modern,
        served_entry,
    )
    from sim.interop.tools_list import scenario_tools_list

    narrow()
    export = scenario_tools_list(scenario, extension, tools)
    if not export.data["tools"]:
        raise InteropError(f"scenario {scenario.name!r} has no tools to serve")
    notes = list(export.notes)
    served: dict[str, dict[str, dict[str, Any]]] = {LEGACY: {}, MODERN: {}}
    for raw in export.data["tools"]:
        for revision in (LEGACY, MODERN):
            entry, why = served_entry(raw, revision)
            served[revision][entry["name"]] = entry
            if revision == LEGACY:
                notes.extend(why)
    entries = served[LEGACY]
    sim = Simulation(scenario, entries, speed, seed, arg_errors, notes, elicitation_timeout)
    models = [mt.Tool.model_validate(e, by_name=False) for e in entries.values()]
    cursors = (
        {f"offset-{k}": k for k in range(page_size, len(models), page_size)} if page_size else {}
    )
    seal = el.StateSeal()
    say = _unlogged if log is None else log
    halt = _unlogged_stop if stop is None else stop

    def result(message: str, is_error: bool, structured: Any = None) -> mt.CallToolResult:
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=message)],
            is_error=is_error,
            structured_content=structured,
        )

    async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
        if page_size is None:
            return mt.ListToolsResult(tools=models)
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            if cursor not in cursors:
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor}")
            start = cursors[cursor]
        end = start + page_size
        following = f"offset-{end}" if end < len(models) else None
        return mt.ListToolsResult(tools=models[start:end], next_cursor=following)

    async def as_given(ctx: Any, call_next: Any) -> Any:
        """The served dicts instead of the SDK's re-serialized tools (same names, order)."""
        out = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(out, dict) and "tools" in out:
            chosen = served[MODERN if is_modern(ctx.protocol_version) else LEGACY]
            out = {**out, "tools": [chosen[t["name"]] for t in out["tools"]]}
        return out

    def note(event: str, *, inst: int, inv: int, name: str, agent: str = CLIENT_AGENT,
             **detail: Any) -> None:  # fmt: skip
        """Record one event; a refused write answers the call with -32603 and stops the
        server (``halt``): a session whose trace cannot be kept is not served on."""
        if trace is None:
            return
        proto = sim.protos[name]
        try:
            trace.event(event, agent=agent, inst=inst, inv=inv, tool=name, proto=proto, **detail)
        except TraceFailed as exc:
            halt()
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from None

    def answered(params: mt.CallToolRequestParams) -> str | None:
        """The action a 2026-07-28 retry answers the approval with (None: no answer)."""
        answer = (params.input_responses or {}).get(el.APPROVAL_KEY)
        if answer is None:
            return None
        action = getattr(answer, "action", None)
        if action is None and isinstance(answer, Mapping):
            action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"inputResponses.{el.APPROVAL_KEY}: not an elicitation result",
            )
        return str(action)

    async def ask(
        ctx: Any, params: mt.CallToolRequestParams, inv: int, why: str, action: str | None
    ) -> str | mt.InputRequiredResult:
        """The user's ``action`` (accept, decline, cancel), why nobody answered (``error``,
        ``timeout``, ``incapable``: the client cannot be asked), or the
        InputRequiredResult to send (2026-07-28)."""
        name, arguments = params.name, params.arguments or {}
        if not el.elicits_form(ctx.session.client_capabilities):
            return "incapable"
        message = el.approval_message(name, arguments, why)
        if is_modern(ctx.protocol_version):
            if action is not None:
                return action
            form = mt.ElicitRequestFormParams(message=message, requested_schema=el.REQUESTED_SCHEMA)
            return mt.InputRequiredResult(
                input_requests={el.APPROVAL_KEY: mt.ElicitRequest(params=form)},
                request_state=seal.seal(inv, name, arguments),
            )
        try:
            with anyio.fail_after(sim.elicitation_timeout):
                got = await ctx.session.elicit_form(
                    message, el.REQUESTED_SCHEMA, related_request_id=ctx.request_id
                )
        except TimeoutError:
            return "timeout"
        except MCPError:
            return "error"
        return str(got.action)

    def denied(ctx: Any, name: str, got: str, why: str) -> mt.CallToolResult:
        """The refusal of a call whose approval ended in ``got`` (what :func:`ask` returned,
        or ``policy``): an isError result, or the 2026-07-28
        MissingRequiredClientCapabilityError for a client that cannot be asked."""
        if got == "incapable" and is_modern(ctx.protocol_version):
            raise MCPError(
                code=el.MISSING_CAPABILITY,
                message=f"{name} requires approval ({why}); the client did not "
                "declare the elicitation capability (form mode)",
                data={"requiredCapabilities": {"elicitation": {"form": {}}}},
            )
        said = {
            "decline": "the user declined the approval",
            "cancel": "the user cancelled the approval",
            "error": "the client answered the approval question with an error",
            "incapable": f"it requires approval ({why}) and the client did not "
            "declare the elicitation capability (form mode) to ask the user",
            "policy": f"it requires approval ({why}) and the scenario's approval policy "
            "grants none (grant_probability 0)",
            "timeout": f"nobody answered the approval within {sim.elicitation_timeout:g} s",
        }
        return result(el.refusal(name, said[got]), True)

    async def call_tool(
        ctx: Any, params: mt.CallToolRequestParams
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        name = params.name
        if name not in entries:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        arguments = params.arguments or {}
        inst = trace.instance(_client_key(ctx)) if trace is not None else 0
        inv: int | None = None
        action: str | None = None
        if params.request_state is not None and is_modern(ctx.protocol_version):
            action = answered(params)  # a malformed answer leaves the state unused
            opened = seal.open(params.request_state, name, arguments)
            if isinstance(opened, el.Refused):
                if opened.replayed:  # a new call, refused at the gate: nothing executes
                    again = trace.invocation() if trace is not None else 0
                    note("call", inst=inst, inv=again, name=name, target=sim.hosts.get(name, name),
                         **_traced(ctx))  # fmt: skip
                    note("validate", inst=inst, inv=again, name=name)
                    _, why = sim.asks(name, arguments)
                    note("deny", inst=inst, inv=again, name=name, reason="replayed", asked=why)
                    say(f"approval of {name} (invocation {again}): refused (replayed)")
                raise MCPError(code=INVALID_PARAMS, message=opened.message())
            inv = opened
        fresh = inv is None
        if inv is None:
            inv = trace.invocation() if trace is not None else 0
            note("call", inst=inst, inv=inv, name=name, target=sim.hosts.get(name, name),
                 **_traced(ctx))  # fmt: skip
            problem = sim.arguments_error(name, arguments)
            if problem is not None:
                note("error", inst=inst, inv=inv, name=name, error=VALIDATION_ERROR, attempt=1)
                message = f"Invalid arguments for tool {name}: {problem}"
                if sim.arg_errors == "protocol":
                    raise MCPError(code=INVALID_PARAMS, message=message)
                return result(message, True)
            note("validate", inst=inst, inv=inv, name=name)
        wanted, why = sim.asks(name, arguments)
        approved = False
        if wanted:
            if sim.grants_nothing:
                got: str | mt.InputRequiredResult = "policy"
            else:
                got = await ask(ctx, params, inv, why, action)
            if isinstance(got, mt.InputRequiredResult):
                return got
            approved = got == "accept"
            if approved:
                note("approve", inst=inst, inv=inv, name=name, reason=why)
                say(f"approval of {name} (invocation {inv}): accepted")
            else:
                cause = _CAUSES.get(got, got)
                note("deny", inst=inst, inv=inv, name=name, reason=cause, asked=why)
                say(f"approval of {name} (invocation {inv}): refused ({cause})")
                return denied(ctx, name, got, why)
        elif not fresh:
            raise MCPError(code=INVALID_PARAMS, message=f"{name}: nothing to answer here")
        slot = sim.slots.get(name)
        queued = time.monotonic()
        host = sim.hosts.get(name, name)
        writes = sim.specs[name].side_effects.writes
        extra = {"approved": True} if approved and writes else {}
        if slot is not None:
            async with slot:
                waited = round(time.monotonic() - queued, 6)
                note("execute", inst=inst, inv=inv, name=name, agent=host, attempt=1,
                     waited=waited, **extra)  # fmt: skip
                await anyio.sleep(sim.service_seconds(name))
        else:
            note("execute", inst=inst, inv=inv, name=name, agent=host, attempt=1, waited=0.0,
                 **extra)  # fmt: skip
            await anyio.sleep(sim.service_seconds(name))
        failure = sim.draw_error(name)
        if failure is not None:
            etype, p = failure
            note("error", inst=inst, inv=inv, name=name, error=etype, attempt=1)
            return result(f"{etype}: simulated error of {name} (probability {p:g})", True)
        if name in sim.text_only:
            note("error", inst=inst, inv=inv, name=name, error="OutputUnavailable", attempt=1)
            why_text = sim.text_only[name]
            return result(f"OutputUnavailable: {name}: outputSchema: {why_text}", True)
        note("result", inst=inst, inv=inv, name=name, attempt=1)
        body = {"tool": name, "status": "ok", "simulated": True, "arguments": arguments}
        return result(json.dumps(body, ensure_ascii=False), False, sim.structured.get(name))

    server: Any = Server(
        scenario.name,
        version=__version__,
        instructions=f"Simulated tools of the protomesh scenario {scenario.name!r}.",
        cache_hints={
            "tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public"),
            "server/discover": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public"),
        },
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(as_given)
    return server, sim


#: the ``deny`` reason (:data:`sim.vocabulary.DENIALS`) of each way an approval fails here
_CAUSES = {
    "decline": "declined",
    "cancel": "cancelled",
    "error": "cancelled",  # the client answered the elicitation with an error: no answer
    "incapable": "no_elicitation",
}


def _unlogged_stop() -> None:
    """The ``stop`` of a server nobody stops."""


def _unlogged(line: str) -> None:
    """The ``log`` of a server nobody reads."""


def run_stdio(server: Any, *, max_frame: int | None = None) -> None:
    """Serve ``server`` on stdin/stdout until the client closes stdin; the JSON-RPC framing
    (errors for every line that is not a message, the frame limit) is
    :mod:`sim.interop.framing`'s."""
    from sim.interop.framing import MAX_FRAME, serve_stdio

    serve_stdio(server, max_frame=MAX_FRAME if max_frame is None else max_frame)
