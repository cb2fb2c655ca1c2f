"""Tool discovery's timers: a ``list`` answered in time costs no event of its own (its
timeout is a cancelled :class:`~sim.engine.clock.Deadlines` timer), and one that is not
answered still times out at ``list_timeout`` (``sim.engine.discovery``)."""

from __future__ import annotations

import io
import json
import textwrap
from typing import Any

from sim.engine.guard import UNBOUNDED
from sim.engine.simulation import Replication
from sim.engine.trace import TraceWriter
from sim.scenario import parse_scenario
from tests.harness.engine_parts import MESH


def run(mesh_text: str) -> tuple[list[float], list[dict[str, Any]]]:
    """Run ``mesh_text``; (the times the discoveries' timer callbacks ran, the lines)."""
    scenario, _ = parse_scenario(textwrap.dedent(mesh_text))
    sink = io.StringIO()
    world = Replication(scenario, "dijkstra", 0, TraceWriter(sink, 0, "protocol"), guard=UNBOUNDED)
    fired: list[float] = []
    for known in world.workflows.known.values():
        inner = known._timer_cb

        def timer(event: Any, inner: Any = inner) -> None:
            fired.append(world.env.now)
            inner(event)

        known._timer_cb = timer
    world.run()
    world.recorder.flush()
    return fired, [json.loads(x) for x in sink.getvalue().splitlines()]


def test_an_answered_list_runs_no_timer() -> None:
    fired, lines = run(MESH)
    assert [x["label"] for x in lines].count("list") == 2  # read_it and write_it
    assert fired == []  # both timers were cancelled by the replies


def test_an_unanswered_list_times_out_after_list_timeout() -> None:
    # the server is down from the start: no reply, three attempts 5 s apart (timeout: 5)
    down = MESH + "failures:\n  - {node: s, at: 0, for: 1000}\n"
    fired, lines = run(down)
    timeouts = [(x["t"], x["detail"]["action"]) for x in lines if x["label"] == "timeout"]
    assert timeouts == [(5.0, "resend"), (10.0, "resend"), (15.0, "give_up")]
    assert fired == [5.0, 10.0, 15.0]
