"""A real MCP server in an agent's place (the scenario's ``live: {command: [...]}`` or
``live: {url: ...}``): protomesh's process for the agent stays in front of it (it relays,
traces and gates approvals like any agent) and calls the real server for each execution.

The server is reached through the official SDK's ``Client``: over stdio through
:func:`sim.interop.stdio_transport.stdio_transport` (its own process group, killed with
the agent's process, SIGKILL included), or over Streamable HTTP; the revision is
negotiated (2026-07-28 when the server speaks it, else the 2025-11-25 handshake). At
start its ``tools/list`` must serve every tool the scenario hosts at the agent (the
scenario still declares them: routing, the checks and the ground truth need them); the
descriptors served are the real server's (name, description, input schema,
annotations) with the scenario's MCP⁺ metadata. Each execution is one ``tools/call``;
an ``isError`` result is an error whose type is the text's first word when it is one of
the tool's error types, else ``ToolError``. The request's W3C ``traceparent`` goes on to
the real server in the call's ``_meta["traceparent"]``.

A stdio server that exits during the run (not stopped by protomesh at the run's end) is
not restarted: its death (its ``returncode``, its last stderr line) is reported once to
the controller (``report``), which records it in ``metrics.json`` (``live.server_exits``)
and warns; the call it died in and every later call of its tools fail ``ServiceDown``
(``cause`` ``server_exit``; the text names the server, how it ended and its stderr), the
error the tools' declared recovery from a service that is down answers (docs/live.md).
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import anyio

from sim.calculus.mcp import SERVICE_DOWN, ToolPlus, tool_plus_from_mapping
from sim.live.payload import Outcome
from sim.live.wire import Kept, Spawn
from sim.scenario.model import LiveSpec, ToolSpec

__all__ = ["RealServer", "RealServerError", "ended", "lost_connection", "server_exit"]

OPEN_TIMEOUT = 60.0
"""Wall seconds a real server has to start and list its tools."""
WATCH = 0.1
"""Wall seconds between two looks at whether a stdio server still runs."""
EXIT_WAIT = 2.0
"""Wall seconds a call that lost its connection waits to learn whether the server exited."""
SERVER_EXIT = "server_exit"
"""The ``cause`` of the ``ServiceDown`` a call gets once the server died (no outcome of
the tool: ``calibrate`` leaves it out of the error probabilities)."""


def ended(returncode: int) -> str:
    """How a server's process ended, from its ``returncode`` (-N: killed by signal N)."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"was killed by {name} (returncode {returncode})"


def lost_connection(exc: BaseException) -> bool:
    """Whether a call failed because its connection to the server closed (the SDK's
    ``CONNECTION_CLOSED``, a stream closed under the session), not by an error the server
    answered."""
    import mcp.types as mt

    if isinstance(exc, BaseExceptionGroup):
        return any(lost_connection(e) for e in exc.exceptions)
    closed = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
    return isinstance(exc, closed) or getattr(exc, "code", None) == mt.CONNECTION_CLOSED


def server_exit(said: Mapping[str, Any], t: float) -> tuple[dict[str, Any], str]:
    """The controller's record of a real server's death (``metrics.json``'s
    ``live.server_exits``) from what the agent's process ``said``, at scenario time
    ``t``, and the warning line that tells the user."""
    record: dict[str, Any] = {
        "agent": str(said.get("agent")),
        "server": str(said.get("server")),
        "t": t,
        "returncode": int(said.get("returncode", 0)),
        "stderr": str(said.get("stderr") or ""),
    }
    tail = f"; its stderr: {record['stderr']}" if record["stderr"] else ""
    warning = (
        f"agent '{record['agent']}': its real server ({record['server']}) "
        f"{ended(record['returncode'])} at t={t:g} s{tail}; the calls of its tools fail "
        "ServiceDown from then on"
    )
    return record, warning


class RealServerError(Exception):
    """The real server cannot stand in for the agent (one line, naming the server)."""


class RealServer:
    """The real server behind one agent (see the module)."""

    def __init__(
        self,
        agent: str,
        live: LiveSpec,
        spawn: Spawn,
        closing: anyio.Event,
        report: Callable[[dict[str, Any]], None] = lambda record: None,
    ) -> None:
        self.agent = agent
        self.live = live
        self.shown = " ".join(live.command) if live.command else str(live.url)
        self.entries: dict[str, Mapping[str, Any]] = {}
        self._kept = Kept(self._open, spawn, closing)
        self._garbage: list[Exception] = []
        self._starting: anyio.CancelScope | None = None
        self._errlog: Any = None
        self._stderr = ""
        self._spawn = spawn
        self._closing = closing
        self._report = report
        self._process: Any = None  #: the stdio server's anyio Process, once it runs
        #: how the stdio server died during the run (None while it runs)
        self.exited: str | None = None

    def _stderr_tail(self) -> str:
        """``; its stderr: LAST LINE`` of the stdio server's stderr ('' when none)."""
        from sim.interop.client import last_line

        errlog = self._errlog
        if errlog is not None and not errlog.closed:
            try:
                errlog.flush()
                errlog.seek(0)
                self._stderr = last_line(errlog.read().decode("utf-8", "replace"))
            except (OSError, ValueError):
                pass
        return f"; its stderr: {self._stderr}" if self._stderr else ""

    async def _on_message(self, message: Any) -> None:
        """What the SDK's session cannot read as a message (a stdout line that is not
        JSON-RPC, bytes that are not UTF-8: the transport's error items) ends the start, as
        it ends ``import mcp``; once started, the SDK's default (logged, ignored) stands."""
        if isinstance(message, Exception):
            self._garbage.append(message)
            if self._starting is not None:
                self._starting.cancel()
        await anyio.lowlevel.checkpoint()

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        import mcp.types as mt
        from mcp import Client

        from sim import __version__

        info = mt.Implementation(name=f"protomesh-live-{self.agent}", version=__version__)
        async with Client(
            self._transport(),
            mode="auto",
            cache=None,
            client_info=info,
            message_handler=self._on_message,
        ) as client:
            yield client

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self.live.command:
            import tempfile

            from sim.interop.stdio_transport import (
                launch_argv,
                server_environment,
                stdio_transport,
            )

            env = server_environment(dict(self.live.env), inherit=False)
            with tempfile.TemporaryFile() as errlog:
                self._errlog = errlog
                try:
                    async with stdio_transport(
                        launch_argv(self.live.command),
                        env=env,
                        cwd=None,
                        errlog=errlog,
                        started=self._started,
                    ) as streams:
                        yield streams
                finally:
                    self._stderr_tail()  # kept for a failure reported after the file closes
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async with (
                httpx2.AsyncClient(timeout=httpx2.Timeout(OPEN_TIMEOUT, connect=5.0)) as http,
                streamable_http_client(str(self.live.url), http_client=http) as streams,
            ):
                yield streams

    async def start(self, hosted: Sequence[str]) -> None:
        """Reach the server and list its tools; :class:`RealServerError` when it does not
        answer, or lacks a tool of ``hosted``."""
        import mcp.types as mt
        from pydantic import TypeAdapter

        from sim.interop.client import stdout_garbage

        raw: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
        self._starting = anyio.CancelScope()
        try:
            with anyio.fail_after(OPEN_TIMEOUT), self._starting:
                client = await self._kept.get()
                tools: list[Any] = []
                cursor: str | None = None
                while True:
                    params = mt.PaginatedRequestParams(cursor=cursor) if cursor else None
                    listing = mt.ListToolsRequest(params=params)
                    page = await client.session.send_request(listing, raw)
                    tools.extend(page.get("tools") or [])
                    cursor = page.get("nextCursor")
                    if not cursor or len(tools) > 100_000:
                        break
        except TimeoutError:
            late = f"{self.shown}: no tools/list within {OPEN_TIMEOUT:g} s"
            raise RealServerError(late) from None
        except RealServerError:
            raise
        except Exception as exc:
            if not self._garbage:
                why = _why(exc)
                if why.lower() == "connection closed":  # the SDK's words for a stdio EOF
                    why = "the server closed the connection"
                raise RealServerError(f"{self.shown}: {why}{self._stderr_tail()}") from None
        finally:
            self._starting = None
        if self._garbage:
            raise RealServerError(f"{self.shown}: {stdout_garbage(self._garbage[0])}")
        self.entries = {str(t.get("name")): t for t in tools if isinstance(t, Mapping)}
        missing = [name for name in hosted if name not in self.entries]
        if missing:
            served = ", ".join(sorted(self.entries)) or "nothing"
            raise RealServerError(
                f"{self.shown} does not serve {', '.join(missing)} (it serves {served})"
            )
        if self._process is not None:
            self._spawn(self._watch)

    # -- a stdio server that dies during the run --

    def _started(self, process: Any) -> None:
        self._process = process

    async def _watch(self) -> None:
        """Look at the stdio server every :data:`WATCH` s until the run ends."""
        while not self._closing.is_set() and self.exited is None:
            if self._process.returncode is not None:
                self._died(int(self._process.returncode))
                return
            with anyio.move_on_after(WATCH):
                await self._closing.wait()

    async def _exits(self, exc: BaseException) -> bool:
        """Whether the stdio server exited, the call having failed with ``exc``: after a
        lost connection (:func:`lost_connection`, which comes before the exit status)
        waiting up to :data:`EXIT_WAIT` s for its returncode."""
        if self._process is None:
            return False
        if lost_connection(exc):
            with anyio.move_on_after(EXIT_WAIT):
                while self._process.returncode is None and not self._closing.is_set():
                    await anyio.sleep(0.01)
        if self._process.returncode is None or self._closing.is_set():
            return False
        self._died(int(self._process.returncode))
        return True

    def _died(self, returncode: int) -> None:
        """The server's death, reported once: its calls fail ``ServiceDown`` from now on."""
        if self.exited is not None:
            return
        tail = self._stderr_tail()
        self.exited = f"{self.shown} {ended(returncode)}{tail}"
        record = {"agent": self.agent, "server": self.shown, "returncode": returncode}
        self._report({**record, "stderr": self._stderr})

    def _gone(self) -> Outcome:
        return Outcome(SERVICE_DOWN, f"{SERVICE_DOWN}: {self.exited}", cause=SERVER_EXIT)

    def descriptor(self, spec: ToolSpec) -> ToolPlus:
        """The real entry's name, description, schema and annotations with the
        scenario's metadata."""
        truth = spec.descriptor()
        entry = self.entries.get(spec.name)
        if entry is None:
            return truth
        real = tool_plus_from_mapping(dict(entry))
        return ToolPlus(
            truth.name,
            real.description,
            real.input_schema,
            truth.side_effects,
            truth.requires_approval,
            truth.failure_modes,
            truth.summary,
            truth.dependencies,
            real.annotations if real.annotations is not None else truth.annotations,
        )

    async def run(
        self,
        name: str,
        arguments: Mapping[str, Any],
        started: float,
        traceparent: str | None = None,
    ) -> Outcome:
        """One ``tools/call``; the request's ``traceparent`` passed on in ``_meta``."""
        import mcp.types as mt
        from pydantic import TypeAdapter

        if self.exited is not None:
            return self._gone()
        raw: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        if traceparent is not None:
            params["_meta"] = {"traceparent": traceparent}
        request = mt.CallToolRequest(params=mt.CallToolRequestParams.model_validate(params))
        try:
            client = await self._kept.get()
            result = await client.session.send_request(request, raw)
        except Exception as exc:
            if await self._exits(exc):
                return self._gone()
            return Outcome("ToolError", f"ToolError: {self.shown}: {_why(exc)}")
        content = result.get("content") or []
        text = " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
        if result.get("isError"):
            return Outcome(text.partition(":")[0].strip() or "ToolError", text)
        body = text or json.dumps(result.get("structuredContent"), ensure_ascii=False)
        return Outcome(None, body, result.get("structuredContent"))


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _why(exc.exceptions[0])
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message).splitlines()[0][:300]
