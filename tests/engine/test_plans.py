"""Invocation plans, transition tables, owner parts and trace blocks, each alone."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.calculus.lts import LTS, TAU
from sim.calculus.mcp import ALL_FIELDS
from sim.calculus.mcp.dialects import BUILTIN, MCP, Dialect
from sim.calculus.mcp.model import Tool, ToolPlus
from sim.calculus.mcp.view import ToolView
from sim.engine.bugs import EngineBug
from sim.engine.invocation import Plan
from sim.engine.metrics import Metrics
from sim.engine.paths import Hop
from sim.engine.randomness import sampler
from sim.engine.recorder import Recorder
from sim.engine.topology import LinkState
from sim.engine.trace import TraceWriter, js, members, owner_fragment, owner_parts
from sim.engine.views import ToolRT, ViewRT, make_view, transition_table
from sim.engine.workflows import WorkflowRT
from sim.scenario.model import Scenario

names = st.text(min_size=0, max_size=8)


@given(names, names, names, st.integers(0, 10**9), st.integers(0, 10**9))
def test_owner_parts_around_the_ids_are_the_owner_fragment(
    wf: str, task: str, tool: str, inst: int, inv: int
) -> None:
    head, mid, tail = owner_parts(js(wf), js(task), js(tool))
    assert f"{head}{inst}{mid}{inv}{tail}" == owner_fragment(js(wf), inst, js(task), inv, js(tool))


def test_the_transition_table_steps_as_the_lts(mesh: Scenario) -> None:
    tool = ToolRT(mesh.tools[0], sampler(mesh.tools[0].service_time, random.Random(0)))
    view = make_view(tool, ALL_FIELDS, "never")
    # a nondeterministic LTS too: the first successor wins, as in LTS.step
    odd = LTS(3, 0, [(0, "a", 1), (0, "a", 2), (1, "b", 0)])
    for lts in (view.lts(True, BUILTIN["mcp"]), view.lts(False, BUILTIN["sgd"]), odd):
        table = transition_table(lts)
        labels = [*sorted(lts.labels), "nope"]
        for s in range(lts.n_states):
            assert {lab: table[s].get(lab) for lab in labels} == {
                lab: lts.step(s, lab) for lab in labels
            }
    assert view.table(view.lts(True, MCP)) is view.table(view.lts(True, MCP))


def plan_parts(mesh: Scenario, fields: frozenset[str]) -> tuple[WorkflowRT, ToolRT, ViewRT]:
    wf = WorkflowRT(mesh.workflows[0], ("a",), mesh.dialects())
    tool = ToolRT(mesh.tools[0], sampler(mesh.tools[0].service_time, random.Random(0)))
    return wf, tool, make_view(tool, fields, "never")


def test_a_plan_walks_call_and_tau_once(mesh: Scenario) -> None:
    wf, _, view = plan_parts(mesh, ALL_FIELDS)
    task = wf.tasks[0]  # read_it with its required id
    plan = Plan(task, view, False)  # type: ignore[arg-type]
    lts = plan.lts
    assert plan.opened == lts.step(lts.initial, view.labels.call)  # type: ignore[attr-defined]
    assert plan.validated == lts.step(plan.opened, TAU)
    assert plan.missing == () and not plan.collects and not plan.gate
    assert (plan.head, plan.mid, plan.tail) == owner_parts(task.wfj, task.j, '"read_it"')


def test_a_plan_without_the_required_argument_says_what_is_missing(mesh: Scenario) -> None:
    wf, _, view = plan_parts(mesh, ALL_FIELDS)
    task = wf.tasks[0]
    task.args = {}  # the schema requires id
    plan = Plan(task, view, False)  # type: ignore[arg-type]
    assert plan.missing == ("id",) and plan.missingj == ',"missing":["id"]'
    assert plan.validated == -1


class Stuck(Dialect):
    """A dialect whose LTS enables nothing (a broken plug-in)."""

    name = "stuck"

    def lts(
        self,
        tool: Tool | ToolPlus | ToolView,
        *,
        approval: bool | None = None,
        error_types: Sequence[str] = (),
    ) -> LTS:
        return LTS(1, 0, [])


def test_a_plan_refuses_a_label_the_lts_does_not_enable(mesh: Scenario) -> None:
    wf, _, view = plan_parts(mesh, ALL_FIELDS)
    task = wf.tasks[0]
    task.dialect = Stuck()
    with pytest.raises(EngineBug, match=r"'call\(read_it\)' is not enabled in state 0"):
        Plan(task, view, False)


def test_trace_blocks_end_between_instants_once_full() -> None:
    sink = io.StringIO()
    writes: list[int] = []

    class Counting(io.StringIO):
        def write(self, text: str, /) -> int:
            writes.append(text.count("\n"))
            return sink.write(text)

    rec = Recorder(TraceWriter(Counting(), 0, "full", buffer_lines=3), Metrics())
    for t in (1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0):
        rec.node_down(t, '"g"')
    rec.flush()
    # the buffer is full at t=2.0's first line, but a block ends only when the clock moves
    assert writes == [6, 1]
    assert [json.loads(line)["seq"] for line in sink.getvalue().splitlines()] == list(range(7))


@given(names, names, names)
def test_a_hops_line_text_is_its_members(frm: str, to: str, proto: str) -> None:
    hop = Hop(LinkState(frm, to, {proto: 0.5}, 0.0), 0.5, proto, frm, to)
    assert hop.tail == f",{members({'from': frm, 'to': to, 'proto': proto})}}}}}\n"
    assert (hop.at, hop.via) == (f"{js(frm)},", f',"proto":{js(proto)},"detail":')
