"""The scenario as processes: start them, run the workload and the faults, stop them.

:func:`layout` decides which agents share a process (by default none: one process per
agent); :class:`Deployment` owns them:

- **start**: every agent's listening socket is bound here first (its ``live.port``, or
  any free port on 127.0.0.1), so a port that is taken is reported before anything
  starts, and each process inherits its sockets; the processes form one process group
  (and die with protomesh, SIGKILL included: ``PR_SET_PDEATHSIG``). A process that
  exits or reports an error before it is ready, or is not ready within ``start_timeout``
  wall seconds, is a :class:`LiveError` naming its agents, and everything already
  started is stopped;
- **go**: scenario time 0 is now (``time.monotonic()``), sent to every process;
- **faults** (:meth:`Deployment.supervise`), at their scenario times: a node outage
  stops the agent's process (SIGSTOP) and resumes it (SIGCONT) at its end, after
  writing the outage to the agent's down-log (:class:`~sim.live.clock.DownLog`);
  ``kill: true`` kills it and starts it again instead; a link outage tells both ends to
  refuse the link. Overlapping outages of one element are one. The controller writes
  ``node_down``, ``node_up``, ``link_down`` and ``link_up`` to its own part of the trace;
  an agent's real server that dies is recorded (:attr:`Deployment.server_exits`, at the
  scenario time its process says so) and said once through ``warn``;
- **the end**: after ``duration`` the run lasts until every initiator's instances are
  over, or until the drain cap, when what still runs ends ``drain_cap``; then every
  stopped process is resumed, the messages in flight are given up to ``QUIET`` wall
  seconds to land, and the processes are stopped (SIGKILL after ``GRACE``).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sim.atomic import write_atomic
from sim.live.children import Child, stderr_tail, wait_stopped
from sim.live.clock import DownLog, SceneClock
from sim.live.faults import Fault, faults
from sim.live.layout import LiveError
from sim.live.parts import PartWriter
from sim.scenario.model import Scenario

__all__ = ["Deployment"]

QUIET = 10.0
"""Wall seconds the messages still in flight at the end are given to land."""
GRACE = 3.0
"""Wall seconds a process is given to stop before it is killed."""


class Deployment:
    """The processes of one live run (see the module)."""

    def __init__(
        self,
        source: Path,
        scenario: Scenario,
        router: str,
        run: int,
        seed: int,
        speed: float,
        out: Path,
        groups: Sequence[Sequence[str]],
        overrides: dict[str, Any] | None = None,
        start_timeout: float = 120.0,
        capture: Path | None = None,
        warn: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.capture = capture
        self.warn = warn
        #: the real servers that died during the run: agent, server, t, returncode, stderr
        self.server_exits: list[dict[str, Any]] = []
        self.source = source
        self.overrides = dict(overrides or {})
        self.scenario = scenario
        self.router = router
        self.run = run
        self.seed = seed
        self.speed = speed
        self.out = out
        self.start_timeout = start_timeout
        self.sockets: dict[str, socket.socket] = {}
        self.book: dict[str, str] = {}
        initiators = {a for wf in scenario.workflows for a in scenario.initiators_of(wf)}
        self.procs = [
            Child(i, list(g), [], initiator=any(a in initiators for a in g))
            for i, g in enumerate(groups)
        ]
        self.owner = {a: p for p in self.procs for a in p.agents}
        self.selector = selectors.DefaultSelector()
        self.pgid = 0
        self.clock = SceneClock(time.monotonic(), speed)
        self.part: PartWriter | None = None
        self.kills: list[tuple[str, float]] = []
        self.stopping = False  #: the processes were told to stop (finish)
        #: when each stopped agent went down (scenario seconds)
        self.down_at: dict[str, float] = {}
        #: link outage edges waiting for their ends: (ends, edge) → (who must answer, answers)
        self.links: dict[tuple[tuple[str, ...], str], tuple[set[int], dict[int, float]]] = {}

    # -- start --

    def start(self) -> None:
        """Bind, spawn, wait until every process is ready (:class:`LiveError` if not)."""
        for sub in ("parts", "ctl", "spec", "logs"):
            (self.out / sub).mkdir(parents=True, exist_ok=True)
        for i, agent in enumerate(self.scenario.agents):
            self.sockets[agent.id] = self._bind(i, agent)
            port = self.sockets[agent.id].getsockname()[1]
            self.book[agent.id] = f"http://127.0.0.1:{port}"
        for p in self.procs:
            p.fds = [self.sockets[a].fileno() for a in p.agents]
            self._spawn(p)
        self._wait_ready(self.procs)
        self._warm(self.procs)

    def _bind(self, index: int, agent: Any) -> socket.socket:
        port = agent.live.port if agent.live is not None and agent.live.port else 0
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
            sock.listen(1024)
        except OSError as exc:
            sock.close()
            self.close()
            from sim.scenario.compose import locate_field

            where = locate_field(str(self.source), ("agents", index, "live", "port"))
            raise LiveError(
                f"{where}: agent '{agent.id}' cannot listen on 127.0.0.1:{port}: "
                f"{exc.strerror or exc} (the port is taken?)"
            ) from None
        sock.set_inheritable(True)
        return sock

    def _spec(self, p: Child) -> Path:
        spec = {
            "scenario": str(self.source.resolve()),
            "overrides": self.overrides,
            "router": self.router,
            "run": self.run,
            "seed": self.seed,
            "speed": self.speed,
            "out": str(self.out),
            "process": f"p{p.index}-g{p.generation}",
            "generation": p.generation,
            "agents": [{"id": a} for a in p.agents],
            "book": self.book,
            "capture": str(self.capture) if self.capture is not None else None,
            # a restarted process serves before its ``go`` arrives: it needs the clock's
            # origin from its first instant (the first generation gets it with ``go``)
            "origin": self.clock.origin if p.generation > 0 else None,
        }
        path = self.out / "spec" / f"p{p.index}-g{p.generation}.json"
        write_atomic(path, json.dumps(spec, indent=1))  # a child never reads half of it
        return path

    def _spawn(self, p: Child) -> None:
        from sim.live.forked import Forked

        path = self._spec(p)
        log = self.out / "logs" / f"p{p.index}-g{p.generation}.stderr"
        log.write_bytes(b"")
        proc = Forked(str(path), str(log), p.fds, self.pgid)
        if not self.pgid:
            self.pgid = proc.pid
        p.proc, p.ready, p.idle, p.buffer, p.error = proc, False, False, b"", ""
        os.set_blocking(proc.stdout.fileno(), False)
        self.selector.register(proc.stdout, selectors.EVENT_READ, p)

    def _wait_ready(self, procs: Sequence[Child]) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not all(p.ready for p in procs):
            self._poll(0.2)
            for p in procs:
                failed = p.error or (
                    p.proc is not None and p.proc.poll() is not None and not p.ready
                )
                if failed:
                    why = (
                        p.error or f"its process exited with {p.proc.returncode if p.proc else '?'}"
                    )
                    tail = stderr_tail(self.out / "logs" / f"p{p.index}-g{p.generation}.stderr")
                    self.close()
                    raise LiveError(
                        f"agent {', '.join(repr(a) for a in p.agents)} failed to start: {why}{tail}"
                    )
            if time.monotonic() > deadline:
                late = [a for p in procs if not p.ready for a in p.agents]
                self.close()
                raise LiveError(
                    f"agents not ready within {self.start_timeout:g} s: {', '.join(late)}"
                )

    def _warm(self, procs: Sequence[Child]) -> None:
        """Every process opens the connections its hops use (at most ``start_timeout``)."""
        for p in procs:
            p.warm = False
            self._tell(p, cmd="warm")
        deadline = time.monotonic() + self.start_timeout
        while not all(p.warm for p in procs) and time.monotonic() < deadline:
            self._poll(0.1)

    # -- the control channel --

    def _poll(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            p: Child = key.data
            try:
                chunk = os.read(key.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.selector.unregister(key.fileobj)
                continue
            p.buffer += chunk
            *lines, p.buffer = p.buffer.split(b"\n")
            for line in lines:
                self._status(p, line)

    def _status(self, p: Child, line: bytes) -> None:
        try:
            status = json.loads(line)
        except ValueError:
            return
        if "ready" in status:
            p.ready = True
        if status.get("idle"):
            p.idle = True
        if status.get("warm"):
            p.warm = True
        if "busy" in status:
            p.busy = int(status["busy"])
        if "error" in status:
            p.error = str(status["error"])
            field = status.get("field")
            if isinstance(field, list):
                from sim.scenario.compose import locate_field

                p.error = f"{locate_field(str(self.source), tuple(field))}: {p.error}"
        if isinstance(status.get("server_exit"), dict):  # an agent's real server died
            from sim.live.realserver import server_exit

            t = round(self.clock.now(), 6) if self.part is not None else 0.0  # 0: before go
            record, warning = server_exit(status["server_exit"], t)
            self.server_exits.append(record)
            self.warn(warning)
        if "link" in status:
            key = (tuple(status["link"]), "up" if status.get("up") else "down")
            pending = self.links.get(key)
            if pending is not None:
                pending[1][id(p)] = float(status.get("t", self.clock.now()))
                self._link_settled(key)

    def _tell(self, p: Child, **command: Any) -> None:
        proc = p.proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.write((json.dumps(command) + "\n").encode())
            proc.stdin.flush()

    # -- the run --

    def go(self) -> SceneClock:
        """Scenario time 0 is now: the workload starts everywhere."""
        self.clock = SceneClock(time.monotonic() + 0.05, self.speed)
        self.part = PartWriter(self.out / "parts" / "controller.jsonl", self.clock, self.run)
        for p in self.procs:
            self._tell(p, cmd="go", origin=self.clock.origin)
        return self.clock

    def supervise(self, duration: float, drain: float) -> None:
        """The faults at their times; then wait for the initiators (see the module)."""
        plan = faults(self.scenario, self.seed, self.run)
        pending: list[tuple[float, int, str, Fault]] = []
        for k, f in enumerate(plan):
            pending.append((f.down, k, "down", f))
            pending.append((f.up, k, "up", f))
        pending.sort(key=lambda e: (e[0], e[1], e[2] == "down"))
        cap = duration + drain
        drained = False
        while True:
            now = self.clock.now()
            while pending and pending[0][0] <= now:
                t, _k, edge, f = pending.pop(0)
                self._fault(f, edge, t)
            self._crashed()
            over = now >= duration and all(p.idle for p in self.procs if p.initiator)
            if over and not any(e[0] <= duration for e in pending):
                return
            if now >= cap and not drained:
                drained = True
                for p in self.procs:
                    if p.initiator:
                        self._tell(p, cmd="drain")
            if drained and now >= cap + 10.0 * self.speed:
                return
            wait = (pending[0][0] - now) / self.speed if pending else 0.2
            self._poll(max(0.0, min(wait, 0.2)))

    def _fault(self, f: Fault, edge: str, t: float) -> None:
        """Carry out one edge of an outage. Its trace line's time is when it took
        effect: a node is down once its process is stopped (or dead), up just before it
        runs again; a link is down once both ends refuse it, up once one end takes it."""
        part = self.part
        assert part is not None
        if f.is_link:
            a, b = f.element
            ends = {id(self.owner[x]): self.owner[x] for x in (a, b)}
            key = ((a, b), edge)
            self.links[key] = ({k for k, p in ends.items() if self._running(p)}, {})
            for p in ends.values():
                self._tell(p, cmd="link", ends=[a, b], up=edge == "up")
            self._link_settled(key)
            return
        (agent,) = f.element
        p = self.owner[agent]
        if edge == "down":
            if f.kill:
                self._kill(p, self.clock.now())
            else:
                self._signal(p, signal.SIGSTOP)
                wait_stopped(p.proc)
                p.stopped = True
            self.down_at[agent] = now = self.clock.now()
            part.event("node_down", agent, t=now)
            return
        now = self.clock.now()
        DownLog.append(self.out / "ctl" / f"{agent}.down", self.down_at.pop(agent, f.down), now)
        part.event("node_up", agent, t=now)
        if f.kill:
            self._restart(p)
        else:
            self._signal(p, signal.SIGCONT)
            p.stopped = False

    def _running(self, p: Child) -> bool:
        return p.proc is not None and p.proc.poll() is None and not p.stopped and not p.killed

    def _link_settled(self, key: tuple[tuple[str, ...], str]) -> None:
        """Write a link's outage edge once every running end acknowledged it."""
        need, acks = self.links[key]
        if not need <= set(acks):
            return
        del self.links[key]
        (a, b), edge = key
        times = list(acks.values()) or [self.clock.now()]
        t = max(times) if edge == "down" else min(times)
        assert self.part is not None
        self.part.event("link_down" if edge == "down" else "link_up", a, t=t, link=[a, b])

    def _signal(self, p: Child, sig: int) -> None:
        if p.proc is not None and p.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.proc.pid, sig)

    def _kill(self, p: Child, t: float) -> None:
        if p.proc is None:
            return
        p.killed = True
        self._signal(p, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.proc.wait(timeout=5)
        with contextlib.suppress(KeyError, ValueError):
            if p.proc.stdout is not None:
                self.selector.unregister(p.proc.stdout)
        for a in p.agents:
            self.kills.append((a, t))

    def _restart(self, p: Child) -> None:
        p.generation += 1
        p.killed = False
        self._spawn(p)
        self._wait_ready([p])
        self._warm([p])
        self._tell(p, cmd="go", origin=self.clock.origin, resume=self.clock.now())

    def _crashed(self) -> None:
        for p in self.procs:
            agents = ", ".join(repr(a) for a in p.agents)
            if p.error:
                raise LiveError(f"agent {agents}: {p.error} (during the run)")
            if p.proc is not None and not p.killed and p.proc.poll() is not None:
                tail = stderr_tail(self.out / "logs" / f"p{p.index}-g{p.generation}.stderr")
                raise LiveError(
                    f"agent {agents}: its process exited with {p.proc.returncode} during the "
                    f"run{tail}"
                )

    # -- the end --

    def finish(self) -> None:
        """Resume what is stopped, let the messages in flight land, stop everything."""
        part = self.part
        now = self.clock.now()
        for p in self.procs:
            if p.stopped:
                for a in p.agents:
                    DownLog.append(self.out / "ctl" / f"{a}.down", self.down_at.pop(a, now), now)
                    if part is not None:
                        part.event("node_up", a, t=now)
                self._signal(p, signal.SIGCONT)
                p.stopped = False
        deadline = time.monotonic() + QUIET
        calm = 0
        while time.monotonic() < deadline and calm < 2:
            for p in self.procs:
                p.busy = None
                self._tell(p, cmd="busy")
            asked = time.monotonic()
            live = [p for p in self.procs if p.proc is not None and p.proc.poll() is None]
            while any(p.busy is None for p in live) and time.monotonic() - asked < 2.0:
                self._poll(0.05)
            calm = calm + 1 if all((p.busy or 0) == 0 for p in live) else 0
            time.sleep(0.1)
        for p in self.procs:
            self._tell(p, cmd="stop")
        self.stopping = True
        self.close()

    def close(self) -> None:
        """Stop every process (SIGTERM, SIGKILL after :data:`GRACE`) and the sockets."""
        procs = [p.proc for p in self.procs if p.proc is not None]
        for p in self.procs:
            if p.stopped:
                self._signal(p, signal.SIGCONT)
                p.stopped = False
        if self.stopping:  # told to stop: they write their last lines and exit
            end = time.monotonic() + GRACE
            for proc in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=max(0.0, end - time.monotonic()))
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        end = time.monotonic() + GRACE
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, end - time.monotonic()))
        if self.pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for sock in self.sockets.values():
            sock.close()
        self.sockets.clear()
        if self.part is not None:
            self.part.close()
        with contextlib.suppress(Exception):
            self.selector.close()
