"""JSON-RPC 2.0 framing of MCP over stdio (revision 2025-11-25), separate from the SDK's server.

One message per line, UTF-8, at most ``max_frame`` bytes. Every line the server cannot hand to
the SDK gets a JSON-RPC error response (never silence):

- not UTF-8 or not JSON, or a number of more digits than Python converts
  (``sys.get_int_max_str_digits()``, 4,300 by default): ``-32700`` (parse error), ``id: null``;
- JSON that is not a message (``42``, ``{"hello": "world"}``, ``"jsonrpc": "1.0"``, an ``id``
  without ``method``, an ``id`` that is neither a string nor an integer, ``params`` that is
  not an object): ``-32600`` (invalid request), with the request's ``id`` when it is usable;
- a batch (a JSON array, ``[]`` included): ``-32600``, one response with ``id: null``. JSON-RPC
  batching was removed from MCP in revision 2025-06-18; the 2025-11-25 schema's
  ``JSONRPCMessage`` is a single request, notification or response;
- a line longer than ``max_frame`` bytes: ``-32600`` naming the limit; the line is skipped
  without being held in memory;
- a legacy request (no ``io.modelcontextprotocol/protocolVersion`` in ``params._meta``) other
  than ``initialize`` or ``ping`` before ``initialize``: ``-32600`` "not initialized" (the
  lifecycle makes ``initialize`` the first interaction and lets only ``ping`` precede it).

Valid messages go to the SDK server unchanged, in order; its answers and these errors are
written by one writer, one line each.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio

__all__ = ["MAX_FRAME", "Rejection", "Screen", "classify", "serve_frames", "serve_stdio"]

MAX_FRAME = 4 * 1024 * 1024
"""Bytes allowed in one line (one JSON-RPC message) unless ``--max-frame`` says otherwise."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})


@dataclass(frozen=True, slots=True)
class Rejection:
    """A line answered here with a JSON-RPC error (``id`` None is written as null)."""

    id: str | int | None
    code: int
    message: str

    def line(self) -> bytes:
        """The error response as one line of UTF-8 JSON."""
        body = {
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        }
        return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def classify(frame: bytes) -> dict[str, Any] | Rejection | None:
    """The message in one line (a dict the SDK's adapter accepts), a :class:`Rejection`, or
    None for a blank line (ignored)."""
    if not frame.strip():
        return None
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(None, PARSE_ERROR, f"Parse error: not UTF-8 (byte {exc.start})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Rejection(None, PARSE_ERROR, f"Parse error: column {exc.colno}: {exc.msg}")
    except RecursionError:
        return Rejection(None, PARSE_ERROR, "Parse error: nested too deeply")
    except ValueError:  # Python's integer-string limit (sys.get_int_max_str_digits)
        return Rejection(
            None,
            PARSE_ERROR,
            f"Parse error: a number of more than {sys.get_int_max_str_digits()} digits",
        )
    if isinstance(data, list):
        what = "an empty batch" if not data else f"a batch of {len(data)}"
        return Rejection(
            None,
            INVALID_REQUEST,
            f"Invalid Request: {what}: MCP 2025-11-25 has no JSON-RPC batches "
            "(removed in 2025-06-18); send one message per line",
        )
    if not isinstance(data, dict):
        return Rejection(
            None, INVALID_REQUEST, f"Invalid Request: {_kind(data)}, not a JSON-RPC message object"
        )
    msg_id = data.get("id")
    answer_id = msg_id if _usable_id(msg_id) else None

    def invalid(why: str) -> Rejection:
        return Rejection(answer_id, INVALID_REQUEST, f"Invalid Request: {why}")

    if data.get("jsonrpc") != "2.0":
        if "jsonrpc" not in data:
            return invalid('no "jsonrpc": "2.0" member')
        return invalid(f'"jsonrpc" must be "2.0", not {json.dumps(data["jsonrpc"])[:40]}')
    if "id" in data and not _usable_id(msg_id) and not ("error" in data and msg_id is None):
        return invalid(f'"id" must be a string or an integer, not {_kind(msg_id)}')
    if "method" in data:
        if not isinstance(data["method"], str):
            return invalid(f'"method" must be a string, not {_kind(data["method"])}')
        if "params" in data and not isinstance(data["params"], dict):
            return invalid(f'"params" must be an object, not {_kind(data["params"])}')
        return data
    if "result" in data or "error" in data:
        if "id" not in data:
            return invalid('a response needs an "id"')
        return data
    if "id" in data:
        return invalid('an "id" without "method" (nor "result" or "error")')
    return invalid('no "method" (nor "result" or "error")')


class Screen:
    """What stands between the wire and the SDK: :func:`classify` plus the lifecycle rule
    (legacy requests before ``initialize``). ``admit`` returns the SDK message or the error."""

    def __init__(self) -> None:
        self.initialized = False
        self.modern = False

    def admit(self, frame: bytes) -> Any:
        """The SDK's ``JSONRPCMessage`` for ``frame``, a :class:`Rejection`, or None."""
        from mcp_types import jsonrpc_message_adapter
        from pydantic import ValidationError

        data = classify(frame)
        if data is None or isinstance(data, Rejection):
            return data
        method = data.get("method")
        if isinstance(method, str) and "id" in data and not (self.initialized or self.modern):
            meta = (data.get("params") or {}).get("_meta")
            if method == "initialize":
                self.initialized = True
            elif isinstance(meta, dict) and MODERN_META_KEY in meta:
                self.modern = True
            elif method not in _BEFORE_INITIALIZE:
                return Rejection(
                    data["id"],
                    INVALID_REQUEST,
                    f"Invalid Request: not initialized: send initialize before {method} "
                    "(only ping may precede it)",
                )
        try:
            return jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"][1:])
            return Rejection(
                data.get("id") if _usable_id(data.get("id")) else None,
                INVALID_REQUEST,
                f"Invalid Request: {where}: {first['msg']}",
            )


async def _read_frame(stream: BinaryIO, max_frame: int) -> bytes | int | None:
    """The next line (without its newline), its byte count when over ``max_frame`` (the
    rest of the line is read and dropped), or None at end of input."""

    def read() -> bytes | int | None:
        line = stream.readline(max_frame + 1)
        if not line:
            return None
        if line.endswith(b"\n"):
            return line[:-1]
        if len(line) <= max_frame:  # the last line, without a newline
            return line
        size = len(line)
        while True:  # skip the rest of the oversized line in bounded pieces
            chunk = stream.readline(1 << 16)
            size += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return size - chunk.endswith(b"\n")

    return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)


async def serve_frames(
    server: Any, stdin: BinaryIO, stdout: BinaryIO, *, max_frame: int = MAX_FRAME
) -> None:
    """Serve ``server`` (the SDK's low-level ``Server``) on two binary streams until
    ``stdin`` ends; every line answered as the module docstring says."""
    from mcp.shared.message import SessionMessage

    to_sdk_send, to_sdk_recv = anyio.create_memory_object_stream[Any](0)
    from_sdk_send, from_sdk_recv = anyio.create_memory_object_stream[Any](0)
    out_send, out_recv = anyio.create_memory_object_stream[bytes](64)
    screen = Screen()
    errors, answers = out_send.clone(), out_send.clone()
    out_send.close()  # the two clones keep the writer's channel open

    async def reader() -> None:
        async with to_sdk_send, errors:
            while True:
                frame = await _read_frame(stdin, max_frame)
                if frame is None:
                    return
                if isinstance(frame, int):
                    why = f"Invalid Request: a frame of {frame} bytes (limit {max_frame} bytes)"
                    await errors.send(Rejection(None, INVALID_REQUEST, why).line())
                    continue
                admitted = screen.admit(frame)
                if isinstance(admitted, Rejection):
                    await errors.send(admitted.line())
                elif admitted is not None:
                    await to_sdk_send.send(SessionMessage(admitted))

    async def relay() -> None:
        async with from_sdk_recv, answers:
            async for message in from_sdk_recv:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await answers.send(text.encode() + b"\n")

    async def writer() -> None:
        async with out_recv:
            async for line in out_recv:
                await anyio.to_thread.run_sync(_write, stdout, line, abandon_on_cancel=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer)
        tg.start_soon(relay)
        tg.start_soon(reader)
        await server.run(to_sdk_recv, from_sdk_send, server.create_initialization_options())


def _write(stream: BinaryIO, line: bytes) -> None:
    stream.write(line)
    stream.flush()


def serve_stdio(server: Any, *, max_frame: int = MAX_FRAME) -> None:
    """Serve ``server`` on this process's stdin/stdout. While serving, fd 0 reads the null
    device and fd 1 goes to stderr, so stray prints cannot corrupt the wire."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    stdin = os.fdopen(wire_in, "rb", closefd=False)
    stdout = os.fdopen(wire_out, "wb", closefd=False)
    try:
        anyio.run(functools.partial(serve_frames, server, stdin, stdout, max_frame=max_frame))
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
