"""``python -m sim`` started warm: a real process of its own, forked from an interpreter
that has the command line and its SDKs imported already (about 1 s of CPU a start, mostly
the MCP SDK's import, saved on each of the suite's servers and clients).

``[*warm_sim(), "serve", "mcp", FILE]`` stands where ``[sys.executable, "-m", "sim",
"serve", "mcp", FILE]`` stood, in ``subprocess``, ``Popen`` or an SDK's stdio client alike.
Its first word starts this file as a *launcher* (Python without ``site``, the standard
library only, ~20 ms): it sends its argv, cwd, environment and its fds 0, 1 and 2 to the
session's *zygote*, which forks a *warden* that forks the command's process. That
process takes the fds as its stdin, stdout and stderr, the cwd and the environment, and
runs ``sim.__main__`` as ``__main__`` (``runpy``, as ``-m`` does), then ends as the
interpreter would: the code of ``SystemExit``, threads joined, ``atexit`` run, the
streams flushed. The launcher forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to it and exits
with its code (or dies by its signal); if the launcher is killed, the warden kills the
command. The exit code, the bytes on the streams, the transports (pipes, HTTP on
127.0.0.1) are the real command's.

One zygote a session: under xdist the controller starts it when a worker first asks for
it (:func:`serve_session_zygote`: the workers find the controller's socket through
:data:`SESSION`) and ends it with the session, so its preload (about 2 s of CPU) is paid
once, not once a worker, and not at all by a session that starts nothing warm; a pytest
process without workers starts its own on the first call and ends it with itself.

What differs from a cold start, so what stays on ``sys.executable -m sim``: the
interpreter's start and the import of the command line (tests/cli/test_startup_imports.py,
the signal tests that race the start), the hash seed (one per zygote:
tests/mesh/test_routing.py's seeds), the process's ``/proc/PID/cmdline`` (the zygote's: the
tests that look for a leftover process by its command line), and what a module reads
from the environment when it is imported (the zygote's environment; none of ``sim`` does).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the launcher imports nothing it does not run
    import subprocess

#: the modules the zygote imports before its first fork: the command line, the scenario
#: loader and the routers, the MCP and A2A SDKs and the servers they run on
PRELOAD = (
    "sim.longlived",
    "sim.processes",
    "sim.cli",
    "sim.admission",
    "sim.interop.server",
    "sim.interop.client",
    "sim.interop.stdio_transport",
    "sim.interop.streamable",
    "sim.interop.a2a_server",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.server.lowlevel",
    "mcp.server.stdio",
    "mcp.server.streamable_http_manager",
    "uvicorn",
)
#: the signals the launcher passes on to the command
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
_MESSAGE = 1 << 20  # bytes: the largest request (argv, cwd, environment) a launcher sends


def _exit_code(stop: SystemExit) -> int:
    """The exit code the interpreter gives an uncaught ``SystemExit``."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _command(fds: list[int], request: dict[str, object]) -> None:
    """In the forked process: become ``python -m sim ARGV`` and end as it would."""
    import atexit
    import runpy
    import threading
    import traceback

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    cwd = str(request["cwd"])
    os.chdir(cwd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    sys.path[0] = cwd  # as -m puts the working directory first
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.argv = ["-m", *map(str, argv)]
    code = 0
    try:
        runpy.run_module("sim", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = _exit_code(stop)
    except KeyboardInterrupt:
        traceback.print_exc()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter's end does
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    os._exit(code & 0xFF)


def _warden(conn: socket.socket, fds: list[int], request: dict[str, object]) -> None:
    """Fork the command, tell the launcher its pid, then its wait status; kill it if the
    launcher is gone first."""
    import contextlib
    import select

    pid = os.fork()
    if pid == 0:
        conn.close()
        _command(fds, request)
    for fd in fds:
        os.close(fd)
    conn.send(str(pid).encode())
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            break
        if not conn.recv(16):  # the launcher died: so does its command
            os.kill(pid, signal.SIGKILL)
            break
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):  # the launcher may be gone
        conn.send(str(status).encode())
    os._exit(0)


def _zygote(path: str) -> None:
    """Import PRELOAD, then fork a warden per launcher until stdin (the lifeline) closes."""
    import importlib
    import select

    sys.path[0] = os.getcwd()  # the repository, as for `python -m sim` started there
    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        while True:  # the wardens that ended
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return
        if listener in ready:
            conn, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(conn, _MESSAGE, 3)
            if os.fork() == 0:
                listener.close()
                _warden(conn, fds, json.loads(message))
            conn.close()
            for fd in fds:
                os.close(fd)


def _launch(path: str, argv: list[str]) -> None:
    """Have the zygote run ``python -m sim ARGV`` on this process's fds; exit as it does."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(path)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    pid = int(conn.recv(32))
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _frame: os.kill(pid, number))
    reply = conn.recv(32)
    code = os.waitstatus_to_exitcode(int(reply)) if reply else 1
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


#: this process's zygote, once started, and the path of its socket
_zygote_process: list[tuple[subprocess.Popen[str], str]] = []
#: the environment variable naming, to the xdist workers, the controller's socket that
#: hands out the session's zygote (set by :func:`serve_session_zygote`)
SESSION = "WARM_SIM_SESSION"
#: seconds a worker waits for the controller's answer (the zygote's preload: about 2 s)
_SESSION_WAIT = 120.0
#: the socket of the session's zygote, once the controller has answered
_session: list[str] = []
#: the folder of the controller's socket that answers the workers
_served: list[str] = []


def _own_zygote() -> str:
    """The socket of this process's zygote, started and waited for on the first call."""
    if not _zygote_process:
        import atexit
        import subprocess
        import tempfile

        from tests.harness.paths import REPO

        path = os.path.join(tempfile.mkdtemp(prefix="warm-sim-"), "zygote")
        zygote = subprocess.Popen(
            [sys.executable, __file__, "zygote", path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO,
            text=True,
        )
        assert zygote.stdout is not None
        if zygote.stdout.readline().strip() != "ready":
            zygote.kill()
            raise RuntimeError(f"the warm sim zygote did not start (exit {zygote.wait()})")
        atexit.register(stop_warm_sim)
        _zygote_process.append((zygote, path))
    return _zygote_process[0][1]


def serve_session_zygote() -> None:
    """In the xdist controller, before its workers start (they inherit :data:`SESSION`):
    a thread answers each worker that asks with the socket of this process's zygote,
    started on the first ask; the controller ends it with the session
    (:func:`stop_warm_sim`)."""
    import tempfile
    import threading

    folder = tempfile.mkdtemp(prefix="warm-sim-session-")
    _served.append(folder)  # removed by stop_warm_sim
    path = os.path.join(folder, "ask")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    threading.Thread(target=_hand_out, args=(listener,), daemon=True).start()
    os.environ[SESSION] = path


def _hand_out(listener: socket.socket) -> None:
    """Answer each connection with the zygote's socket, or ``error: WHY``, one at a time."""
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                answer = _own_zygote()
            except RuntimeError as exc:  # said to the worker, who raises it
                answer = f"error: {exc}"
            conn.sendall(answer.encode())


def _ask(path: str) -> str:
    """The session's zygote's socket, from the controller listening at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(_SESSION_WAIT)
        conn.connect(path)
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    text = answer.decode()
    if not text or text.startswith("error: "):
        raise RuntimeError(text.removeprefix("error: ") or "the controller did not answer")
    return text


def warm_sim() -> list[str]:
    """The words that start ``python -m sim`` warm (followed by its arguments): through the
    session's zygote under xdist, else through this process's, started on the first call."""
    named = os.environ.get(SESSION)
    if named and not _zygote_process:  # a worker: the controller's zygote
        if not _session:
            _session.append(_ask(named))
        return [sys.executable, "-S", __file__, "launch", _session[0]]
    return [sys.executable, "-S", __file__, "launch", _own_zygote()]


def stop_warm_sim() -> None:
    """End this process's zygote, if started, and wait for it (its CPU, its commands'
    with it, is then this process's children's)."""
    import shutil
    import subprocess

    while _zygote_process:
        zygote, path = _zygote_process.pop()
        assert zygote.stdin is not None
        zygote.stdin.close()  # the lifeline: the zygote returns
        try:
            zygote.wait(timeout=10)
        except subprocess.TimeoutExpired:
            zygote.kill()
            zygote.wait()
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)  # its socket's folder
    while _served:  # the controller's socket that answered the workers
        shutil.rmtree(_served.pop(), ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "zygote":
        _zygote(sys.argv[2])
    else:
        _launch(sys.argv[2], sys.argv[3:])
