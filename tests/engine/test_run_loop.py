"""The per-event path's shortcuts keep SimPy's semantics: the guarded run loop (SimPy's
``step`` inlined), the garbage collector's view of a run, and the approval gate's memo."""

from __future__ import annotations

import gc
import random
import textwrap
from typing import Any

import pytest
import simpy

from sim.approval import ApprovalPolicy, DescriptorRule
from sim.calculus.mcp import ALL_FIELDS
from sim.engine.caller import Approval
from sim.engine.clock import Timer
from sim.engine.guard import UNBOUNDED
from sim.engine.invocation import Invocation
from sim.engine.loop import GC_YOUNG, run_until
from sim.engine.simulation import Replication
from sim.engine.trace import TraceWriter
from sim.engine.views import ToolRT, make_view
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario
from tests.harness.engine_parts import MESH


def test_a_failed_event_nobody_defused_crashes_the_run_as_in_simpy() -> None:
    def crash(run: Any) -> BaseException:
        env = simpy.Environment()
        env.timeout(1).callbacks.append(lambda _e: env.event().fail(KeyError("lost")))
        with pytest.raises(KeyError) as info:
            run(env)
        return info.value

    ours = crash(lambda env: run_until(env, env.timeout(5), UNBOUNDED))
    simpys = crash(lambda env: env.run(until=env.timeout(5)))
    assert type(ours) is type(simpys) and ours.args == simpys.args == ("lost",)
    assert isinstance(ours.__cause__, KeyError) and ours.__cause__ is not ours


def test_a_defused_failure_does_not_crash() -> None:
    env = simpy.Environment()

    def fail_defused(_: Any) -> None:
        event = env.event()
        event.fail(KeyError("lost"))
        event.defused = True

    env.timeout(1).callbacks.append(fail_defused)
    until = env.timeout(5)
    run_until(env, until, UNBOUNDED)
    assert env.now == 5


def test_callbacks_after_the_stop_run_when_the_simulation_resumes() -> None:
    def remaining(run: Any) -> list[float]:
        env = simpy.Environment()
        until = env.timeout(2)
        seen: list[float] = []
        run(env, until)
        until.callbacks.append(lambda _e: seen.append(env.now))  # after the stop's
        env.timeout(1).callbacks.append(lambda _e: seen.append(-env.now))
        env.run()
        return seen

    def ours(env: simpy.Environment, until: Any) -> None:
        until.callbacks = [lambda _e: None]
        run_until(env, until, UNBOUNDED)

    def simpys(env: simpy.Environment, until: Any) -> None:
        until.callbacks = [lambda _e: None]
        env.run(until=until)

    assert remaining(ours) == remaining(simpys)


def test_the_loop_leaves_the_collector_as_it_found_it() -> None:
    env = simpy.Environment()
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    during: list[tuple[int, ...]] = []
    env.timeout(0.5).callbacks.append(lambda _e: during.append(gc.get_threshold()))
    run_until(env, env.timeout(1), UNBOUNDED)
    assert during == [(max(before[0], GC_YOUNG), *before[1:])]  # young collections rarer
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # frozen during the run only
    gc.freeze()
    try:
        run_until(env, env.timeout(1), UNBOUNDED)
        assert gc.get_freeze_count() > 0  # someone else's freeze is kept
    finally:
        gc.unfreeze()


@pytest.fixture(scope="module")
def busy_mesh() -> Scenario:
    """The parts mesh with about 20 instances on one slot: replies in time, and timeouts
    where the queue makes an attempt wait past 3.2 s."""
    text = textwrap.dedent(MESH).replace(
        "arrivals: {times: [0]}", "arrivals: {process: poisson, rate: 1.0}"
    )
    text = text.replace("duration: 100", "duration: 20").replace("timeout: 5", "timeout: 3.2")
    scenario, _ = parse_scenario(text)
    return scenario


def test_a_run_leaves_no_invocation_for_the_garbage_collector(busy_mesh: Scenario) -> None:
    """An invocation and its attempt's timer hold each other only while the timer is
    pending: once it fired or was cancelled, reference counting frees them."""
    import io

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        world = Replication(busy_mesh, "dijkstra", 0, TraceWriter(io.StringIO(), 0, "off"))
        world.run()
        assert world.metrics.calls > 10 and world.metrics.timeouts > 0
        assert world.metrics.wf_succeeded > 0
        gc.collect()  # the world is still alive: what is found is what the run left
        cyclic = [o for o in gc.garbage if isinstance(o, Invocation | Timer)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert cyclic == []


class Counting(ApprovalPolicy):
    """A plug-in policy asked per call: it may answer differently each time."""

    def __init__(self) -> None:
        self.asked = 0

    def ask(self, view: Any, arguments: Any) -> bool:
        self.asked += 1
        return self.asked % 2 == 1

    def reason(self, view: Any, arguments: Any) -> str:
        return f"call {self.asked}"


def test_a_plug_in_policy_is_asked_at_every_call(mesh: Scenario) -> None:
    tool = ToolRT(mesh.tools[1], lambda: 1.0)
    view = make_view(tool, ALL_FIELDS, "hints")
    policy = Counting()
    gate = Approval(lambda: 1.0, 1.0, random.Random(0), policy)
    decisions = [gate.decision(view, {}) for _ in range(3)]
    assert [d.asks for d in decisions] == [True, False, True]
    # the reason is asked with the call that asks, and only then
    assert [d.reason for d in decisions] == ["call 1", "", "call 3"]
    assert policy.asked == 3


def test_the_built_in_rule_is_asked_once_per_view(mesh: Scenario) -> None:
    read, write = (ToolRT(t, lambda: 1.0) for t in mesh.tools)
    views = [make_view(read, ALL_FIELDS, "hints"), make_view(write, ALL_FIELDS, "hints")]
    rule = DescriptorRule()
    gate = Approval(lambda: 1.0, 1.0, random.Random(0), rule)
    assert [gate.decision(v, {}).asks for v in views * 2] == [False, True, False, True]
    assert len(gate._decided) == 2  # one answer per view
    rule.ask = lambda *_: pytest.fail("asked again")  # type: ignore[method-assign]
    assert gate.decision(views[1], {"id": "y"}).asks is True  # the arguments play no part
