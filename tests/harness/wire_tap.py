"""Every JSON-RPC frame between a real client and ``serve mcp``, as sent, and its validation
against the negotiated revision's JSON Schema (``data/mcp_spec/``).

- stdio: run as ``python tests/harness/wire_tap.py LOG -- COMMAND...``, it relays stdin/stdout to
  COMMAND and appends each line to LOG as ``{"dir": "in"|"out", "msg": ...}``;
- HTTP: :class:`TapTransport`, an ``httpx2`` transport recording request bodies and the
  JSON or SSE answers the SDK's client reads.

:func:`frame_errors` checks each server frame against the definition its request implies.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

RESULTS = {
    "initialize": "InitializeResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "server/discover": "DiscoverResult",
    "ping": "EmptyResult",
}
ERRORS = {
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}


def read_log(path: Path) -> list[tuple[str, Any]]:
    """The frames of a log: ``(direction, message)``."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        out.append((item["dir"], item["msg"]))
    return out


def frame_errors(frames: list[tuple[str, Any]], spec: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Schema errors of the server's frames (``out``) and the definitions they were
    checked against. Results by the method of the request they answer (an
    ``input_required`` tools/call result as InputRequiredResult); server requests by their
    method (``elicitation/create``: ElicitRequest); all of them as JSONRPCMessage."""
    from sim.interop.tools_list import spec_errors

    methods: dict[Any, str] = {}
    errors: list[str] = []
    seen: set[str] = set()
    for direction, msg in frames:
        if direction == "in":
            if isinstance(msg, dict) and "method" in msg and "id" in msg:
                methods[msg["id"]] = msg["method"]
            continue
        checks = ["JSONRPCMessage"]
        body = msg
        if "result" in msg:
            method = methods.get(msg.get("id"), "")
            name = RESULTS.get(method)
            if method == "tools/call" and msg["result"].get("resultType") == "input_required":
                name = "InputRequiredResult"
            checks.append("JSONRPCResultResponse")
            if name is not None:
                checks.append(name)
                body = msg["result"]
        elif "error" in msg:
            checks.append("JSONRPCErrorResponse")
            named = ERRORS.get(msg["error"].get("code"))
            if named is not None and named in (spec.get("$defs") or {}):
                checks.append(named)
        elif msg.get("method") == "elicitation/create":
            checks += ["JSONRPCRequest", "ElicitRequest"]
        for definition in checks:
            target = msg if definition.startswith("JSONRPC") or "Error" in definition else body
            seen.add(definition)
            for e in spec_errors(target, spec, definition):
                errors.append(f"{definition}: {e}: {json.dumps(msg)[:300]}")
    return errors, seen


def _sse_messages(text: str) -> list[Any]:
    out = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = [ln[5:].lstrip() for ln in event.split("\n") if ln.startswith("data:")]
        if data and "".join(data).strip():
            out.append(json.loads("\n".join(data)))
    return out


def http_tap(log: list[tuple[str, Any]]) -> Any:
    """An ``httpx2.AsyncClient`` whose transport appends frames to ``log``."""
    import httpx2

    class Tee(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, kind: str) -> None:
            self.inner, self.kind, self.buf = inner, kind, b""

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                self.buf += chunk
                if "event-stream" in self.kind and b"\n\n" in self.buf:
                    done, _, self.buf = self.buf.rpartition(b"\n\n")
                    log.extend(("out", m) for m in _sse_messages(done.decode() + "\n\n"))
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()
            text = self.buf.decode()
            self.buf = b""
            if "event-stream" in self.kind:
                log.extend(("out", m) for m in _sse_messages(text))
            elif "json" in self.kind and text.strip():
                log.append(("out", json.loads(text)))

    class TapTransport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request: Any) -> Any:
            body = request.content
            if body:
                log.append(("in", json.loads(body)))
            response = await super().handle_async_request(request)
            kind = response.headers.get("content-type", "")
            response.stream = Tee(response.stream, kind)
            return response

    timeout = httpx2.Timeout(30.0, read=300.0)
    return httpx2.AsyncClient(transport=TapTransport(), timeout=timeout)


def _relay(log: IO[str], lock: threading.Lock, direction: str, src: IO[bytes],
           dst: IO[bytes]) -> None:  # fmt: skip
    for line in iter(src.readline, b""):
        if line.strip():  # logged before it is passed on: a request precedes its answer
            with lock:
                item = {"dir": direction, "msg": json.loads(line)}
                log.write(json.dumps(item) + "\n")
                log.flush()
        dst.write(line)
        dst.flush()
    dst.close()


def main(argv: list[str]) -> int:
    log_path, sep, *command = argv
    assert sep == "--", "usage: wire_tap.py LOG -- COMMAND..."
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        inbound = threading.Thread(
            target=_relay, args=(log, lock, "in", sys.stdin.buffer, proc.stdin), daemon=True
        )
        inbound.start()
        _relay(log, lock, "out", proc.stdout, sys.stdout.buffer)
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
