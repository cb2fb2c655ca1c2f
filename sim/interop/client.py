"""A real MCP client over stdio (the official ``mcp`` SDK): start a server, run the handshake,
page through ``tools/list``, shut the server down.

Process hygiene: the SDK's ``stdio_client`` runs the server in its own process group; on
exit (normal, error or timeout) its stdin is closed, then after a grace period the whole group
gets SIGTERM, then SIGKILL. The server is started through a small launcher that sets a
parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) before ``exec``, so it dies with
protomesh even when protomesh is killed with SIGKILL. SIGINT and SIGTERM stop the exchange at
once: the server's group is terminated (SIGKILL after :data:`sim.processes.GRACE` s) and
:class:`sim.processes.Stopped` raised. Every failure becomes an :class:`InteropError` with one
clear line: a command that does not exist, a server that exits (with the last line of its
stderr), one that writes bytes that are not UTF-8 or lines that are not JSON-RPC on stdout, a
malformed ``tools/list`` result, or no answer within ``timeout`` seconds (the whole exchange).
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from sim.interop.errors import InteropError
from sim.processes import Stopped, children, terminate

__all__ = ["DEFAULT_TIMEOUT", "MAX_PAGES", "Listing", "fetch_tools"]

DEFAULT_TIMEOUT = 30.0
"""Seconds allowed for start, handshake and every ``tools/list`` page together."""
MAX_PAGES = 1000
"""A server that keeps returning a ``nextCursor`` is cut off after this many pages."""


@dataclass(frozen=True, slots=True)
class Listing:
    """What a live server told us: who it is and its tools (the raw ``tools/list`` entries)."""

    server_name: str
    server_version: str
    protocol_version: str
    tools: dict[str, Any]
    pages: int


#: Run as ``python -S -c LAUNCHER PARENT COMMAND ARGS...``: die with PARENT, become COMMAND.
LAUNCHER = """\
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as exc:
    sys.stderr.write(f"cannot execute {sys.argv[2]}: {exc.strerror}\\n")
    os._exit(127)
"""


def _leaves(exc: BaseException) -> list[BaseException]:
    """Every non-group exception inside (nested) exception groups, in order."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _leaf(exc: BaseException) -> BaseException:
    """The exception that explains ``exc``: a stop, an interrupt or a decoding error first,
    else the first one."""
    leaves = _leaves(exc) or [exc]
    for kind in (Stopped, KeyboardInterrupt, UnicodeDecodeError, InteropError):
        for leaf in leaves:
            if isinstance(leaf, kind):
                return leaf
    return leaves[0]


def _launch(command: str) -> str:
    """The executable for ``command`` (a path or a name on PATH); :class:`InteropError`
    when there is none or it cannot be executed."""
    found = shutil.which(command)
    if found is not None:
        return found
    if os.sep in command and os.path.exists(command):
        raise InteropError(f"cannot execute {command}: permission denied")
    raise InteropError(f"command not found: {command}")


async def _watch(scope: anyio.CancelScope, stopped: list[int], *, task_status: Any) -> None:
    """On SIGINT or SIGTERM: terminate the server's group, note the signal, end the exchange."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            stopped.append(signum)
            terminate(children(), group=True, grace=0.5)
            scope.cancel()
            return


def _describe(exc: Exception) -> str:
    """One line for a stdout line the SDK could not parse as JSON-RPC."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except (IndexError, TypeError):
            first = None
        if isinstance(first, Mapping):
            shown = str(first.get("input", ""))[:60]
            return f"{first.get('msg', exc)} in {shown!r}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


async def _fetch(
    command: str,
    args: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: Any,
) -> Listing:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-S", "-c", LAUNCHER, str(os.getpid()), _launch(command), *args],
        env=dict(env) if env else None,
        cwd=cwd,
    )
    stopped: list[int] = []
    result: Listing | None = None
    async with anyio.create_task_group() as guard:
        await guard.start(_watch, guard.cancel_scope, stopped)
        result = await _exchange(params, timeout, errlog)
        guard.cancel_scope.cancel()
    if stopped:
        raise Stopped(stopped[0], f"the server `{shlex.join([command, *args])}` was stopped")
    if result is None:
        raise InteropError("the exchange was cut short")
    return result


async def _exchange(params: Any, timeout: float, errlog: Any) -> Listing | None:
    import mcp.types as mt
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    garbage: list[Exception] = []
    work = anyio.CancelScope()

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            garbage.append(message)
            work.cancel()
        await anyio.lowlevel.checkpoint()

    with anyio.fail_after(timeout):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            result: Listing | None = None
            with work:
                init = await session.initialize()
                tools: list[dict[str, Any]] = []
                cursor: str | None = None
                pages = 0
                while True:
                    page = await session.list_tools(
                        params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None
                    )
                    pages += 1
                    tools.extend(
                        t.model_dump(by_alias=True, mode="json", exclude_none=True)
                        for t in page.tools
                    )
                    cursor = page.next_cursor
                    if not cursor:
                        break
                    if pages >= MAX_PAGES:
                        raise InteropError(f"tools/list still has a nextCursor after {pages} pages")
                info = init.server_info
                result = Listing(
                    info.name,
                    info.version,
                    init.protocol_version,
                    {"tools": tools},
                    pages,
                )
            if garbage or result is None:
                detail = _describe(garbage[0]) if garbage else "cancelled"
                raise InteropError(f"not JSON-RPC on the server's stdout: {detail}")
            return result


def fetch_tools(
    command: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Listing:
    """Start ``command`` (executable and arguments) as an MCP server over stdio, initialize,
    list every tool (following ``nextCursor``), stop it. Raises :class:`InteropError`."""
    if not command:
        raise InteropError("no server command given (import mcp -- COMMAND ARGS...)")
    shown = shlex.join(command)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:

        def stderr_tail() -> str:
            try:
                errlog.flush()
                errlog.seek(0)
                tail = _last_line(errlog.read())
            except (OSError, ValueError):
                tail = ""
            return f"; its stderr: {tail}" if tail else ""

        # the SDK logs a traceback for each unparsable line: we report it in one line instead
        sdk_log = logging.getLogger("mcp")
        level = sdk_log.level
        sdk_log.setLevel(logging.CRITICAL)
        try:
            return anyio.run(_fetch, command[0], command[1:], timeout, env, cwd, errlog)
        except BaseException as exc:  # every failure becomes one line
            leaf = _leaf(exc)
            if isinstance(leaf, InteropError):
                raise InteropError(f"{shown}: {leaf}{stderr_tail()}") from None
            if isinstance(leaf, Stopped | KeyboardInterrupt):
                raise leaf from None
            if isinstance(leaf, UnicodeDecodeError):
                raise InteropError(
                    f"{shown}: the server wrote bytes that are not UTF-8 on its stdout "
                    f"(byte {leaf.object[leaf.start : leaf.start + 1]!r} at offset {leaf.start} "
                    "of a read)"
                ) from None
            if isinstance(leaf, TimeoutError):
                raise InteropError(
                    f"{shown}: no complete answer within {timeout:g} s (server stopped)"
                    + stderr_tail()
                ) from None
            if isinstance(leaf, FileNotFoundError):
                raise InteropError(f"{shown}: command not found: {command[0]}") from None
            if isinstance(leaf, PermissionError):
                raise InteropError(
                    f"{shown}: cannot execute {command[0]}: permission denied"
                ) from None
            if isinstance(leaf, OSError):
                raise InteropError(f"{shown}: cannot start: {leaf}") from None
            from mcp.shared.exceptions import MCPError
            from pydantic import ValidationError

            if isinstance(leaf, MCPError):
                what = (
                    "the server closed the connection"
                    if "closed" in leaf.message.lower()
                    else f"error {leaf.code}: {leaf.message}"
                )
                raise InteropError(f"{shown}: {what}{stderr_tail()}") from None
            if isinstance(leaf, ValidationError):
                first = leaf.errors()[0] if leaf.errors() else {"loc": (), "msg": str(leaf)}
                loc = ".".join(str(p) for p in first["loc"])
                raise InteropError(
                    f"{shown}: malformed answer from the server ({loc}: {first['msg']})"
                ) from None
            if isinstance(leaf, RuntimeError):
                raise InteropError(f"{shown}: {leaf}{stderr_tail()}") from None
            raise
        finally:
            sdk_log.setLevel(level)
