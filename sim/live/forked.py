"""Host processes forked from a warm template: a live run's start without a cold
interpreter per process.

A host imports the SDKs' servers and clients, uvicorn and the mesh (about 1.3 s of CPU)
before it can serve; started as ``python -m sim.live.host`` each process paid that again,
so 6 agents took 8 s to start on 2 cores. The template is the standard library's
forkserver (:mod:`multiprocessing.forkserver`): one interpreter, started once per
protomesh process by :func:`warm` with :data:`PRELOAD` imported, that forks each host on
request. Every host is still its own OS process, with its own stdin and stdout (the
control channel), stderr (its log), the listening sockets the controller bound, the
controller's working directory and environment at the moment it is started, and it joins
the deployment's process group (:class:`Forked`). It dies with the template, which dies
with protomesh (the template exits when protomesh's end of its pipe closes, SIGKILL
included; a host's ``PR_SET_PDEATHSIG`` then kills it).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from multiprocessing import forkserver, reduction
from typing import IO, Any

__all__ = ["PRELOAD", "Forked", "cool", "receive_sockets", "send_sockets", "warm"]

PRELOAD = ("sim.live.template",)
"""The template's preloaded module: it imports what every host imports, and more."""


BATCH = 200
"""Listening sockets sent to a host in one message."""


PARENT = "PROTOMESH_TEMPLATE_PARENT"
"""The environment variable that tells a starting template protomesh's pid."""


def warm() -> None:
    """Start the template now (it imports :data:`PRELOAD` meanwhile); idempotent. The
    template is told protomesh's pid (:data:`PARENT`, in its environment only): one that
    finds its parent already gone when it asks to die with it ends at once."""
    forkserver.set_forkserver_preload(list(PRELOAD))
    before = os.environ.get(PARENT)
    os.environ[PARENT] = str(os.getpid())
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop(PARENT, None)
        else:
            os.environ[PARENT] = before


def cool() -> None:
    """End the template now, if :func:`warm` started it, and reap it: a command that stops
    early (bad input) need not wait for its imports. The template holds the command's
    stderr and notices protomesh's end of its pipe only once :data:`PRELOAD` is imported,
    so whoever reads that stderr to its end waited seconds after protomesh had exited.
    Hosts it forked die with it (``PR_SET_PDEATHSIG``)."""
    server: Any = forkserver._forkserver  # the process's one template
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    server._stop()  # reap it, close protomesh's end of its pipe, forget it


class _Passed:
    """A file descriptor handed to a host: the template duplicates it into the host."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (_received, (reduction.DupFd(self.fd),))


def _received(dup: Any) -> int:
    return int(dup.detach())


def send_sockets(channel: socket.socket, fds: Sequence[int]) -> None:
    """Send the descriptors ``fds`` over the Unix socket ``channel``, :data:`BATCH` a
    message (the kernel passes at most 253 in one)."""
    for k in range(0, len(fds), BATCH):
        socket.send_fds(channel, [b"s"], list(fds[k : k + BATCH]))


def receive_sockets(channel: socket.socket, count: int) -> list[int]:
    """The ``count`` descriptors :func:`send_sockets` sent, in order (:class:`EOFError`
    if the channel closes first)."""
    fds: list[int] = []
    while len(fds) < count:
        _, got, _, _ = socket.recv_fds(channel, 1, BATCH)
        if not got:
            raise EOFError(f"{len(fds)} of {count} sockets received")
        fds.extend(got)
    return fds


class Forked:
    """One host process forked from the template, with the part of
    :class:`subprocess.Popen`'s interface a deployment uses (``pid``, ``stdin``,
    ``stdout``, ``poll``, ``wait``, ``returncode``, ``terminate``, ``kill``). A return code
    is Popen's: the exit status, or minus the signal that ended the process.

    The listening sockets ``fds`` follow the start over a socket pair, :data:`BATCH` at
    a time (a fork request carries at most 256 descriptors)."""

    def __init__(self, spec: str, errlog: str, fds: Sequence[int], pgid: int) -> None:
        warm()
        host_in, control = os.pipe()
        status, host_out = os.pipe()
        mine, theirs = socket.socketpair()
        process = multiprocessing.get_context("forkserver").Process(
            target=_host,
            args=(
                spec,
                errlog,
                _Passed(host_in),
                _Passed(host_out),
                _Passed(theirs.fileno()),
                len(fds),
                pgid,
                os.getcwd(),
                dict(os.environ, PYTHONUNBUFFERED="1"),
            ),
            daemon=True,
        )
        try:
            process.start()
            send_sockets(mine, fds)
        except BaseException:
            os.close(control)
            os.close(status)
            raise
        finally:  # the host holds its own copies now
            os.close(host_in)
            os.close(host_out)
            mine.close()
            theirs.close()
        self.process = process
        self.pid: int = process.pid or 0
        self.stdin: IO[bytes] = open(control, "wb")  # noqa: SIM115
        self.stdout: IO[bytes] = open(status, "rb")  # noqa: SIM115

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode

    def poll(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        code = self.process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(f"host {self.pid}", timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.process.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _host(
    spec: str,
    errlog: str,
    stdin: int,
    stdout: int,
    channel: int,
    sockets: int,
    pgid: int,
    cwd: str,
    env: dict[str, str],
) -> None:
    """The host, in the forked process: its group, stdio, sockets, then the host's main."""
    try:
        os.setpgid(0, pgid)
    except OSError:  # the group's processes are all gone: a group of its own
        os.setpgid(0, 0)
    err = os.open(errlog, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for fd, std in ((stdin, 0), (stdout, 1), (err, 2)):
        if fd != std:
            os.dup2(fd, std)
            os.close(fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    with socket.socket(fileno=channel) as pair:
        fds = receive_sockets(pair, sockets)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from sim.live.host import main

    os._exit(main(spec, fds))
