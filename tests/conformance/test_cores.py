"""The pure cores of write_approval, requires_order and exclusive (issue 34 item 1): each
check class streams its core, so the core folded over each scope's events alone flags
exactly the scopes the class flags, on every mutated train_booking trace and on
generated traces; the cores' states are marshal-canonical (verify digests them)."""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim.conformance.checks import CORES, Core, base, check_trace
from sim.conformance.checks.order import RequiresCore
from sim.conformance.checks.write_approval import WriteApprovalCore
from sim.conformance.truth import Truth, from_scenario
from sim.scenario import load_scenario

TRAIN = Path(__file__).resolve().parents[2] / "scenarios" / "train_booking.yaml"
NAMES = tuple(CORES)
Events = list[dict[str, Any]]

_TRUTH: list[Truth] = []


def _truth() -> Truth:
    if not _TRUTH:
        _TRUTH.append(from_scenario(load_scenario(TRAIN)))
    return _TRUTH[0]


def _scope_of(core: Core) -> Callable[[dict[str, Any]], Any]:
    if core.scope == "invocation":
        return lambda e: e.get("inv")
    return lambda e: (e.get("wf"), e.get("inst"))


def _by_cores(events: Events, truth: Truth) -> dict[str, set[Any]]:
    """The scopes each core flags, folding ``step`` over each scope's events alone."""
    out: dict[str, set[Any]] = {}
    for name, core_of in CORES.items():
        core = core_of(truth)
        key_of = _scope_of(core)
        states: dict[Any, Any] = {}
        flagged: set[Any] = set()
        for e in events:
            key = key_of(e)
            if key is None or key == (None, None):
                continue
            st0 = states.get(key, core.initial)
            states[key], bad = core.step(st0, e["label"], e.get("tool"), e.get("task"), e.get("wf"))
            if bad:
                flagged.add(key)
            if e["label"] == "wf_end" and core.scope == "instance":
                states.pop(key, None)
        out[name] = flagged
    return out


def _by_classes(events: Events, truth: Truth) -> dict[str, set[Any]]:
    """The scopes each check class flags in one streaming pass (a spy on violations)."""
    found: dict[str, set[Any]] = {n: set() for n in NAMES}
    original = base.Check.violation

    def spy(self: base.Check, message: str, raws: Any, seq: int, wf: Any = None) -> None:
        raws = list(raws)
        last = json.loads(raws[-1])
        key = last["inv"] if self.name == "write_approval" else (last["wf"], last["inst"])
        found[self.name].add(key)
        original(self, message, raws, seq, wf)

    with mock.patch.object(base.Check, "violation", spy):
        check_trace(events, truth, NAMES)
    return found


def test_the_core_flags_what_its_class_flags_on_each_mutated_trace(
    train_mutations: dict[str, Events],
) -> None:
    truth = _truth()
    assert len(train_mutations) == 12  # the unmutated trace and eleven mutations
    for mutation, events in train_mutations.items():
        by_class = _by_classes(events, truth)
        assert _by_cores(events, truth) == by_class, mutation
        flagged = {n: len(s) for n, s in by_class.items()}
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
# strategies built once (one built in each drawing is validated again each time)
_WORKFLOWS = st.sampled_from(["book", "elsewhere"])
_TOOL_DRAWS = st.sampled_from(_TOOLS)
_TASK_DRAWS = st.sampled_from(_TASKS)
_STEPS = {
    n: st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(_LABELS))) for n in (1, 2, 3)
}


@st.composite
def _instances(draw: st.DrawFn) -> Events:
    """Up to 3 instances of up to 3 invocations of train_booking's tools, each a random
    sequence of protocol labels (most of them damaged)."""
    events: Events = []
    inv = 0
    for inst in range(draw(st.integers(1, 3))):
        wf = draw(_WORKFLOWS)
        invs = [
            (inv + k, draw(_TOOL_DRAWS), draw(_TASK_DRAWS)) for k in range(draw(st.integers(1, 3)))
        ]
        inv += len(invs)
        events.append({"t": 0.0, "label": "wf_start", "wf": wf, "inst": inst})
        for which, label in draw(_STEPS[len(invs)]):
            i, tool, task = invs[which]
            events.append(
                {"t": 0.0, "label": label, "wf": wf, "inst": inst, "inv": i}
                | {"tool": tool, "task": task}
            )
        events.append({"t": 0.0, "label": "wf_end", "wf": wf, "inst": inst})
    for seq, e in enumerate(events):
        e["seq"] = seq
        e.setdefault("detail", {})
    return events


def _instance(*steps: tuple[str, str, str]) -> Events:
    """One instance of workflow ``book``: (label, tool, task) steps, an invocation each."""
    body = [
        {"label": lab, "wf": "book", "inst": 0, "inv": k, "tool": tool, "task": task}
        for k, (lab, tool, task) in enumerate(steps)
    ]
    events = [{"label": "wf_start", "wf": "book", "inst": 0}, *body]
    events.append({"label": "wf_end", "wf": "book", "inst": 0})
    return [e | {"t": 0.0, "seq": seq, "detail": {}} for seq, e in enumerate(events)]


@settings(max_examples=80, deadline=None)
@given(_instances())
@example(  # successes with no call before them: the first events of the instance's state
    _instance(
        ("result", "check_balance", "bal"),
        ("result", "fetch_user", "user"),
        ("execute", "book_train", "book"),
    )
)
@example(_instance(("execute", "print_ticket", "p"), ("execute", "send_ticket", "s")))
def test_the_core_flags_what_its_class_flags_on_generated_traces(events: Events) -> None:
    truth = _truth()
    assert _by_cores(events, truth) == _by_classes(events, truth)


def test_write_approval_core_names_the_unapproved_execute() -> None:
    core = WriteApprovalCore(frozenset({"book"}))
    st0 = core.initial
    st1, bad = core.step(st0, "execute", "book", "t", "w")
    assert bad and st1 is False
    st2, _ = core.step(st0, "approve", "book", "t", "w")
    assert core.step(st2, "execute", "book", "t", "w") == (False, False)
    assert core.step(st0, "execute", "read_only", "t", "w") == (False, False)


def test_requires_core_defers_a_missing_success_until_its_first_call() -> None:
    core = RequiresCore({"b": ["a"]}, {"w": frozenset({"b"})})
    st0, missing = core.on_execute(core.initial, "w", "b")
    assert missing == ()  # a is not (yet) part of the instance
    st1, late = core.on_call(st0, "k", "a")
    assert late  # now it is: the execute of b lacked it
    st2, missing = core.on_execute(st1, "w", "b")
    assert missing == (("a", True),)  # called, still no success
    st3 = core.on_result(st2, "k", "x")  # a success of the task that called a
    assert core.on_execute(st3, "w", "b")[1] == ()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["k0", "k1", 3, None]), st.sampled_from(["a", "c", "x"])),
        max_size=6,
    ),
    st.randoms(use_true_random=False),
)
def test_requires_states_are_the_same_bytes_whatever_the_call_order(
    calls: list[tuple[Any, str]], rng: Any
) -> None:
    """The state after a set of calls does not depend on their order: ``verify``'s
    digest (marshal) of equal states is equal."""
    core = RequiresCore({"b": ["a", "c"]}, {})
    shuffled = list(calls)
    rng.shuffle(shuffled)
    ends = []
    for order in (calls, shuffled):
        st0 = core.initial
        for task, tool in order:
            st0, _ = core.on_call(st0, task, tool)
        ends.append(st0)
    assert marshal.dumps(ends[0], 2) == marshal.dumps(ends[1], 2)
    assert marshal.loads(marshal.dumps(ends[0], 2)) == ends[0]


@pytest.mark.parametrize("name", NAMES)
def test_each_check_class_steps_its_named_core(name: str) -> None:
    from sim.conformance.checks import ALL_CHECKS, Context

    truth = _truth()
    check = ALL_CHECKS[name](truth, Context())
    core = CORES[name](truth)
    assert type(getattr(check, "core")) is type(core)  # noqa: B009 (the classes' attribute)
    assert tuple(check.labels) == tuple(core.labels)
