"""The live tool server alone: approvals by elicitation used once, the FIFO slots, a
discarded attempt, work lost to an outage (real anyio, a fast clock, a real part file)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from sim.live.clock import DownLog, SceneClock
from sim.live.envelope import Envelope
from sim.live.parts import Owner, PartWriter
from sim.live.payload import Call
from sim.live.toolserver import Simulated, ToolHost
from sim.mesh.graph import ProtocolGraph
from sim.scenario import load_scenario
from tests.harness.live_paths import TINY

SPEED = 50.0  # scenario seconds per wall second: the service times pass quickly


class Bench:
    """One ToolHost for the tiny scenario's tickets, its part file and down-log."""

    def __init__(self, tmp: Path, concurrency: int = 2) -> None:
        scenario = load_scenario(TINY)
        self.clock = SceneClock(time.monotonic(), SPEED)
        self.part = PartWriter(tmp / "part.jsonl", self.clock, 0)
        self.downlog = DownLog(tmp / "tickets.down")
        tools = [t for t in scenario.tools if t.name in ("lookup", "book")]
        import random

        executes = Simulated(tools, self.clock, random.Random(1), random.Random(2))
        table = ProtocolGraph.from_scenario(scenario).table
        self.host = ToolHost(
            "tickets", scenario, ["lookup", "book"], table, self.clock, self.part,
            self.downlog, executes, concurrency,
        )  # fmt: skip

    def env(self, inv: int, gate: str | None = None, deadline: float | None = None) -> Envelope:
        route = {"path": ["p", "tickets"], "protocols": ["MCP"], "start": "MCP", "translations": []}
        owner = Owner("trip", 0, "buy", inv, "book")
        return Envelope(route, 1, "request", inv, owner, 1, self.clock.now(), deadline, gate)

    def lines(self) -> list[dict[str, Any]]:
        self.part.close()
        return [json.loads(x) for x in self.part.path.read_text().splitlines()]


async def _silent_notice(attempt: int) -> None:
    """Nobody waits for the notice here."""


def call(bench: Bench, env: Envelope, c: Call) -> Any:
    async def go() -> Any:
        return await bench.host.call("MCP", env, c, bench.clock.now(), _silent_notice)

    return anyio.run(go)


def test_the_listing_is_what_the_protocol_represents(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    (_lookup, book) = bench.host.listing("MCP")
    assert book.known == frozenset({"name", "description", "input_schema", "annotations"})
    assert "requires_approval" not in book.values
    (_, plus) = bench.host.listing("MCP+")
    assert plus.values["requires_approval"] is True


def test_an_approval_is_asked_then_used_once(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    env = bench.env(7, gate="requires_approval")
    asked = call(bench, env, Call("book", {}))
    assert asked.ask is not None and "protomesh asks because requires_approval" in asked.ask.message
    answer = {"action": "accept", "state": asked.ask.state}
    done = call(bench, env, Call("book", {}, answer=answer))
    assert done.error is None
    assert call(bench, env, Call("book", {}, answer=answer)) is None  # a replay: no reply
    other = call(bench, bench.env(8), Call("book", {}, answer=answer))  # another invocation
    assert other is None
    executes = [e for e in bench.lines() if e["label"] == "execute"]
    assert [(e["inv"], e["detail"]["approved"]) for e in executes] == [(7, True)]


def test_a_write_without_its_gate_executes_unapproved(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    assert call(bench, bench.env(3), Call("book", {})).error is None
    (execute,) = [e for e in bench.lines() if e["label"] == "execute"]
    assert execute["detail"]["approved"] is False  # what write_approval reports


def test_a_queued_attempt_past_its_deadline_is_discarded(tmp_path: Path) -> None:
    bench = Bench(tmp_path, concurrency=1)

    async def go() -> list[Any]:
        out: list[Any] = []

        async def one(env: Envelope) -> None:
            out.append(await bench.host.call("MCP", env, Call("lookup", {"q": "x"}),
                                             bench.clock.now(), _silent_notice))  # fmt: skip

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, bench.env(1))
            await anyio.sleep(0.001)
            tg.start_soon(one, bench.env(2, deadline=bench.clock.now()))  # gives up at once
        return out

    results = anyio.run(go)
    assert None in results and len(results) == 2
    assert [e["inv"] for e in bench.lines() if e["label"] == "execute"] == [1]


class Stopped(Simulated):
    """The tools of a process that is stopped while it executes (the controller writes
    the outage to the down-log before it resumes the process)."""

    def __init__(self, inner: Simulated, downlog: DownLog) -> None:
        self.__dict__.update(inner.__dict__)
        self.downlog = downlog

    async def run(
        self, name: str, arguments: Any, started: float, traceparent: str | None = None
    ) -> Any:
        now = self.clock.now()
        DownLog.append(self.downlog.path, now, now + 0.001)
        return await super().run(name, arguments, started, traceparent)


def test_an_execution_that_met_an_outage_is_lost(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.host.executes = Stopped(bench.host.executes, bench.downlog)  # type: ignore[arg-type]
    assert call(bench, bench.env(4), Call("book", {})) is None
    drops = [e for e in bench.lines() if e["label"] == "drop"]
    assert [d["detail"] for d in drops] == [
        {"reason": "node_down", "lost": "executing", "wall": drops[0]["detail"]["wall"]}
    ]


@pytest.mark.parametrize("tool", ["nothing_here"])
def test_a_tool_the_agent_does_not_host_is_an_error(tmp_path: Path, tool: str) -> None:
    out = call(Bench(tmp_path), Bench(tmp_path).env(1), Call(tool, {}))
    assert out.error == "UnknownTool"
