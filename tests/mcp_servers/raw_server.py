"""Misbehaving 'servers' for the bad-input tests: ``python raw_server.py MODE [PIDFILE]``
(the PID goes to PIDFILE first, so a test can check that no process is left).

- ``garbage``: writes a line that is not JSON-RPC on stdout, then waits on stdin.
- ``bad-list``: a correct handshake, then a ``tools/list`` result whose ``tools`` is a string.
- ``silent``: never answers and ignores stdin closing (must be terminated).
- ``exit``: writes to stderr and exits at once with status 3.
- ``not-utf8``: answers ``initialize`` with a line holding bytes that are not UTF-8.
- ``slow``: takes 60 s before each answer and ignores SIGTERM for that long (the kill tests
  need a server still starting up when protomesh is stopped).
- ``vendor``: a legacy (2025-11-25 only) server whose tools carry what the SDK's models
  drop: an unknown annotation key, an unknown tool field, other ``_meta`` keys, and MCP+
  metadata under the legacy key ``protomesh/mcp+``.

- ``env``: a legacy server with one tool per variable of its environment whose name starts
  with ``PROTOMESH_TEST_`` (tool ``env_NAME``, description = the value).

Outside ``bad-list``, ``vendor`` and ``env``'s own methods, a request gets -32601 (method not
found), as legacy servers answer ``server/discover``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def answer(msg_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


VENDOR_TOOLS = [
    {
        "name": "lookup_order",
        "title": "Look up an order",
        "description": "Returns the status of an order by its id.",
        "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "annotations": {"readOnlyHint": True, "x-vendorHint": {"tier": "gold"}},
        "x-futureField": [1, 2],
        "_meta": {"example.com/trace": "abc"},
    },
    {
        "name": "cancel_order",
        "description": "Cancels an order that has not shipped yet.",
        "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "_meta": {
            "protomesh/mcp+": {
                "side_effects": "delete",
                "requires_approval": True,
                "failure_modes": [{"error": "Shipped", "recovery": {"abort": True}}],
                "dependencies": [{"tool": "lookup_order", "relation": "Requires"}],
            }
        },
    },
]


def listing(mode: str) -> object:
    if mode == "vendor":
        return VENDOR_TOOLS
    if mode == "env":
        return [
            {"name": f"env_{k}", "description": v, "inputSchema": {"type": "object"}}
            for k, v in sorted(os.environ.items())
            if k.startswith("PROTOMESH_TEST_")
        ]
    return "none today"


def error(msg_id: object, code: int, message: str) -> None:
    frame = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def main(mode: str, pidfile: str | None) -> int:
    if pidfile:
        with open(pidfile, "w") as fh:
            fh.write(str(os.getpid()))
    if mode == "exit":
        sys.stderr.write("raw_server: configuration missing, giving up\n")
        return 3
    if mode == "silent":
        while True:
            time.sleep(1)
    if mode == "slow":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in sys.stdin:
            time.sleep(60)
        time.sleep(60)
        return 0
    if mode == "not-utf8":
        sys.stdin.readline()
        sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "id": 0, "result": {"name": "caf\xe9"}}\n')
        sys.stdout.flush()
        for _ in sys.stdin:
            pass
        return 0
    if mode == "garbage":
        sys.stdout.write("Hello! This server prints a banner before speaking JSON-RPC.\n")
        sys.stdout.flush()
        for _ in sys.stdin:
            pass
        return 0
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        if msg.get("method") == "initialize":
            answer(
                msg["id"],
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": mode, "version": "0"},
                },
            )
        elif msg.get("method") == "tools/list":
            answer(msg["id"], {"tools": listing(mode)})
        else:
            error(msg["id"], -32601, f"Method not found: {msg.get('method')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
