"""Hosts forked from the warm template (:mod:`sim.live.forked`): each a process of its own
in the deployment's group, with Popen's return codes; the sockets handed over in batches;
the template and its hosts gone when protomesh is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.live.deploy import Deployment
from sim.live.forked import BATCH, receive_sockets, send_sockets
from sim.live.layout import layout
from sim.scenario import load_scenario
from tests.harness.live_paths import ROOT, TINY
from tests.harness.live_runs import MARK, ours


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def _command(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_more_sockets_than_one_message_carries_arrive_in_order() -> None:
    count = 2 * BATCH + 57  # one sendmsg carries at most 253 descriptors
    listening = [socket.socket() for _ in range(count)]
    mine, theirs = socket.socketpair()
    try:
        for sock in listening:
            sock.bind(("127.0.0.1", 0))
        sent = [s.fileno() for s in listening]
        send_sockets(mine, sent)
        got = receive_sockets(theirs, count)
        assert len(got) == count and not set(got) & set(sent)  # duplicates, not the same
        names = [socket.socket(fileno=fd).getsockname() for fd in got]
        assert names == [s.getsockname() for s in listening]
        mine.close()
        with pytest.raises(EOFError, match="0 of 1 sockets received"):
            receive_sockets(theirs, 1)
    finally:
        for sock in (*listening, mine, theirs):
            sock.close()


def test_a_deployment_forks_its_hosts_from_one_template_into_its_group(tmp_path: Path) -> None:
    scenario = load_scenario(TINY)
    deployment = Deployment(TINY, scenario, "dijkstra", 0, scenario.seed, 1.0, tmp_path,
                            layout(scenario, 16), {"duration": scenario.duration})  # fmt: skip
    deployment.start()
    try:
        hosts = [p.proc for p in deployment.procs if p.proc is not None]
        assert len(hosts) == len(scenario.agents)
        (template,) = {_parent(h.pid) for h in hosts}
        assert template != os.getpid() and "multiprocessing.forkserver" in _command(template)
        assert {os.getpgid(h.pid) for h in hosts} == {deployment.pgid} != os.getpgid(0)
        first, second = hosts[0], hosts[1]
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(timeout=10) == -signal.SIGKILL == first.poll() == first.returncode
        with pytest.raises(subprocess.TimeoutExpired):
            second.wait(timeout=0.05)
        assert second.poll() is None
    finally:
        deployment.close()
    assert all(h.poll() is not None for h in hosts)


@pytest.mark.slow  # a mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_killing_protomesh_kills_the_template_and_every_host(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["live", str(TINY), "--duration", "60", "--out", str(out)]
    env = dict(os.environ, **{MARK: str(out)})
    proc = subprocess.Popen([sys.executable, "-m", "sim", *argv], cwd=ROOT, text=True,
                            stderr=subprocess.PIPE, env=env)  # fmt: skip
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 120
    while "running" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    assert "running" in seen, seen
    kids = [pid for pid in os.listdir("/proc") if pid.isdigit() and _is_child(int(pid), proc.pid)]
    assert any("multiprocessing.forkserver" in _command(int(k)) for k in kids)
    assert len(ours(str(out), grace=0)) >= 1 + 4  # the template and the hosts, marked
    proc.kill()
    proc.wait()
    assert ours(str(out)) == []


def _is_child(pid: int, parent: int) -> bool:
    try:
        return _parent(pid) == parent
    except (OSError, ValueError, IndexError):
        return False


def test_a_broken_module_does_not_stop_the_template_from_forking(tmp_path: Path) -> None:
    """The template's imports are a head start only: a module that raises on import (here
    a broken ``a2a``) is skipped, and the host that needs it reports it itself."""
    broken = tmp_path / "a2a"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('a broken install')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    done = subprocess.run([sys.executable, "-c", "import sim.live.template; import a2a"],
                          cwd=ROOT, env=env, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1 and done.stderr.strip().endswith("RuntimeError: a broken install")
    assert "sim/live/template.py" not in done.stderr  # raised by the host's own import


#: A subreaper (so that the orphaned template becomes its child) whose child starts the
#: template and is SIGKILLed at once, before the template can ask to die with it; it
#: prints how each orphan ended: the template -9 if it ended itself as the kernel would
#: have, 0 if it imported everything first and then left through its pipe's end-of-file
#: (as the resource tracker beside it does).
ORPHAN = """
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
pid = os.fork()
if pid == 0:
    from sim.live.forked import warm
    warm()
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
while True:
    try:
        kid, status = os.wait()
    except ChildProcessError:
        break
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


def test_a_template_whose_protomesh_died_before_it_asked_to_die_with_it_ends_at_once() -> None:
    done = subprocess.run([sys.executable, "-c", ORPHAN], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    codes = [int(x) for x in done.stdout.split()]
    assert sorted(codes) == [-signal.SIGKILL, 0], (codes, done.stderr)
