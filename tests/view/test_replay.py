"""The replay's detail keys (sim.view.replay.DETAIL_KEYS: a ``wf_end``'s ``status``, a
flow's ``target``/``host``), decoded by the pass with the line for the page, give the
page the data it has when they are read from the raw line (a line the pass's decoder
refuses, or a pass without them); a line decoded straight into its compact form (what
the events file is written from) is the compact form of its decoded dict."""

from __future__ import annotations

import io
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import Context, run_pass
from sim.conformance.checks.stream import Checker
from sim.conformance.events import read_blocks
from sim.scenario.model import Scenario
from sim.view.compact import compact, compact_line
from sim.view.fragment import PagePass, encode_fragment, encode_json
from sim.view.mesh import Mesh, mesh_from_scenario
from sim.view.replay import DETAIL_KEYS, FLOW_LABELS, Replay, event_count
from tests.harness.replay_alone import ReplayAlone

Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def scenario(train_scenario: Scenario) -> Scenario:
    """conftest's ``train_scenario``, the scenario of its ``train_trace``."""
    return train_scenario


@pytest.fixture(scope="module")
def odd_trace(train_trace: Events) -> list[bytes]:
    """The first 3,000 events of ``train_trace`` with odd detail keys: a ``wf_end``
    without ``status``, one with a ``null`` status, a call to a server named by a
    number past 64 bits (the decoder with the page's keys refuses it, the one without
    reads it), a call from an agent of no scenario (the scenario's interned names refuse
    it) and a call with a ``null`` target and a ``host``."""
    events = json.loads(json.dumps(train_trace[:3000]))
    ends = [e for e in events if e["label"] == "wf_end"]
    calls = [e for e in events if e["label"] == "call" and "target" in e["detail"]]
    assert len(ends) >= 2 and len(calls) >= 3
    del ends[0]["detail"]["status"]
    ends[1]["detail"]["status"] = None
    calls[0]["detail"]["target"] = 1 << 70
    calls[1]["agent"] = "an-agent-of-no-scenario"
    calls[2]["detail"]["host"] = calls[2]["detail"].pop("target")
    calls[2]["detail"]["target"] = None
    return [json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events]


def _page(scenario: Scenario) -> PagePass:
    return PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO())


def test_the_keys_decoded_in_the_pass_give_the_page_of_the_raw_lines(
    scenario: Scenario, odd_trace: list[bytes]
) -> None:
    raw_read = _page(scenario)  # the plain decoder: every key read from the raw line
    name, blocks = read_blocks(iter(odd_trace))
    run_pass(name, blocks, [raw_read], Context(), ordered=True)
    decoded = _page(scenario)  # ``run``'s pass: the keys decoded with the line
    checker = Checker("t", scenario, consumers=[decoded])
    detail = checker.loop.decode(odd_trace[-1]).detail
    assert all(hasattr(detail, key) for key, _ in DETAIL_KEYS)  # the keys are decoded
    checker.feed(odd_trace)
    checker.report()
    want, got = raw_read.fragment([]), decoded.fragment([])
    assert got == want
    statuses = got["replay"]["timeline"]["ended"]
    assert {"ended", "None"} <= set(statuses)  # the missing and the null status
    assert got["replay"]["flows"]


_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(1 << 70), 1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
)
_json = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_event = st.fixed_dictionaries(
    {"t": _json, "seq": _json, "label": _json},
    optional={
        k: _json for k in ("rep", "agent", "wf", "inst", "task", "inv", "tool", "proto", "detail")
    },
)


@settings(max_examples=30, deadline=None)
@given(_event, st.sampled_from([None, None, None, "t", "seq", "label"]), st.data())
def test_a_line_decoded_into_its_compact_form_is_the_compact_form_of_its_dict(
    event: dict[str, Any], dropped: str | None, data: st.DataObject
) -> None:
    # any values, any fields, in any order; one of the three compact reads dropped: refused
    if dropped is not None:
        del event[dropped]
    keys = data.draw(st.permutations(list(event)))
    raw = json.dumps({k: event[k] for k in keys}).encode()
    row = compact_line(raw)
    if dropped is None:
        assert row == compact(json.loads(raw))
    else:
        assert row is None  # then read in full (compact refuses it as before)


def _flows_counted(replay: Replay, events: Events) -> list[list[int]]:
    """The flows of ``events`` counted from their tuples (what the packed keys stand for)."""
    mesh, counts = replay.mesh, Counter[tuple[int, int, int, int]]()
    for e in events:
        if e["label"] not in FLOW_LABELS:
            continue
        a = mesh.node_of(e.get("agent"))
        b = mesh.node_of(e["detail"].get("target") or e["detail"].get("host"))
        if a is not None and b is not None and a != b:
            counts[(replay.frame(e["t"]), a, b, mesh.proto_index(e.get("proto")))] += 1
    return [[*k, n] for k, n in sorted(counts.items())]


def test_the_packed_counts_unpack_to_their_frames_nodes_and_protocols() -> None:
    # every node to every other (the last node, the first), a protocol no link speaks
    # (index -1) and the last one, over the run's frames: the packed keys unpack to them
    agents = [(f"a{i}", "agent", ["P", "Q"]) for i in range(4)]
    mesh = Mesh(agents, [("a0", "a1", ["P"]), ("a2", "a3", ["Q"])])
    events: Events = []
    flows = [("a3", "a0", "Q"), ("a0", "a3", "Z"), ("a1", "a2", "P"), ("a3", "a3", "P")] * 5
    # both ways along both links, one hop in a protocol no link speaks, one on no link
    hops = [("a1", "a0", "P"), ("a2", "a3", "Q"), ("a0", "a1", "Z"), ("a0", "a2", "P")] * 5
    for k, ((a, b, proto), (x, y, hop_proto)) in enumerate(zip(flows, hops, strict=True)):
        t = 7.0 * k
        detail = {"target": b} if k % 2 else {"host": b}
        events.append({"t": t, "seq": 2 * k, "label": "call", "agent": a, "wf": "w",
                       "inst": k, "proto": proto, "detail": detail})  # fmt: skip
        hop = {"from": x, "to": y, "proto": hop_proto, "msg": k}
        events.append({"t": t, "seq": 2 * k + 1, "label": "hop", "agent": a, "wf": "w",
                       "inst": k, "proto": hop_proto, "detail": hop})  # fmt: skip
    replay = Replay(mesh, 140.0, set())
    run_pass(
        *read_blocks([json.dumps(e).encode() for e in events]), [ReplayAlone(replay)], Context()
    )
    replay.finish()
    out = replay.to_json()
    assert out["flows"] == _flows_counted(replay, events) and len(out["flows"]) == 15
    counted = Counter[tuple[int, int, int]]()
    for e in events:
        link = mesh.link_of(e["detail"].get("from"), e["detail"].get("to"))
        if e["label"] == "hop" and link is not None:
            counted[(replay.frame(e["t"]), link, mesh.proto_index(e["proto"]))] += 1
    assert out["hops"] == [[*k, n] for k, n in sorted(counted.items())] and len(out["hops"]) == 15
    # each instance: its two events, one of them a hop
    assert {k: (event_count(r), r[1]) for k, r in replay.instances.items()} == {
        ("w", k): (2, 1) for k in range(20)
    }


@pytest.mark.parametrize(
    "odd",
    [float("inf"), float("-inf"), float("nan"), None, 1e-05, 1e16, "é", "\u2028", "\\u0041"],
)
def test_a_fragment_is_encoded_as_the_standard_library_encodes_it(odd: Any) -> None:
    data = {"b": [1, 2.5, {"z": odd, "a": "x"}], "a": {"n": 0.1, "m": [odd]}, "c": "y"}
    assert encode_fragment(data) == encode_json(data).encode("ascii")
    plain = {"b": [1, 2.5, {"z": 3, "a": "x"}], "a": {"n": 0.125}}
    assert encode_fragment(plain) == encode_json(plain).encode("ascii")
