"""The streaming monitor: scopes, closing at wf_end, online and at-end verdicts, counter-
examples with seq, bounded memory, and the package's dependency rule."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.properties import Monitor, Property, ToolAttributes, parse
from sim.properties.monitor import HEAD, TAIL

TOOLS = {"book": ToolAttributes("write", True), "look": ToolAttributes("read", False)}
KEYS = ("t", "seq", "label", "agent", "wf", "inst", "task", "inv", "tool", "proto")


def _ev(seq: int, label: str, t: float = 0.0, **kw: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"t": t, "seq": seq, "label": label, "detail": {}}
    for k in KEYS[3:]:
        e[k] = kw.pop(k, None)
    e["detail"] = kw.pop("detail", {})
    assert not kw
    return e


def _run(props: list[Property], events: list[dict[str, Any]]) -> list[Any]:
    mon = Monitor(props, TOOLS, record=True)
    for e in events:
        ns = SimpleNamespace(**{k: e.get(k) for k in KEYS})
        mon.step(ns, json.dumps(e).encode())
    return mon.finish()


def _prop(name: str, scope: str, text: str) -> Property:
    return Property(name, scope, parse(text, tools=TOOLS), text)


def _invocation(inv: int, inst: int, labels: list[str], seq0: int, t0: float = 0.0) -> list[Any]:
    return [
        _ev(seq0 + k, lab, t0 + k, wf="w", inst=inst, inv=inv, tool="book", task="b")
        for k, lab in enumerate(labels)
    ]


APPROVED = "G (execute(side_effects={write,delete}) -> Y (!execute S approve))"


def test_approval_per_execution_flags_only_the_unapproved_invocation() -> None:
    events = [
        _ev(0, "wf_start", 0.0, wf="w", inst=1),
        *_invocation(10, 1, ["call", "validate", "approve", "execute", "result"], 1),
        *_invocation(11, 1, ["call", "validate", "execute", "result"], 6, 10.0),
        _ev(10, "wf_end", 20.0, wf="w", inst=1, detail={"status": "succeeded"}),
    ]
    (v,) = _run([_prop("approved", "invocation", APPROVED)], events)
    assert (v.examined, v.violations, v.violated) == (2, 1, [11])
    assert "invocation 11: the invariant fails at seq 8" in v.message
    assert [e["seq"] for e in v.counterexample] == [6, 7, 8]  # up to the certain point


def test_a_retry_needs_a_new_approval() -> None:
    labels = ["call", "validate", "approve", "execute", "error", "retry", "call", "validate"]
    events = _invocation(5, 1, [*labels, "execute", "result"], 0)
    (v,) = _run([_prop("approved", "invocation", APPROVED)], events)
    assert v.violated == [5] and "fails at seq 8" in v.message


def test_bounded_response_is_decided_at_the_scope_end_with_its_events() -> None:
    prop = _prop("answered", "invocation", "G (call -> F[<=30] (result | error))")
    fast = _invocation(1, 1, ["call", "validate", "execute", "result"], 0)
    slow = [
        _ev(4, "call", 0.0, inv=2, inst=2, wf="w"),
        _ev(5, "execute", 1.0, inv=2, inst=2, wf="w"),
        _ev(6, "result", 31.0, inv=2, inst=2, wf="w"),
        _ev(7, "wf_end", 32.0, inst=2, wf="w"),
    ]
    (v,) = _run([prop], fast + slow)
    assert v.examined == 2 and v.violated == [2]
    assert [e["seq"] for e in v.counterexample] == [4, 5, 6]
    assert "invariant fails at seq 4" in v.message


def test_instance_and_run_scopes() -> None:
    events = [
        _ev(0, "wf_start", 0.0, wf="w", inst=1),
        _ev(1, "execute", 1.0, wf="w", inst=1, inv=1, tool="book"),
        _ev(2, "wf_end", 2.0, wf="w", inst=1, detail={"status": "succeeded"}),
        _ev(3, "wf_start", 3.0, wf="w", inst=2),
        _ev(4, "wf_end", 4.0, wf="w", inst=2, detail={"status": "failed"}),
        _ev(5, "node_down", 5.0, agent="gw"),
    ]
    booked = _prop("booked", "instance", "F execute(book)")
    failed = _prop("no-failure", "run", "G !wf_end(detail.status=failed)")
    down = _prop("down-last", "run", "F (node_down(agent=gw) & !X true)")
    vb, vf, vd = _run([booked, failed, down], events)
    assert (vb.examined, vb.violated) == (2, [("w", 2)])
    assert (vf.examined, vf.violated) == (1, [None]) and "fails at seq 4" in vf.message
    assert (vd.examined, vd.violations) == (1, 0)


def test_an_instance_scope_closes_at_wf_end_and_frees_its_state() -> None:
    mon = Monitor([_prop("booked", "instance", "F execute(book)")], TOOLS)
    events = [_ev(0, "wf_start", wf="w", inst=1), _ev(1, "wf_end", wf="w", inst=1)]
    for e in events:
        mon.step(SimpleNamespace(**{k: e.get(k) for k in KEYS}), json.dumps(e).encode())
    assert not mon.groups["instance"].open
    (v,) = mon.finish()
    assert v.violations == 1


def test_memory_is_bounded_by_open_scopes_not_trace_length() -> None:
    prop = _prop("answered", "invocation", "G (call -> F[<=30] result)")
    mon = Monitor([prop], TOOLS)
    seq = 0
    for inst in range(300):
        for lab in ("wf_start", "call", "result", "wf_end"):
            inv = None if lab.startswith("wf") else inst
            e = _ev(seq, lab, float(seq), wf="w", inst=inst, inv=inv)
            mon.step(SimpleNamespace(**{k: e.get(k) for k in KEYS}), json.dumps(e).encode())
            seq += 1
        g = mon.groups["invocation"]
        assert len(g.open) == 0 and not mon.inv_of_inst
    (v,) = mon.finish()
    assert (v.examined, v.violations) == (300, 0)


def test_a_long_scope_keeps_its_first_and_last_events() -> None:
    events = [_ev(k, "hop", float(k), agent="a") for k in range(200)]
    (v,) = _run([_prop("no-hops", "run", "G !hop | F deny")], events)
    assert v.violations == 1
    seqs = [e["seq"] for e in v.counterexample]
    assert seqs[:HEAD] == list(range(HEAD)) and seqs[-1] == 199
    assert len(seqs) == HEAD + TAIL and v.elided == 200 - HEAD - TAIL


def test_detail_and_attribute_conditions() -> None:
    events = [
        _ev(0, "error", 0.0, inv=1, inst=1, wf="w", tool="look", detail={"error": "NotFound"}),
        _ev(1, "retry", 1.0, inv=1, inst=1, wf="w", tool="look", detail={"n": 1}),
        _ev(2, "error", 2.0, inv=2, inst=1, wf="w", tool="book", detail={"error": "ServiceDown"}),
        _ev(3, "abort", 3.0, inv=2, inst=1, wf="w", tool="book"),
    ]
    props = [
        _prop("nf", "invocation", "G (error(detail.error=NotFound) -> X retry(detail.n=1))"),
        _prop("ro", "invocation", "G (error(side_effects=read) -> X retry)"),
        _prop("wr", "invocation", "G (error(requires_approval=true) -> X retry)"),
    ]
    nf, ro, wr = _run(props, events)
    assert nf.violations == 0 and ro.violations == 0
    assert wr.violated == [2]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["call", "approve", "execute", "result"]), min_size=1, max_size=12))
def test_online_and_at_end_evaluation_agree(labels: list[str]) -> None:
    events = _invocation(1, 1, labels, 0)
    online = _prop("a", "invocation", APPROVED)
    at_end = _prop("b", "invocation", f"({APPROVED}) & F true")
    a, b = _run([online, at_end], events)
    assert a.violations == b.violations


def test_unknown_scope_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scope"):
        Monitor([Property("x", "task", parse("true"))], TOOLS)


def test_properties_import_nothing_of_ours_but_the_vocabulary_and_spelling() -> None:
    """sim.spelling is a leaf (the one did-you-mean); test_architecture holds every rule."""
    root = Path(__file__).resolve().parents[2] / "sim" / "properties"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sim"):
                assert node.module.startswith(
                    ("sim.properties", "sim.vocabulary", "sim.spelling")
                ), (
                    path,
                    node.module,
                )
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("sim") for a in node.names), path
