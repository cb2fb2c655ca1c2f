"""An ASGI app served by uvicorn on 127.0.0.1 in a thread of the test process (real HTTP,
no subprocess): the A2A tests' and the MCP SDK's real servers."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def asgi_thread(app: Any, lifespan: str = "off") -> Iterator[str]:
    """``app`` served at ``http://127.0.0.1:<free port>`` until the block ends; yields
    that base URL. Waits for uvicorn's start or its thread's end (no clock). ``lifespan``
    ``on`` for an app that starts its parts there (the MCP SDK's session manager)."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(app, log_level="error", lifespan=lifespan, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.005)
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10.0)
        sock.close()
