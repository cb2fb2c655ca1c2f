"""The stdio transport of ``import mcp``: start an MCP server, exchange newline-delimited
JSON-RPC with it, stop it (MCP 2025-11-25 and 2026-07-28 ``basic/transports/stdio``).

It replaces the SDK's ``stdio_client`` for one reason: that client decodes stdout as text and,
on bytes that are not UTF-8, keeps draining stdout until the server closes it, so the error
surfaced only at ``--timeout``. Here every line is decoded strictly on its own: the first line
that is not UTF-8 becomes a :class:`ServerOutputError` item on the read stream at once (the
session reports it and ends the exchange) and reading stops. Lines that are not JSON-RPC are
items too, as in the SDK; a line longer than :data:`MAX_LINE` bytes is an error item.

Process hygiene: the server runs in its own process group (``start_new_session``) through
:data:`LAUNCHER`, which sets a parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``)
before ``exec``, so it dies with protomesh even on SIGKILL. On exit (normal, error, timeout or
cancellation, shielded) its stdin is closed; after :data:`GRACE_EXIT` s the group gets
SIGTERM, then SIGKILL after :data:`GRACE_KILL` s (the SDK's own sequence and delays).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio

from sim.interop.errors import InteropError

__all__ = [
    "GRACE_EXIT",
    "GRACE_KILL",
    "LAUNCHER",
    "MAX_LINE",
    "ServerOutputError",
    "launch_argv",
    "read_lines",
    "server_environment",
    "stdio_transport",
]

MAX_LINE = 32 * 1024 * 1024
"""Longest stdout line (one JSON-RPC message) accepted from a server, in bytes."""
GRACE_EXIT = 2.0
"""Seconds a server has to exit by itself once its stdin is closed."""
GRACE_KILL = 2.0
"""Seconds between SIGTERM and SIGKILL to the server's process group."""

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


class ServerOutputError(Exception):
    """What the server wrote on stdout cannot be a message: bytes that are not UTF-8, or a
    line over :data:`MAX_LINE` bytes. ``str()`` is one line for the user."""


def server_environment(env: Mapping[str, str], *, inherit: bool) -> dict[str, str]:
    """The server's environment: the SDK's default set (``HOME``, ``LOGNAME``, ``PATH``,
    ``SHELL``, ``TERM``, ``USER``: what is set of them), or all of protomesh's environment with
    ``inherit``; then ``env`` on top."""
    from mcp.client.stdio import get_default_environment

    base = dict(os.environ) if inherit else get_default_environment()
    return {**base, **env}


def launch_argv(command: Sequence[str]) -> list[str]:
    """The argv that starts ``command`` under :data:`LAUNCHER`; :class:`InteropError` when the
    executable does not exist or cannot be executed."""
    exe = command[0]
    found = shutil.which(exe)
    if found is None:
        if os.sep in exe and os.path.exists(exe):
            raise InteropError(f"cannot execute {exe}: permission denied")
        raise InteropError(f"command not found: {exe}")
    return [sys.executable, "-S", "-c", LAUNCHER, str(os.getpid()), found, *command[1:]]


def _parse(raw: bytes, number: int) -> Any:
    """One stdout line as a ``SessionMessage``, or the exception that says why it is not."""
    import mcp.types as mt
    from mcp.shared.message import SessionMessage

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1]
        return ServerOutputError(
            f"the server wrote bytes that are not UTF-8 on its stdout (byte {bad!r} at offset "
            f"{exc.start} of line {number})"
        )
    try:
        return SessionMessage(mt.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        return exc


async def read_lines(source: Any, sink: Any, *, max_line: int = MAX_LINE) -> None:
    """Move ``source``'s bytes (an anyio byte stream) to ``sink`` (a memory object stream) as
    one item per line, in order. After a :class:`ServerOutputError` nothing more is read and
    ``sink`` stays open (the session ends the exchange); at end of stream ``sink`` is
    closed (the session sees the connection close)."""
    buffer = bytearray()
    number = 0
    async with sink:
        while True:
            try:
                chunk = await source.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                number += 1
                item = _parse(bytes(buffer[:end]).rstrip(b"\r"), number)
                del buffer[: end + 1]
                try:
                    await sink.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                if isinstance(item, ServerOutputError):
                    await anyio.sleep_forever()
            if len(buffer) > max_line:
                await sink.send(
                    ServerOutputError(
                        f"the server wrote a line longer than {max_line} bytes on its stdout"
                    )
                )
                await anyio.sleep_forever()


async def _drain(stdout: Any) -> None:
    """Read and drop what the server still writes, so that it never blocks on a full pipe
    while it is asked to exit."""
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        while True:
            await stdout.receive()


async def _exited(process: Any, seconds: float) -> bool:
    """Whether the server exits within ``seconds`` (polled: ``wait()`` would also wait for
    the pipes of children that inherited them)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


async def _stop(process: Any) -> None:
    """Close the server's stdin, give it :data:`GRACE_EXIT` s, then terminate its group."""
    from mcp.os.posix.utilities import terminate_posix_process_tree

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_drain, process.stdout)
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        if not await _exited(process, GRACE_EXIT):
            await terminate_posix_process_tree(process, GRACE_KILL)
            await _exited(process, GRACE_KILL)
        tasks.cancel_scope.cancel()
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    # asyncio's subprocess transport is otherwise closed only at garbage collection (a
    # ResourceWarning); nothing public exposes it
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(OSError):
            close()


@asynccontextmanager
async def stdio_transport(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    errlog: Any,
    started: Callable[[Any], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``argv`` (see :func:`launch_argv`) and yield the SDK's ``(read, write)`` stream
    pair; the server is stopped on the way out, whatever the way. ``started`` is given the
    server's anyio ``Process`` once it runs (its ``returncode`` tells when it exits)."""
    from mcp.shared.message import SessionMessage

    # Shielded: cancelled half-way (a stop while the server starts), asyncio kills the
    # child without waiting for it, and its child watcher then reports a pid it cannot find
    # on stderr; started whole, the server is stopped below like any other.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv), env=dict(env), cwd=cwd, stderr=errlog, start_new_session=True
        )
    if started is not None:
        started(process)
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    stdin = process.stdin
    assert stdin is not None and process.stdout is not None, "started with pipes"

    async def writer() -> None:
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((data + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the server stopped reading: the session sees it close

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines, process.stdout, to_session)
            tasks.start_soon(writer)
            try:
                yield read, write
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)
            for stream in (read, write, to_session, from_session):
                await stream.aclose()
