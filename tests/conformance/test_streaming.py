"""Hypothesis: the streaming ``write_approval`` and ``requires_order`` agree with simple
whole-trace references (written here from SPEC §6, not from the checks' code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import check_trace
from sim.conformance.truth import ToolFacts, Truth

TRUTH = Truth(
    tools={
        "A": ToolFacts("A", write=True, requires=("B",)),
        "B": ToolFacts("B", write=False),
        "C": ToolFacts("C", write=True, requires=("D",)),
        "D": ToolFacts("D", write=True),
    },
    workflow_tools={"w1": frozenset({"B"}), "w2": frozenset()},
)
REQUIRES = {"A": ("B",), "C": ("D",)}
WRITE = {"A", "C", "D"}

_step = st.tuples(
    st.sampled_from(["call", "approve", "execute", "result", "error", "validate"]),
    st.integers(0, 3),  # invocation slot within the instance
    st.sampled_from(["A", "B", "C", "D"]),
    st.sampled_from(["t1", "t2", "t3"]),
)
_instance = st.tuples(st.sampled_from(["w1", "w2"]), st.lists(_step, max_size=25))


@st.composite
def traces(draw: Any) -> list[dict[str, Any]]:
    instances = draw(st.lists(_instance, min_size=1, max_size=5))
    queues = []
    for i, (wf, steps) in enumerate(instances):
        evs = [{"label": "wf_start", "wf": wf, "inst": i, "inv": None, "tool": None, "task": None}]
        evs += [
            {"label": lab, "wf": wf, "inst": i, "inv": 10 * i + slot, "tool": tool, "task": task}
            for lab, slot, tool, task in steps
        ]
        evs.append(
            {
                "label": "wf_end",
                "wf": wf,
                "inst": i,
                "inv": None,
                "tool": None,
                "task": None,
                "detail": {"status": "succeeded"},
            }
        )
        queues.append(evs)
    out: list[dict[str, Any]] = []
    while any(queues):
        live = [q for q in queues if q]
        q = live[draw(st.integers(0, len(live) - 1))]
        out.append(q.pop(0))
    for k, e in enumerate(out):
        e["seq"] = k
        e["t"] = float(k)
    return out


def ref_write_approval(trace: list[dict[str, Any]]) -> int:
    """``H(execute → Y(¬execute S approve))`` per invocation, by looking back."""
    bad = 0
    for k, e in enumerate(trace):
        if e["label"] != "execute" or e["tool"] not in WRITE:
            continue
        before = [
            x
            for x in trace[:k]
            if x["inv"] == e["inv"] and x["label"] in ("approve", "execute") and x["tool"] in WRITE
        ]
        if not before or before[-1]["label"] != "approve":
            bad += 1
    return bad


def ref_requires(trace: list[dict[str, Any]]) -> int:
    bad = 0
    for k, e in enumerate(trace):
        if e["label"] != "execute" or e["tool"] not in REQUIRES:
            continue
        mine = [x for x in trace if (x["wf"], x["inst"]) == (e["wf"], e["inst"])]
        upto = [x for x in trace[:k] if (x["wf"], x["inst"]) == (e["wf"], e["inst"])]
        for tj in REQUIRES[e["tool"]]:
            succeeded = False
            for r, x in enumerate(upto):
                if x["label"] != "result":
                    continue
                tools = {
                    y["tool"] for y in upto[:r] if y["label"] == "call" and y["task"] == x["task"]
                } | {x["tool"]}
                succeeded = succeeded or tj in tools
            occurs = tj in TRUTH.workflow_tools[e["wf"]] or any(
                y["label"] == "call" and y["tool"] == tj for y in mine
            )
            if not succeeded and occurs:
                bad += 1
    return bad


@settings(max_examples=150, deadline=None)
@given(traces())
def test_streaming_agrees_with_whole_trace_references(trace: list[dict[str, Any]]) -> None:
    report = check_trace(trace, TRUTH, ["write_approval", "requires_order"])
    assert report.verdict("write_approval").violations == ref_write_approval(trace)
    assert report.verdict("requires_order").violations == ref_requires(trace)


def test_state_is_dropped_when_instances_end() -> None:
    """Per-instance and per-invocation state does not outlive ``wf_end``."""
    from sim.conformance import checks as c
    from sim.conformance.checks.order import RequiresOrder
    from sim.conformance.checks.write_approval import WriteApproval

    ctx = c.Context()
    wa, ro = WriteApproval(TRUTH, ctx), RequiresOrder(TRUTH, ctx)
    trace = []
    for i in range(200):
        trace += [
            {"seq": 0, "label": "call", "wf": "w1", "inst": i, "inv": i, "tool": "A", "task": "t"},
            {
                "seq": 0,
                "label": "approve",
                "wf": "w1",
                "inst": i,
                "inv": i,
                "tool": "A",
                "task": "t",
            },
            {"seq": 0, "label": "wf_end", "wf": "w1", "inst": i},
        ]
    blocks = [[c.encode_event(e) for e in trace]]
    c.run_pass("t", blocks, [wa, ro], ctx)
    assert not wa.approved and not ro.inst and not ctx.hist


def test_order_is_enforced_for_files_and_on_request_only(tmp_path: Path) -> None:
    """SPEC §5 order is required of a trace file; an iterable (converted SGD dialogues
    restart ``t`` at each dialogue) is checked for it only when asked."""
    from sim.conformance.checks import TraceError

    events = [
        {"t": 2.0, "seq": 0, "label": "wf_start", "wf": "w1", "inst": 0},
        {"t": 1.0, "seq": 1, "label": "wf_end", "wf": "w1", "inst": 0},
    ]
    assert check_trace(events, TRUTH).events == 2
    with pytest.raises(TraceError, match=r"<trace>:2: not in time order: `t` 1\.0"):
        check_trace(events, TRUTH, ordered=True)
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(TraceError, match=r"trace\.jsonl:2: not in time order"):
        check_trace(path, TRUTH)
    assert check_trace(path, TRUTH, ordered=False).events == 2


class _Recorder:
    """A consumer beside the checks: records what the pass hands it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, bytes]] = []
        self.ended: list[tuple[Any, list[Any]]] = []
        self.trace_ended = 0

    def handlers(self) -> dict[str, Any]:
        return {"execute": self.on_event, "wf_end": self.on_event}

    def on_event(self, ev: Any, raw: bytes) -> None:
        self.seen.append((ev.label, ev.seq, raw))

    def end_instance(self, key: Any, invs: Any) -> None:
        self.ended.append((key, list(invs)))

    def end_trace(self) -> None:
        self.trace_ended += 1


def test_a_plugged_in_consumer_gets_its_labels_in_the_same_pass() -> None:
    trace = [
        {"seq": 0, "label": "wf_start", "wf": "w1", "inst": 1},
        {"seq": 1, "label": "call", "wf": "w1", "inst": 1, "inv": 7, "tool": "A", "task": "t"},
        {"seq": 2, "label": "execute", "wf": "w1", "inst": 1, "inv": 7, "tool": "A", "task": "t"},
        {"seq": 3, "label": "result", "wf": "w1", "inst": 1, "inv": 7, "tool": "A", "task": "t"},
        {"seq": 4, "label": "wf_end", "wf": "w1", "inst": 1},
    ]
    rec = _Recorder()
    report = check_trace(trace, TRUTH, ["write_approval"], consumers=[rec])
    assert [(lab, seq) for lab, seq, _ in rec.seen] == [("execute", 2), ("wf_end", 4)]
    assert json.loads(rec.seen[0][2])["inv"] == 7
    assert rec.ended == [(("w1", 1), [7])]
    assert rec.trace_ended == 1
    # the check beside it saw the unapproved write of A
    assert report.verdict("write_approval").violations == 1
    # beside a check that keeps no history, the instance's invocations still reach it
    alone = _Recorder()
    check_trace(trace, TRUTH, ["conservation"], consumers=[alone])
    assert alone.ended == rec.ended and alone.seen == rec.seen


class _HistoryProbe:
    """Records how many invocation histories the pass keeps at each ``execute``."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.sizes: list[int] = []

    def handlers(self) -> dict[str, Any]:
        return {"execute": lambda ev, raw: self.sizes.append(len(self.ctx.hist))}

    def end_instance(self, key: Any, invs: Any) -> None:
        pass

    def end_trace(self) -> None:
        pass


def test_invocation_histories_are_kept_only_for_a_check_that_reads_them() -> None:
    from sim.conformance import checks as c
    from sim.conformance.checks.conservation import Conservation
    from sim.conformance.checks.write_approval import WriteApproval

    trace = [
        {"seq": 0, "label": "call", "wf": "w1", "inst": 0, "inv": 1, "tool": "A", "task": "t"},
        {"seq": 1, "label": "execute", "wf": "w1", "inst": 0, "inv": 1, "tool": "A", "task": "t"},
        {"seq": 2, "label": "result", "wf": "w1", "inst": 0, "inv": 1, "tool": "A", "task": "t"},
    ]
    blocks = [[c.encode_event(e) for e in trace]]
    for check, kept in ((WriteApproval, [1]), (Conservation, [0])):
        ctx = c.Context()
        probe = _HistoryProbe(ctx)
        c.run_pass("t", blocks, [check(TRUTH, ctx), probe], ctx)
        assert probe.sizes == kept, check.name
    # the counterexample of write_approval is the invocation's history
    report = check_trace(trace, TRUTH, ["write_approval"])
    assert [e["seq"] for e in report.verdict("write_approval").counterexample] == [0, 1]
