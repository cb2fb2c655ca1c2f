"""The kernel's clock (``later``), ids and the recorder, alone."""

from __future__ import annotations

from typing import Any

import pytest

from sim.engine.kernel import Kernel
from sim.engine.metrics import WorkflowCounters
from sim.engine.paths import Hop
from sim.engine.recorder import METHODS, Recorder
from sim.engine.topology import LinkState
from sim.engine.trace import NULL, owner_fragment
from sim.vocabulary import LABELS, line_problems
from tests.harness.engine_parts import lines, make_kernel


def test_later_runs_callbacks_at_now_plus_delay_in_fifo_order(kernel: Kernel) -> None:
    env, seen = kernel.env, []

    def note(event: Any) -> None:
        seen.append((env.now, event._value))

    kernel.later(2.0, "b", note)
    kernel.later(1.0, "a", note)
    env.timeout(2.0).callbacks.append(lambda _e: seen.append((env.now, "timeout")))
    kernel.later(2.0, "c", note)
    env.run()
    # equal times keep the order of scheduling, as SimPy's own Timeout would
    assert seen == [(1.0, "a"), (2.0, "b"), (2.0, "timeout"), (2.0, "c")]


def test_later_keeps_one_event_of_its_own_on_simpys_queue(kernel: Kernel) -> None:
    env, seen = kernel.env, []
    delays = [(k * 37) % 11 * 0.5 for k in range(40)]  # ties and out-of-order times
    for k, delay in enumerate(delays):
        kernel.later(delay, k, lambda event: seen.append((env.now, event._value)))
    assert len(env._queue) <= 2  # the earliest (and one that was the earliest before it)
    env.run()
    assert seen == sorted(((d, k) for k, d in enumerate(delays)))  # time, then FIFO


def test_ids_count_from_zero(kernel: Kernel) -> None:
    assert [kernel.new_id() for _ in range(3)] == [0, 1, 2]


def test_every_label_has_a_recorder_method() -> None:
    assert set(METHODS) == set(LABELS)
    for name in METHODS.values():
        assert callable(getattr(Recorder, name)), name


OWNER = owner_fragment('"w"', 3, '"k"', 7, '"read_it"')
#: the hop a -> g in MCP (a link of constant latency)
A_TO_G = Hop(LinkState("a", "g", {"MCP": 0.25}, 0.0), 0.25, "MCP", "a", "g")


def test_hop_line(kernel: Kernel) -> None:
    rec = kernel.recorder
    rec.hop(0.1234567, OWNER, 5, A_TO_G)
    (line,) = lines(kernel)
    assert line == {
        "t": 0.123457,
        "seq": 0,
        "rep": 0,
        "label": "hop",
        "agent": "a",
        "wf": "w",
        "inst": 3,
        "task": "k",
        "inv": 7,
        "tool": "read_it",
        "proto": "MCP",
        "detail": {"msg": 5, "from": "a", "proto": "MCP", "to": "g"},
    }
    assert line_problems(line) == []
    assert kernel.metrics.hops == 0  # the transport counts the hops (counted)


@pytest.mark.parametrize("level", ["protocol", "off"])
def test_levels_keep_counting_but_write_less(level: str) -> None:
    k = make_kernel(level)
    rec = k.recorder
    rec.metrics.counted(3, 2, 1)
    rec.drop(2.0, '"g"', OWNER, '"MCP"', 5, "link_down")
    written = [x["label"] for x in lines(k)]
    assert written == ([] if level == "off" else ["drop"])
    assert (k.metrics.sent, k.metrics.delivered, k.metrics.hops) == (3, 2, 1)
    assert k.metrics.dropped == {"link_down": 1}


def test_execute_counts_writes_without_approval(kernel: Kernel) -> None:
    rec, c = kernel.recorder, WorkflowCounters()
    rec.execute(3.0, '"s"', OWNER, '"MCP"', 1, 0.5, True, False, c)
    rec.execute(4.0, '"s"', OWNER, '"MCP"', 2, 0.0, True, True, c)
    rec.execute(5.0, '"s"', OWNER, '"MCP"', 1, 0.0, False, False, c)
    details = [x["detail"] for x in lines(kernel)]
    assert details == [
        {"attempt": 1, "waited": 0.5, "approved": False},
        {"attempt": 2, "waited": 0.0, "approved": True},
        {"attempt": 1, "waited": 0.0},
    ]
    m = kernel.metrics
    assert (m.executions, m.writes_executed, m.writes_without_approval) == (3, 2, 1)
    assert (c.executions, c.writes_executed, c.writes_without_approval) == (3, 2, 1)


def test_wf_end_sorts_outcomes_and_latencies(kernel: Kernel) -> None:
    rec, c = kernel.recorder, WorkflowCounters()
    rec.wf_end(1.0, '"a"', '"w"', 0, "succeeded", 1.0, "", c)
    rec.wf_end(2.0, '"a"', '"w"', 1, "cancelled", 2.0, "denied", c)
    rec.wf_end(3.0, '"a"', '"w"', 2, "failed", 3.0, "timeout", c)
    got = [(x["inst"], x["task"], x["detail"]) for x in lines(kernel)]
    assert got == [
        (0, None, {"status": "succeeded", "latency": 1.0}),
        (1, None, {"status": "cancelled", "latency": 2.0, "reason": "denied"}),
        (2, None, {"status": "failed", "latency": 3.0, "reason": "timeout"}),
    ]
    m = kernel.metrics
    assert (m.wf_succeeded, m.wf_cancelled, m.wf_failed, list(m.latencies)) == (1, 1, 1, [1.0])
    assert (c.succeeded, c.cancelled, c.failed, c.latency_sum) == (1, 1, 1, 1.0)


def test_seq_counts_and_time_is_rounded_to_microseconds(kernel: Kernel) -> None:
    rec = kernel.recorder
    for t in (0.0, 1e-7, 2.0000004, 2.0000006):
        rec.node_down(t, '"g"')
    got = [(x["seq"], x["t"], x["wf"], x["proto"]) for x in lines(kernel)]
    assert got == [
        (0, 0.0, None, None),
        (1, 0.0, None, None),
        (2, 2.0, None, None),
        (3, 2.000001, None, None),
    ]
    assert kernel.metrics.outages == 4
    assert NULL == "null"
