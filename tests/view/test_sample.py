"""The explorer's bounded sample of one run (sim.view.fragment.PagePass): at most ``cap``
events of sampled instances, each sampled instance whole, the same sample whoever reads
the trace, and every counterexample's instance in the events file whatever the cap."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import Context, check_trace, run_pass
from sim.conformance.events import read_blocks
from sim.scenario.model import Scenario
from sim.view.compact import compact
from sim.view.fragment import PagePass, read_segments
from sim.view.mesh import mesh_from_scenario
from sim.view.violations import groups

Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def scenario(train_scenario: Scenario) -> Scenario:
    """conftest's ``train_scenario``, the scenario of its ``train_trace``."""
    return train_scenario


def _lines(events: Events) -> list[bytes]:
    return [json.dumps(e).encode() + b"\n" for e in events]


def _fed(scenario: Scenario, events: Events, cap: int, seed: int = 0) -> PagePass:
    """A page fed ``events`` by the conformance pass (alone)."""
    page = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=cap, seed=seed)
    name, blocks = read_blocks(_lines(events))
    run_pass(name, blocks, [page], Context())
    return page


def _stored(page: PagePass, fragment: dict[str, Any]) -> dict[str, list[Any]]:
    """The events the fragment's segments name, by ``wf#inst``."""
    out = {}
    for wf, inst, _status, _n, _hops, _start, _end, segments in fragment["instances"]:
        if segments:
            assert isinstance(page.events, io.BytesIO)
            out[f"{wf}#{inst}"] = json.loads(read_segments(page.events, segments))
    return out


def _by_instance(events: Events) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for e in events:
        if e.get("wf") is not None and e.get("inst") is not None:
            out.setdefault(f"{e['wf']}#{e['inst']}", []).append(compact(e))
    return json.loads(json.dumps(out))  # type: ignore[no-any-return]


@settings(max_examples=5, deadline=None)
@given(cap=st.integers(min_value=0, max_value=2_500), seed=st.integers(0, 3))
def test_the_sample_holds_at_most_cap_events_of_whole_instances(
    scenario: Scenario, train_trace: Events, cap: int, seed: int
) -> None:
    events = train_trace[:2_000]  # the first 50 s or so: every label but the outage's
    page = _fed(scenario, events, cap, seed)
    fragment = page.fragment([])
    kept = _stored(page, fragment)
    every = _by_instance(events)
    assert sum(len(v) for v in kept.values()) <= cap
    assert all(kept[k] == every[k] for k in kept)  # whole, in trace order
    again = _fed(scenario, events, cap, seed)
    assert again.fragment([]) == fragment  # the same sample, the same offsets
    if cap >= sum(len(v) for v in every.values()):
        assert kept == every  # room for all: nothing left out
    else:
        assert len(kept) < len(every)


class _Forgets(dict[Any, int]):
    """A ``Sample.drawn`` that keeps nothing: every priority drawn again at ``join``."""

    def __setitem__(self, key: Any, value: int) -> None:
        pass


@pytest.mark.parametrize(("cap", "seed"), [(40, 0), (400, 1), (1_500, 2)])
def test_a_priority_drawn_at_admission_is_the_one_the_sample_keeps(
    scenario: Scenario, train_trace: Events, cap: int, seed: int
) -> None:
    # the priority admit drew is kept for join: the sample of priorities drawn again
    events = train_trace[:2_000]
    page = _fed(scenario, events, cap, seed)
    again = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=cap, seed=seed)
    again.sample.drawn = _Forgets()
    run_pass(*read_blocks(_lines(events)), [again], Context())
    assert page.sample.full and not page.sample.drawn  # drawn, then joined
    assert again.fragment([]) == page.fragment([])
    assert again.events.getvalue() == page.events.getvalue()


def test_the_events_file_is_bounded_by_the_cap_not_the_trace(
    scenario: Scenario, train_trace: Events
) -> None:
    small, large = _fed(scenario, train_trace, 300), _fed(scenario, train_trace, 10**9)
    small.fragment([]), large.fragment([])
    assert isinstance(small.events, io.BytesIO) and isinstance(large.events, io.BytesIO)
    assert 0 < len(small.events.getvalue()) < len(large.events.getvalue()) / 5


def test_every_counterexample_instance_is_written_whatever_the_cap(
    scenario: Scenario, train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    events = train_mutations["drop_approve"]
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b"".join(_lines(events)))
    every = _by_instance(events)
    for reread in (False, True):
        page = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=0)
        report = check_trace(trace, scenario, consumers=[page])
        violated = groups(report.verdicts, [])
        named = {k for g in violated for ex in g["examples"] for k in ex["instances"]}
        assert named, "the mutation is a violation of an instance"
        kept = _stored(page, page.fragment(violated, trace=trace if reread else None))
        if reread:
            assert set(kept) == named and all(kept[k] == every[k] for k in named)
        else:  # without the trace read again, a cap of 0 keeps none of them
            assert kept == {}


def _index_of(events: Events, mesh: Any, duration: float) -> dict[str, Any]:
    """The instance index and per-link hop counts of ``events``, counted plainly (dicts)."""
    from sim.view.replay import FRAMES

    rows: dict[tuple[str, int], list[Any]] = {}
    hops: dict[tuple[int, int, int], int] = {}
    for e in events:
        if e.get("wf") is None or e.get("inst") is None:
            continue  # an outage: of no instance
        key = (e["wf"], e["inst"])
        row = rows.setdefault(key, [key[0], key[1], "open", 0, 0, float(e["t"]), None])
        row[3] += 1
        if e["label"] == "wf_end":
            row[2], row[6] = e["detail"].get("status", "ended"), float(e["t"])
        if e["label"] != "hop":
            continue
        row[4] += 1
        d = e["detail"]
        link = mesh.link_of(d["from"], d["to"])
        if link is not None:
            f = min(FRAMES - 1, int(float(e["t"]) / duration * FRAMES))
            k = (f, link, mesh.proto_index(d.get("proto") or e["proto"]))
            hops[k] = hops.get(k, 0) + 1
    return {
        "instances": [r for _, r in sorted(rows.items())],
        "hops": [[*k, n] for k, n in sorted(hops.items())],
    }


@settings(max_examples=8, deadline=None)
@given(start=st.integers(0, 6_000), length=st.integers(0, 1_500), cap=st.sampled_from([0, 500]))
def test_the_index_and_hops_are_those_counted_plainly(
    scenario: Scenario, train_trace: Events, start: int, length: int, cap: int
) -> None:
    # any stretch of a real trace (instances cut at either end): every instance's events,
    # hops, status, start and end, and the hops per frame, link and protocol
    events = train_trace[start : start + length]
    page = _fed(scenario, events, cap)
    fragment = page.fragment([])
    got = {
        "instances": [row[:7] for row in fragment["instances"]],
        "hops": fragment["replay"]["hops"],
    }
    assert got == _index_of(events, page.replay.mesh, 300.0)
    assert fragment["replay"]["level"] == ("full" if events else "off")


def test_a_counterexample_read_again_is_read_only_up_to_its_instance_s_end(
    scenario: Scenario, train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    # the instances a counterexample names all ended before the trace's last lines: the
    # read again stops there (the lines after it, here made unreadable, are never read)
    events = train_mutations["drop_approve"]
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b"".join(_lines(events)))
    page = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=0)
    violated = groups(check_trace(trace, scenario, consumers=[page]).verdicts, [])
    named = {k for g in violated for ex in g["examples"] for k in ex["instances"]}
    ends = [e["seq"] for e in events if e["label"] == "wf_end" and _key(e) in named]
    assert named and len(ends) == len(named) and max(ends) < events[-100]["seq"]
    with trace.open("ab") as f:
        f.write(b"not a trace line\n" * 100)
    kept = _stored(page, page.fragment(violated, trace=trace))
    every = _by_instance(events)
    assert set(kept) == named and all(kept[k] == every[k] for k in named)


def _key(e: dict[str, Any]) -> str:
    return f"{e['wf']}#{e['inst']}"


def test_a_counterexample_instance_that_failed_is_written_without_the_trace(
    scenario: Scenario, train_trace: Events
) -> None:
    # the instances that did not succeed are kept aside (bounded): one a counterexample
    # names is written whole though the sample (cap 0) left it out, no trace given
    page = _fed(scenario, train_trace, 0)
    ends = {_key(e): e["detail"]["status"] for e in train_trace if e["label"] == "wf_end"}
    failed = sorted(k for k, status in ends.items() if status != "succeeded")[:3]
    assert failed
    example = {"message": "m", "seqs": [], "context": [], "instances": failed}
    group = {"kind": "check", "name": "x", "violations": 3, "examples": [example]}
    kept = _stored(page, page.fragment([group]))
    every = _by_instance(train_trace)
    assert set(kept) == set(failed) and all(kept[k] == every[k] for k in failed)
