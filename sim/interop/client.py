"""A real MCP client (the official ``mcp`` SDK's ``Client``): reach a server over stdio or
Streamable HTTP, agree on a protocol revision, page through ``tools/list``, let it go.

- Transports: :class:`StdioServer` (our :mod:`sim.interop.stdio_transport`: a server process
  that dies with protomesh and whose bad bytes are reported at once) and :class:`HttpServer`
  (the SDK's ``streamable_http_client`` with the given headers, e.g. ``Authorization``).
- Revisions (:data:`REVISIONS`): ``auto`` probes ``server/discover`` at 2026-07-28 and falls
  back to the ``initialize`` handshake of 2025-11-25 when the server is legacy (the SDK's
  dual-era policy, per ``basic/versioning``); a pinned revision speaks only that one
  (2026-07-28: stateless requests with ``_meta`` version and capabilities, ``server/discover``
  for the server's identity).
- Fidelity: every ``tools/list`` page is kept as the raw JSON the server sent (checked by the
  SDK against the negotiated revision's schema, but not re-serialised through its models,
  which drop unknown annotation keys and other extensions).

SIGINT and SIGTERM stop the exchange at once: the server's group is terminated (SIGKILL after
0.5 s) and :class:`sim.processes.Stopped` raised. Every failure becomes an
:class:`InteropError` with one clear line naming the server: a command that does not exist, a
server that exits (with the last line of its stderr), bytes that are not UTF-8 or lines that
are not JSON-RPC on stdout, an HTTP error, a malformed ``tools/list`` result, or no answer
within ``timeout`` seconds (the whole exchange).
"""

from __future__ import annotations

import logging
import shlex
import signal
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio

from sim.interop.errors import InteropError
from sim.interop.stdio_transport import (
    ServerOutputError,
    launch_argv,
    server_environment,
    stdio_transport,
)
from sim.processes import Stopped, children, keep_handlers, stops_deferred, terminate

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_PAGES",
    "REVISIONS",
    "HttpServer",
    "Listing",
    "Revision",
    "StdioServer",
    "fetch_tools",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds allowed for start, handshake and every ``tools/list`` page together."""
MAX_PAGES = 1000
"""A server that keeps returning a ``nextCursor`` is cut off after this many pages."""
LEGACY, MODERN = "2025-11-25", "2026-07-28"
Revision = Literal["auto", "2025-11-25", "2026-07-28"]
REVISIONS: tuple[Revision, ...] = ("auto", "2025-11-25", "2026-07-28")
"""``--revision`` values: negotiate, or speak only that protocol revision."""


@dataclass(frozen=True, slots=True)
class StdioServer:
    """A server started as ``command`` (executable and arguments), spoken to over stdio.
    Its environment is :func:`sim.interop.stdio_transport.server_environment`."""

    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    inherit_env: bool = False
    cwd: str | None = None

    @property
    def shown(self) -> str:
        """How messages name the server: its command line."""
        return shlex.join(self.command)


@dataclass(frozen=True, slots=True)
class HttpServer:
    """A server at ``url`` (its MCP endpoint), spoken to over Streamable HTTP with
    ``headers`` on every request (their values are never shown)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def shown(self) -> str:
        """How messages name the server: the URL without user information."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


Endpoint = StdioServer | HttpServer


@dataclass(frozen=True, slots=True)
class Listing:
    """What a live server told us: who it is, the revision spoken and its tools (the raw
    ``tools/list`` entries, in the server's order)."""

    server_name: str
    server_version: str
    protocol_version: str
    tools: dict[str, Any]
    pages: int
    transport: str = "stdio"


def _leaves(exc: BaseException) -> list[BaseException]:
    """Every non-group exception inside (nested) exception groups, in order."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _leaf(exc: BaseException) -> BaseException:
    """The exception that explains ``exc``: a stop, an interrupt or our own error first,
    else the first one."""
    leaves = _leaves(exc) or [exc]
    for kind in (Stopped, KeyboardInterrupt, InteropError):
        for leaf in leaves:
            if isinstance(leaf, kind):
                return leaf
    return leaves[0]


async def _watch(scope: anyio.CancelScope, stopped: list[int], *, task_status: Any) -> None:
    """On SIGINT or SIGTERM: terminate the server's group, note the signal, end the exchange.
    The command's own handlers come back afterwards (asyncio would leave the defaults)."""
    with keep_handlers(), anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            stopped.append(signum)
            terminate(children(), group=True, grace=0.5)
            scope.cancel()
            return


def stdout_garbage(exc: Exception) -> str:
    """One line for what a stdio server sent on its stdout that is not a message (the
    transport's error item ``exc``): ``import mcp`` and ``live`` say it the same way."""
    if isinstance(exc, ServerOutputError):
        return str(exc)
    errors = getattr(exc, "errors", None)
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if callable(errors):
        try:
            first = errors()[0]
        except (IndexError, TypeError):
            first = None
        if isinstance(first, Mapping):
            shown = str(first.get("input", ""))[:60]
            detail = f"{first.get('msg', exc)} in {shown!r}"
    return f"not JSON-RPC on the server's stdout: {detail}"


def last_line(text: str) -> str:
    """The last non-blank line of a server's stderr, at most 300 characters ('' if none)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


async def _pages(session: Any) -> tuple[list[Any], int]:
    """Every ``tools/list`` entry, following ``nextCursor``, as the raw JSON received."""
    import mcp.types as mt
    from pydantic import TypeAdapter

    raw: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
    tools: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    pages = 0
    while True:
        params = mt.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await session.send_request(mt.ListToolsRequest(params=params), raw)
        pages += 1
        entries = page.get("tools")
        if not isinstance(entries, list):  # the SDK's schema check makes this unreachable
            raise InteropError("malformed answer from the server (tools: expected a list)")
        tools.extend(entries)
        cursor = page.get("nextCursor")
        if cursor is None:
            return tools, pages
        if not isinstance(cursor, str) or cursor in seen:
            raise InteropError(f"tools/list gave the cursor {cursor!r} twice (page {pages})")
        seen.add(cursor)
        if pages >= MAX_PAGES:
            raise InteropError(f"tools/list still has a nextCursor after {pages} pages")


@asynccontextmanager
async def _http_transport(
    server: HttpServer, timeout: float, refused: list[str]
) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP transport with our headers (and timeout) on every request.
    Each HTTP error status is noted in ``refused`` (the SDK turns it into a bare -32603)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def note(response: Any) -> None:
        if response.status_code >= 400:
            refused.append(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())

    async with (
        httpx2.AsyncClient(
            headers=dict(server.headers),
            timeout=httpx2.Timeout(timeout),
            event_hooks={"response": [note]},
        ) as http,
        streamable_http_client(server.url, http_client=http) as streams,
    ):
        yield streams


def _transport(server: Endpoint, errlog: Any, timeout: float, refused: list[str]) -> Any:
    """The SDK transport (an async context manager of the stream pair) for ``server``."""
    if isinstance(server, HttpServer):
        return _http_transport(server, timeout, refused)
    env = server_environment(server.env, inherit=server.inherit_env)
    return stdio_transport(launch_argv(server.command), env=env, cwd=server.cwd, errlog=errlog)


async def _exchange(server: Endpoint, revision: Revision, timeout: float, errlog: Any) -> Listing:
    import mcp.types as mt
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from sim import __version__

    garbage: list[Exception] = []
    refused: list[str] = []
    work = anyio.CancelScope()

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            garbage.append(message)
            work.cancel()
        await anyio.lowlevel.checkpoint()

    mode = {"auto": "auto", LEGACY: "legacy", MODERN: MODERN}[revision]
    listing: Listing | None = None
    try:
        with anyio.fail_after(timeout), work:
            async with Client(
                _transport(server, errlog, timeout, refused),
                mode=mode,
                message_handler=on_message,
                client_info=mt.Implementation(name="protomesh", version=__version__),
                cache=None,
            ) as client:
                session = client.session
                if revision == MODERN:  # the server's identity, and proof that it is modern
                    try:
                        found = await session.send_discover(MODERN)
                    except MCPError as exc:
                        raise InteropError(
                            f"the server does not speak {MODERN} (server/discover: error "
                            f"{exc.code}: {exc.message}); try --revision auto"
                        ) from None
                    session.adopt(mt.DiscoverResult.model_validate(found))
                tools, pages = await _pages(session)
                info = session.server_info
                listing = Listing(
                    info.name if info is not None else "",
                    info.version if info is not None else "",
                    session.protocol_version or "",
                    {"tools": tools},
                    pages,
                    "Streamable HTTP" if isinstance(server, HttpServer) else "stdio",
                )
    except Exception as exc:
        leaf = _leaf(exc)
        if not garbage and refused and isinstance(leaf, MCPError):
            # what the server said in HTTP, not the SDK's stand-in error
            raise InteropError(f"the server answered {refused[-1]} ({leaf.message})") from None
        if not garbage:
            raise
    if garbage:
        raise InteropError(stdout_garbage(garbage[0]))
    if listing is None:
        raise InteropError("the exchange was cut short")
    return listing


async def _fetch(server: Endpoint, revision: Revision, timeout: float, errlog: Any) -> Listing:
    stopped: list[int] = []
    result: Listing | None = None
    async with anyio.create_task_group() as guard:
        await guard.start(_watch, guard.cancel_scope, stopped)
        result = await _exchange(server, revision, timeout, errlog)
        guard.cancel_scope.cancel()
    if stopped:
        raise Stopped(stopped[0], f"the server `{server.shown}` was stopped")
    if result is None:
        raise InteropError("the exchange was cut short")
    return result


def _explain(leaf: BaseException, server: Endpoint, timeout: float) -> str:
    """One line for a failure that is not already an :class:`InteropError`; '' if unknown."""
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    if isinstance(leaf, TimeoutError):
        return f"no complete answer within {timeout:g} s (server stopped)"
    if isinstance(leaf, FileNotFoundError | PermissionError) and isinstance(server, StdioServer):
        what = "command not found" if isinstance(leaf, FileNotFoundError) else "cannot execute"
        return f"{what}: {server.command[0]}"
    if isinstance(leaf, MCPError):
        if "closed" in leaf.message.lower():
            return "the server closed the connection"
        return f"error {leaf.code}: {leaf.message}"
    if isinstance(leaf, ValidationError):
        first = leaf.errors()[0] if leaf.errors() else {"loc": (), "msg": str(leaf)}
        loc = ".".join(str(p) for p in first["loc"])
        return f"malformed answer from the server ({loc}: {first['msg']})"
    if isinstance(leaf, OSError):
        return f"cannot start: {leaf}"
    try:
        import httpx2
    except ImportError:  # pragma: no cover - a dependency of the SDK
        return str(leaf) if isinstance(leaf, RuntimeError) else ""
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"HTTP {leaf.response.status_code} {leaf.response.reason_phrase}"
    if isinstance(leaf, httpx2.ConnectError):
        return f"cannot connect ({leaf})"
    if isinstance(leaf, httpx2.HTTPError):
        return f"HTTP failure: {type(leaf).__name__}: {leaf}"
    if isinstance(leaf, RuntimeError):
        return str(leaf)
    return ""


def fetch_tools(
    server: Endpoint | Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    revision: Revision = "auto",
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Listing:
    """Reach ``server`` (an endpoint, or a stdio command line with ``env`` and ``cwd``),
    agree on a revision, list every tool (following ``nextCursor``), let it go. Raises
    :class:`InteropError`."""
    if not isinstance(server, StdioServer | HttpServer):
        if not server:
            raise InteropError("no server command given (import mcp -- COMMAND ARGS...)")
        server = StdioServer(tuple(server), dict(env or {}), cwd=cwd)
    if revision not in REVISIONS:
        raise InteropError(f"unknown revision {revision!r} (one of {', '.join(REVISIONS)})")
    # The SDK loads here, before the event loop: a stop while it loads ends the command at
    # once, where inside the loop it would wait for the whole import to finish.
    import mcp  # noqa: F401

    shown = server.shown
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:

        def stderr_tail() -> str:
            try:
                errlog.flush()
                errlog.seek(0)
                tail = last_line(errlog.read())
            except (OSError, ValueError):
                tail = ""
            return f"; its stderr: {tail}" if tail else ""

        # the SDK logs a traceback for each unparsable line: we report it in one line instead
        sdk_log = logging.getLogger("mcp")
        level = sdk_log.level
        sdk_log.setLevel(logging.CRITICAL)
        try:
            with stops_deferred():  # until _watch listens, and once it is done
                return anyio.run(_fetch, server, revision, timeout, errlog)
        except BaseException as exc:  # every failure becomes one line
            leaf = _leaf(exc)
            if isinstance(leaf, Stopped | KeyboardInterrupt):
                raise leaf from None
            if isinstance(leaf, InteropError):
                raise InteropError(f"{shown}: {leaf}{stderr_tail()}") from None
            what = _explain(leaf, server, timeout)
            if not what:
                raise
            tail = "" if what.startswith("malformed") else stderr_tail()
            raise InteropError(f"{shown}: {what}{tail}") from None
        finally:
            sdk_log.setLevel(level)
