"""The checks of SPEC §6 as formulas: on every mutated train_booking trace and on generated
traces, each built-in check and its formula flag exactly the same scopes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import base, check_trace
from sim.conformance.truth import Truth, from_scenario
from sim.properties import Monitor, Property, ToolAttributes
from sim.properties.builtin import WRITE_APPROVAL, exclusive, requires_order
from sim.scenario import Scenario, load_scenario
from sim.scenario.properties import builtin_for, tool_attributes

TRAIN = Path(__file__).resolve().parents[2] / "scenarios" / "train_booking.yaml"

NAMES = ("write_approval", "requires_order", "exclusive")
Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def train() -> Scenario:
    return load_scenario(TRAIN)


_COMPILED: dict[int, tuple[Truth, list[Property], dict[str, ToolAttributes]]] = {}


def _compiled(scenario: Scenario) -> tuple[Truth, list[Property], dict[str, ToolAttributes]]:
    """The ground truth and the formulas of ``scenario``, built once per scenario."""
    key = id(scenario)
    if key not in _COMPILED:
        _COMPILED[key] = (from_scenario(scenario), builtin_for(scenario), tool_attributes(scenario))
    return _COMPILED[key]


def _flagged(events: Events, scenario: Scenario) -> tuple[dict[str, set[Any]], dict[str, set[Any]]]:
    """(scopes each check flags, scopes each formula flags), from one pass."""
    by_check: dict[str, set[Any]] = {n: set() for n in NAMES}
    original = base.Check.violation

    def spy(self: base.Check, message: str, raws: Any, seq: int, wf: Any = None) -> None:
        raws = list(raws)
        last = json.loads(raws[-1])
        key = last["inv"] if self.name == "write_approval" else (last["wf"], last["inst"])
        by_check[self.name].add(key)
        original(self, message, raws, seq, wf)

    truth, props, tools = _compiled(scenario)
    monitor = Monitor(props, tools, record=True)
    with mock.patch.object(base.Check, "violation", spy):
        check_trace(events, truth, NAMES, consumers=[monitor])
    by_formula = {v.name: set(v.violated) for v in monitor.finish()}
    return by_check, by_formula


def test_the_formulas_are_the_documented_ones(train: Scenario) -> None:
    props = {p.name: p for p in builtin_for(train)}
    assert props["write_approval"].text == WRITE_APPROVAL
    assert props["exclusive"].text == "G !(O execute(print_ticket) & O execute(send_ticket))"
    assert exclusive([]) is None and requires_order({}, {}, []) is None
    assert {p.scope for p in props.values()} == {"invocation", "instance"}


def test_check_and_formula_flag_the_same_scopes_on_each_mutated_trace(
    train_mutations: dict[str, Events], train: Scenario
) -> None:
    assert len(train_mutations) == 12  # the unmutated trace and eleven mutations
    for mutation, events in train_mutations.items():
        by_check, by_formula = _flagged(events, train)
        assert by_formula == by_check, mutation
        flagged = {n: len(s) for n, s in by_check.items()}
        if mutation == "none":
            assert flagged == dict.fromkeys(NAMES, 0)
        if mutation == "drop_approve":
            assert flagged["write_approval"] == 1
        if mutation == "swap_required":
            assert flagged["requires_order"] >= 1
        if mutation == "both_exclusive":
            assert flagged["exclusive"] == 1
        if mutation == "no_approvals":
            assert flagged["write_approval"] > 10


_LABELS = ["call", "invoke", "validate", "approve", "execute", "result", "error", "retry"]
_TOOLS = ["fetch_user", "check_balance", "book_train", "send_ticket", "print_ticket"]
_TASKS = ["user", "bal", "book", "send"]


# The strategies whose arguments never change, built once (a strategy built in each drawing
# is validated again each time); the drawings are the same.
_WORKFLOWS = st.sampled_from(["book", "elsewhere"])
_TOOL_DRAWS = st.sampled_from(_TOOLS)
_TASK_DRAWS = st.sampled_from(_TASKS)
_STEPS = {
    n: st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(_LABELS))) for n in (1, 2, 3)
}
_GAPS = st.sampled_from([0.0, 0.5])


@st.composite
def _instances(draw: st.DrawFn) -> Events:
    events: Events = []
    t = 0.0
    inv = 0
    for inst in range(draw(st.integers(1, 3))):
        wf = draw(_WORKFLOWS)
        invs = [
            (inv + k, draw(_TOOL_DRAWS), draw(_TASK_DRAWS)) for k in range(draw(st.integers(1, 3)))
        ]
        inv += len(invs)
        events.append({"t": t, "label": "wf_start", "wf": wf, "inst": inst})
        steps = draw(_STEPS[len(invs)])
        for which, label in steps:
            t += draw(_GAPS)
            i, tool, task = invs[which]
            events.append(
                {
                    "t": t,
                    "label": label,
                    "wf": wf,
                    "inst": inst,
                    "inv": i,
                    "tool": tool,
                    "task": task,
                }
            )
        events.append({"t": t, "label": "wf_end", "wf": wf, "inst": inst})
    for seq, e in enumerate(events):
        e["seq"] = seq
        e.setdefault("detail", {})
    return events


_TRAIN: list[Scenario] = []


@settings(max_examples=80, deadline=None)  # make fuzz draws new ones each round
@given(_instances())
def test_check_and_formula_flag_the_same_scopes_on_generated_traces(events: Events) -> None:
    if not _TRAIN:
        _TRAIN.append(load_scenario(TRAIN))
    by_check, by_formula = _flagged(events, _TRAIN[0])
    assert by_formula == by_check
